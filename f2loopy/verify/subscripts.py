"""The array accesses of the original kernels, per axis, as the input
planner of :mod:`f2loopy.verify.inputs` bounds them: a subscript computed
into a scalar temporary first (``idx = off + j; buf(idx)``, ``c = col(j);
x(c)``) is seen through the temporary, so that the drawn sizes and index
values fit what the original really accesses."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pymbolic.primitives as p

from f2loopy.ir.expressions import accesses, substitute
from f2loopy.ir.kernel import Assignment, Instruction, Kernel


def _is_int_dtype(dt) -> bool:
    return np.dtype(dt).kind in "iu"


@dataclass
class _Access:
    kernel: Kernel
    insn: Instruction
    array: str
    axis: int
    index: object
    lb: object          # pymbolic lower bound
    extent: object      # pymbolic extent or None (assumed size)
    array_text: str
    #: the subscript was seen through a scalar temporary (:func:`_forward`)
    forwarded: bool = False
    #: the instruction's conditions, seen through the same temporaries
    #: (``if (idx <= n) buf(idx) = ...``)
    predicates: tuple = ()


def _scalar_definitions(kernel: Kernel) -> dict:
    """Scalar temporaries that hold a subscript computed first (``idx = off + j``,
    ``c = col(j)``): name -> the one assignment that sets them, where the
    value depends only on inames of that assignment and on what the kernel
    never writes (arguments it only reads, other such temporaries)."""
    written = kernel.written_variables()
    sets: dict = {}
    for pos, insn in enumerate(kernel.instructions):
        for name in insn.assignee_names():
            sets.setdefault(name, []).append((pos, insn))
    out: dict = {}
    for name, defs in sets.items():
        t = kernel.temporaries.get(name)
        if t is None or tuple(getattr(t, "shape", ()) or ()) or len(defs) != 1 \
                or not _is_int_dtype(t.dtype):
            continue
        pos, insn = defs[0]
        if not isinstance(insn, Assignment) or not isinstance(insn.assignee, p.Variable):
            continue
        out[name] = (pos, insn)
    # only values of loop counters, read-only data and other such temporaries
    changed = True
    while changed:
        changed = False
        for name, (pos, insn) in list(out.items()):
            for used, _ in accesses(insn.expression):
                ok = used in insn.within_inames or (
                    used in out and used != name and out[used][0] < pos
                    and out[used][1].within_inames <= insn.within_inames) or (
                    used not in written and used not in kernel.temporaries)
                if not ok:
                    del out[name]
                    changed = True
                    break
    return out


def _forward(expr, insn, pos: int, defs: dict, depth: int = 0):
    """*expr* (read by *insn*, the *pos*-th instruction) with the scalar
    temporaries of *defs* that it reads replaced by their values, where the
    one assignment of each runs before it in the same iteration and under
    no condition that *insn* lacks."""
    if depth > 8:
        return expr

    def value(name):
        d = defs.get(name)
        if d is None:
            return None
        dpos, dinsn = d
        if dpos >= pos or not dinsn.within_inames <= insn.within_inames or \
                not set(dinsn.predicates) <= set(insn.predicates):
            return None
        return _forward(dinsn.expression, dinsn, dpos, defs, depth + 1)
    names = {n for n, _ in accesses(expr)}
    if not names & set(defs):
        return expr
    return substitute(expr, value)


def _array_accesses(kernel: Kernel):
    """Every subscripted access to an array variable of *kernel*, per axis
    (a subscript computed into a scalar first seen through it:
    :func:`_forward`)."""
    out = []
    defs = _scalar_definitions(kernel)
    for pos, insn in enumerate(kernel.instructions):
        preds = tuple(_forward(c, insn, pos, defs) for c in insn.predicates) if defs else \
            tuple(insn.predicates)
        if not isinstance(insn, Assignment):
            exprs = insn.read_expressions()
        else:
            exprs = (insn.assignee, *insn.read_expressions())
        for e in exprs:
            for name, idx in accesses(e):
                if idx is None or not kernel.has_variable(name):
                    continue
                var = kernel.variable(name)
                shape = tuple(getattr(var, "shape", ()) or ())
                if len(shape) != len(idx):
                    continue
                text = f"{name}({', '.join(str(i) for i in idx)})"
                for axis, (ix, ext) in enumerate(zip(idx, shape, strict=True)):
                    seen = _forward(ix, insn, pos, defs) if defs else ix
                    out.append(_Access(kernel, insn, name, axis, seen, var.lower_bounds[axis],
                                       ext, text, forwarded=seen is not ix,
                                       predicates=preds))
    return out


def _where(acc: _Access) -> str:
    return f"'{acc.array_text}'" + (f" ({acc.insn.span})" if acc.insn.span else "")
