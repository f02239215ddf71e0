"""Random transformation scripts for the differential fuzzer's programs
(:mod:`f2loopy.fuzz.progen`): lines a script could hold for the loops,
arrays and temporaries of a program's untransformed kernel, meant to keep
its results (the race check and the transformations' own checks refuse
some, and the fuzzer then drops those)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from f2loopy.fuzz.progen import loops_of
from f2loopy.fuzz.program import Program


@dataclass(frozen=True)
class _Candidates:
    """What a random script can name in an untransformed kernel."""
    inames: dict            # lower-case name -> the kernel's spelling
    written: frozenset
    arrays2d: list          # array arguments of two or more axes
    in_arrays: list         # non-logical arrays the kernel only reads
    out_arrays: list        # non-logical arrays it writes
    scalar_temps: list      # scalar temporaries it writes
    int_scalars: list       # integer scalar arguments it writes

    def name(self, var: str) -> str:
        return self.inames[var.lower()]


def choose_transformations(program: Program, kernel, rng) -> list:
    """Random transformation script lines for *program*, whose untransformed
    kernel is *kernel* (to know the inames, arrays and temporaries).  They
    are meant to keep the results; the race check and the transformations'
    own checks refuse some, and the fuzzer then drops those."""
    from f2loopy.ir.kernel import ArrayArg
    inames = {n.lower(): n for n in kernel.all_inames()}
    loops = [(d, depth, outer) for d, depth, outer in loops_of(program)
             if d.var.lower() in inames and d.step == 1]
    out: list = []
    if not loops:
        return out
    written = kernel.written_variables()
    c = _Candidates(
        inames=inames, written=frozenset(written),
        arrays2d=[a.name for a in kernel.args if isinstance(a, ArrayArg) and a.ndim >= 2],
        in_arrays=[a.name for a in kernel.args if isinstance(a, ArrayArg) and
                   a.name not in written and np.dtype(a.dtype).kind != "b"],
        out_arrays=[a.name for a in kernel.args if isinstance(a, ArrayArg)
                    and a.name in written and np.dtype(a.dtype).kind != "b"],
        scalar_temps=[t for t, v in kernel.temporaries.items() if not v.shape
                      and t in written and not t.startswith(("cond", "selector"))],
        int_scalars=[a.name for a in kernel.args if not isinstance(a, ArrayArg) and
                     a.name in written and np.dtype(a.dtype).kind == "i"])
    n = int(rng.integers(1, 4))
    used = set()
    for _ in range(n):
        d, depth, outer = loops[int(rng.integers(len(loops)))]
        v = c.name(d.var)
        if v in used:
            continue
        line = _loop_transformation(c, rng, d, depth, outer)
        if line:
            out.append(line)
        used.add(v)
    out.extend(_kernel_transformations(c, rng, program, kernel))
    # merging two sibling loops of the same bounds (loop fusion: refused
    # where it would reorder a dependence, and the fuzzer then drops it);
    # drawn from a child generator, so the caller's later draws stay as
    # they were for every seed
    pairs = _sibling_loops(program, loops)
    sub = rng.spawn(1)[0]
    if pairs and sub.random() < 0.3:
        a, b = pairs[int(sub.integers(len(pairs)))]
        out.insert(0, f'k = rename_iname(k, "{c.name(b.var)}", "{c.name(a.var)}", '
                   'existing_ok=True)')
    return out


def _const(d) -> bool:
    return d.hi.strip().isdigit() and d.lo.strip().isdigit()


def _loop_transformation(c: _Candidates, rng, d, depth: int, outer) -> str | None:
    """A random script line transforming the loop *d* (at nesting *depth*,
    inside the loops *outer*), or None where the drawn kind does not fit."""
    v = c.name(d.var)
    r = int(rng.integers(0, 19))
    length = int(rng.choice([2, 3, 4, 8]))
    o = outer[-1] if outer else None
    outer_ok = o is not None and o.var.lower() in c.inames and o.step == 1
    if r <= 2:
        return f'k = split_iname(k, "{v}", {length})'
    if r == 3:
        return f'k = split_iname(k, "{v}", {length}, inner_tag="unr")'
    if r <= 5 and depth == 0:
        return f'k = split_iname(k, "{v}", {length}, outer_tag="g.0", inner_tag="l.0")'
    if r == 6 and depth == 0:
        return f'k = tag_inames(k, "{v}:g.0")'
    if r == 7 and o is not None:
        return f'k = set_loop_priority(k, "{v},{c.name(o.var)}")' if outer_ok else None
    if r == 8 and _const(d):
        return f'k = tag_inames(k, "{v}:unr")'
    if r == 9:
        return f'k = rename_iname(k, "{v}", "{v}_r")'
    if r == 10 and c.written:
        # distributing the loop may reverse a dependence: then the
        # transformation is refused (tests/regressions/
        # duplicate_inames_distribution.f90) and the fuzzer drops it
        var = sorted(c.written)[int(rng.integers(len(c.written)))]
        return f'k = duplicate_inames(k, "{v}", within="writes:{var}")'
    if r == 11 and o is not None:
        return f'k = join_inames(k, "{c.name(o.var)},{v}")' if outer_ok else None
    if r == 12 and c.scalar_temps:
        t = c.scalar_temps[int(rng.integers(len(c.scalar_temps)))]
        return f'k = privatize_temporaries_with_inames(k, "{v}", only_var_names="{t}")'
    if r == 13:
        return (f'k = tag_inames(k, "{v}:ilp")' if _const(d) else
                f'k = split_iname(k, "{v}", {length}, inner_tag="ilp")')
    if r == 14 and c.in_arrays:
        arr = c.in_arrays[int(rng.integers(len(c.in_arrays)))]
        return f'k = add_prefetch(k, "{arr}", ["{v}"], default_tag=None)'
    return (f'k = split_iname(k, "{v}", {length}, outer_tag="unr")'
            if _const(d) else f'k = split_iname(k, "{v}", {length})')


def _kernel_transformations(c: _Candidates, rng, program: Program, kernel) -> list:
    """Random script lines on the kernel's arrays, temporaries and sizes."""
    out = []
    if c.arrays2d and rng.random() < 0.2:
        arr = c.arrays2d[int(rng.integers(len(c.arrays2d)))]
        out.append(f'k = tag_array_axes(k, "{arr}", "{rng.choice(["c", "f"])}")')
    if c.out_arrays and rng.random() < 0.1:
        arr = c.out_arrays[int(rng.integers(len(c.out_arrays)))]
        out.append(f'k = buffer_array(k, "{arr}", (), default_tag=None)')
    if c.scalar_temps and rng.random() < 0.1:
        t = c.scalar_temps[int(rng.integers(len(c.scalar_temps)))]
        out.append(f'k = assignment_to_subst(k, "{t}")')
    if c.int_scalars and rng.random() < 0.1:
        out.append(f'k = accumulation_to_reduction(k, "writes:{c.int_scalars[0]}")')
    sizes = [a.name for a in program.args if a.role == "size"]
    sizes = [a.name for a in kernel.args if a.name.lower() in {x.lower() for x in sizes}]
    if sizes and rng.random() < 0.2:
        out.append(f'k = assume(k, "{sizes[0]} >= 1")')
    if sizes and rng.random() < 0.15:
        out.append(f"k = fix_parameters(k, {sizes[-1]}={int(rng.integers(1, 10))})")
    return out


def _sibling_loops(program: Program, loops) -> list:
    """``(first, second)`` loops of *loops* in the same enclosing loops with
    the same bounds, each the only loop of its variable in *program* (so its
    iname is the variable's name).  The merge comes first in the script: a
    later line that names the second loop is then refused and dropped."""
    count: dict = {}
    for d, _, _ in loops_of(program):
        count[d.var.lower()] = count.get(d.var.lower(), 0) + 1
    ok = [(d, [id(o) for o in outer]) for d, _, outer in loops
          if count[d.var.lower()] == 1]
    return [(a, b) for k, (a, oa) in enumerate(ok) for b, ob in ok[k + 1:]
            if oa == ob and (a.lo, a.hi, a.step) == (b.lo, b.hi, b.step)]
