"""Single-column mapping (SCC) of column-physics routines.

A physics routine of a weather or climate model works on a block of columns:
its horizontal loops (``DO JL = KIDIA, KFDIA``, and the array syntax
``A(KIDIA:KFDIA, JK)``) run over the same run-time range, nested in or around
vertical and species loops.  The single-column mapping gives each column to
a work-item: all horizontal loops become one index, split into work-groups
of *block* columns (``g.0`` outer, ``l.0`` inner), and every other loop runs
sequentially inside each work-item, as in a single-column version of the
routine.  This is what Loki's SCC transformations and the CLOUDSC dwarf's
CUDA ports do to the source; here it is a mapping of the same kernel.

:func:`horizontal_loops` finds the horizontal loops: by their index name
(*index*, e.g. ``"JL"`` also matches ``JL_1``, ``JL_2``... which the frontend
names further loops of that index), by the names of their bounds (*bounds*,
e.g. ``("KIDIA", "KFDIA")``), or, with neither, the loops whose lower and
upper bounds are both scalar arguments, in the largest group of loops with
the same bounds.  :func:`scc` checks that each of them carries no dependence
(:func:`~f2loopy.transform.auto.loop_dependences`: per-column scalars are
private) and maps them; column temporaries become private
(:func:`demote_temporaries`), and those of them that one level loop alone
uses at its own level and the one above are kept as two values
(:func:`~f2loopy.transform.kcache.cache_levels`).  Before that, the level
loops inside the columns are fused into one where the dependences allow
(:func:`~f2loopy.transform.level_fusion.fuse_level_loops`), so that a level's
values are made and used in the same iteration.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pymbolic.primitives as p

from f2loopy.diagnostics import TransformError
from f2loopy.ir.domains import iname_to_domain_index
from f2loopy.ir.expressions import Rewriter, index_tuple, rename, variables_read
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.isl_tools import dim_type
from f2loopy.ir.kernel import AddressSpace, Assignment, Kernel, ScalarArg
from f2loopy.ir.tags import fortran_axis_tags
from f2loopy.transform.iname import merge_checked_loop, split_iname
from f2loopy.transform.level_fusion import LevelFusion, level_fusion
from f2loopy.transform.loop_fusion import check_loop_fusion
from f2loopy.transform.util import for_each_kernel, map_expressions, unique_name

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _bounds(kernel: Kernel, x: str) -> tuple[str, str] | None:
    """``(lower, upper)`` parameter names if loop *x* runs from one scalar
    argument to another with step 1, else None."""
    dom = kernel.domains[iname_to_domain_index(kernel)[x]]
    if dom.dim(dim_type.set) != 1 or dom.n_basic_set() != 1:
        return None
    params = dom.get_var_names(dim_type.param)
    args = {a.name for a in kernel.args if isinstance(a, ScalarArg)}
    written = kernel.written_variables()
    if len(params) != 2 or not all(n in args and n not in written for n in params):
        return None
    for lo, hi in (params, params[::-1]):
        expected = isl_range(dom, x, lo, hi)
        if expected is not None and expected.is_equal(dom):
            return lo, hi
    return None


def isl_range(dom, x: str, lo: str, hi: str):
    """``{ [x] : lo <= x <= hi }`` in *dom*'s space."""
    import islpy as isl
    space = dom.get_space()
    try:
        return isl.Set.read_from_str(
            dom.get_ctx(), f"[{', '.join(space.get_var_names(dim_type.param))}] -> "
                           f"{{ [{x}] : {lo} <= {x} <= {hi} }}").align_params(space)
    except isl.Error:
        return None


def horizontal_loops(kernel: Kernel, *, index: str | None = None,
                     bounds: tuple[str, str] | None = None) -> tuple[str, ...]:
    """The horizontal loops of *kernel* in kernel order (see the module
    docstring); empty if there are none."""
    if index is not None and (not isinstance(index, str) or not _NAME.fullmatch(index)):
        raise TransformError(f"scc: the horizontal index is a Fortran name, not {index!r}")
    if bounds is not None and (not isinstance(bounds, (tuple, list)) or len(bounds) != 2
                               or not all(isinstance(b, str) and _NAME.fullmatch(b)
                                          for b in bounds)):
        raise TransformError(f"scc: the horizontal bounds are two Fortran names "
                             f"(start, end), not {bounds!r}")
    hardware = kernel.hardware_inames()
    groups: dict = {}
    for x in kernel.all_inames():
        if x in hardware:
            continue
        if index is not None:
            base = re.fullmatch(r"(.*?)(_\d+)?", x)
            if base is None or base.group(1).lower() != index.lower():
                continue
        b = _bounds(kernel, x)
        if b is None:
            continue
        if bounds is not None and tuple(n.lower() for n in b) != \
                tuple(n.lower() for n in bounds):
            continue
        groups.setdefault(b, []).append(x)
    if not groups:
        return ()
    best = max(groups.values(), key=len)
    if index is None and bounds is None and \
            sum(len(g) == len(best) for g in groups.values()) > 1:
        return ()      # ambiguous: two ranges with as many loops
    return tuple(best)


# {{{ loops over the whole horizontal extent

def _whole_extent(kernel: Kernel, x: str) -> str | None:
    """The scalar argument ``S`` if loop *x* runs over ``1..S``, else None."""
    dom = kernel.domains[iname_to_domain_index(kernel)[x]]
    params = dom.get_var_names(dim_type.param)
    if dom.dim(dim_type.set) != 1 or len(params) != 1 \
            or not isinstance(kernel.arg_dict.get(params[0]), ScalarArg) \
            or params[0] in kernel.written_variables():
        return None
    expected = isl_range(dom, x, "1", params[0])
    return params[0] if expected is not None and expected.is_equal(dom) else None


def _fills(kernel: Kernel, x: str) -> list | None:
    """The statements in loop *x* if each writes an array element whose
    first subscript is *x* alone (``ZA(:, :) = 0``, ``PFLUX(:) = 0``) and
    reads nothing the loop writes, else None."""
    insns = [i for i in kernel.instructions if x in i.within_inames]
    written = {i.assignee_name for i in insns if isinstance(i, Assignment)}
    for insn in insns:
        if not isinstance(insn, Assignment) or not hasattr(insn.assignee, "aggregate"):
            return None
        idx = index_tuple(insn.assignee)
        if idx[0] != p.Variable(x) or any(x in variables_read(e) for e in idx[1:]) \
                or variables_read(*insn.read_expressions()) & written:
            return None
    return insns or None


def narrow_whole_extent_loops(kernel: Kernel, lo: str, hi: str, horizontal) -> tuple:
    """Loops over the whole horizontal extent (``1..KLON``) that fill arrays
    (:func:`_fills`) made to run over the horizontal range *lo*..*hi*
    (``KIDIA..KFDIA``), so that they map to the columns' work-items.

    A temporary whose other accesses all use a loop of *horizontal* (over
    *lo*..*hi*) in their first subscript never has its other elements read:
    the loop is narrowed.  For an argument the elements outside the range
    are written by a copy of the loop over ``1..lo-1`` and one over
    ``max(hi+1, lo)..S`` (no other statement touches them).

    :returns: ``(kernel, narrowed loops, remainder loops)``."""
    import islpy as isl
    horizontal = set(horizontal)
    narrowed: list[str] = []
    rest: list[str] = []
    domains = list(kernel.domains)
    insns = list(kernel.instructions)
    where = iname_to_domain_index(kernel)
    extra: list = []
    for x in kernel.all_inames():
        if x in horizontal or kernel.iname_tag(x).hardware:
            continue
        size = _whole_extent(kernel, x)
        fills = _fills(kernel, x) if size is not None else None
        if fills is None:
            continue
        names = {i.assignee_name for i in fills}
        ids = {i.id for i in fills}
        temporaries_only = True
        for name in names:
            if name not in kernel.temporaries:
                temporaries_only = False
                continue
            for insn in kernel.instructions:
                if insn.id in ids or name not in insn.dependency_names():
                    continue
                for acc_name, idx in _accesses_of(insn):
                    if acc_name == name and (idx is None or not isinstance(idx[0], p.Variable)
                                             or idx[0].name not in horizontal
                                             or idx[0].name not in insn.within_inames):
                        temporaries_only = False
        dom = domains[where[x]]
        ctx = dom.get_ctx()
        params = f"[{size}, {lo}, {hi}]"
        domains[where[x]] = isl.Set.read_from_str(
            ctx, f"{params} -> {{ [{x}] : {lo} <= {x} <= {hi} }}")
        narrowed.append(x)
        if temporaries_only:
            continue
        for part, cond in (("lo", f"1 <= {{v}} < {lo}"), ("hi", f"{hi} < {{v}} <= {size} and {{v}} >= {lo}")):
            v = unique_name(kernel, f"{x}_{part}", extra_taken=rest + [e.id for e in extra])
            rest.append(v)
            domains.append(isl.Set.read_from_str(
                ctx, f"{params} -> {{ [{v}] : {cond.format(v=v)} }}"))
            for insn in fills:
                new_id = unique_name(kernel, f"{insn.id}_{part}",
                                     extra_taken=rest + [e.id for e in extra])
                extra.append(map_expressions(insn, lambda e, x=x, v=v: rename(e, {x: v}))
                             .copy(id=new_id, within_inames=(insn.within_inames - {x}) | {v},
                                   depends_on=frozenset()))
    if not narrowed:
        return kernel, (), ()
    out = kernel.copy(domains=tuple(domains), instructions=tuple(insns + extra))
    return out, tuple(narrowed), tuple(rest)


def _accesses_of(insn):
    from f2loopy.ir.expressions import accesses
    out = []
    if isinstance(insn, Assignment):
        a = insn.assignee
        out.append((insn.assignee_name, index_tuple(a) if hasattr(a, "aggregate") else None))
    for e in insn.read_expressions():
        out.extend(accesses(e))
    return out

# }}}


@for_each_kernel
def scc(kernel: Kernel, *, index: str | None = None, bounds: tuple[str, str] | None = None,
        block: int = 128, demote: bool = True, specialize: bool = False,
        kcache: bool = True, version: bool | str = False, dead: bool = True,
        fuse: bool = True) -> Kernel:
    """Map the horizontal loops of *kernel* to the grid, one column per
    work-item (see the module docstring).

    :arg index: the horizontal loop index (``"JL"``), or None.
    :arg bounds: the names of the horizontal start and end (``("KIDIA",
        "KFDIA")``), or None.
    :arg block: columns per work-group (1 to 1024).
    :arg demote: turn the temporaries that each column uses only in its own
        part, with otherwise constant extents (``ZTMP(KLON, 5)``), into
        private variables of each work-item (:func:`demote_temporaries`).
    :arg specialize: with *demote*, also compile the kernel per value of the
        integer arguments that the other extents of column temporaries are
        made of (``ZTMP(KLON, KLEV)``: :func:`specializable_extents`,
        :func:`~f2loopy.transform.parameters.specialize_parameters`), so
        that those temporaries become private arrays too; the glue builds one
        program per value.
    :arg kcache: keep the private level temporaries that only one vertical
        loop uses, each iteration at its own level and the one above, as
        their current and previous level
        (:func:`~f2loopy.transform.kcache.cache_levels`; k-caching).
    :arg version: with *demote*, version code that indexes small private
        arrays with a run-time value (a species chosen by a sort) so that the
        arrays can stay in registers: ``"blocks"`` versions the body of the
        loop around such statements as one block per value of the key under
        one test each (:func:`~f2loopy.transform.block_versioning.
        version_blocks`), then each remaining statement
        (:func:`~f2loopy.transform.versioning.version_indices`);
        ``"statements"`` (or True) versions each statement alone, one copy
        per value (:func:`~f2loopy.transform.versioning.version_indices`);
        False versions nothing.  Off by default in this function; the
        ``scc`` and ``auto`` recipes pass ``"blocks"`` (CLOUDSC 4-5% faster
        on an H200, samples/cloudsc_RESULTS.md).
    :arg dead: first remove the statements that write temporaries whose
        values nothing reads (:func:`~f2loopy.transform.dead_code.
        remove_dead_stores`; a dead loop then runs on no work-item).
    :arg fuse: merge the level loops inside the columns into one where the
        dependences allow (:func:`~f2loopy.transform.level_fusion.
        fuse_level_loops`: same ranges, species loops interchanged, a
        run-time top level under a guard, a range one level longer peeled);
        a loop that cannot merge stays as it was.
    :returns: the kernel with one horizontal loop, named as the first, split
        into ``<name>_outer`` (``g.0``) and ``<name>_inner`` (``l.0``).
    :raises TransformError: no horizontal loop is found, or one carries a
        dependence (the message names the loop and why).
    """
    return _scc(kernel, index=index, bounds=bounds, block=block, demote=demote,
                specialize=specialize, kcache=kcache, version=version, dead=dead, fuse=fuse,
                fused=None)


def scc_with_fusion(kernel: Kernel, **options) -> tuple[Kernel, LevelFusion]:
    """:func:`scc` of one kernel with *options*, and what its level fusion
    merged and refused (:class:`~f2loopy.transform.level_fusion.LevelFusion`;
    empty with ``fuse=False``)."""
    fused: list = []
    out = _scc(kernel, **{**_SCC_DEFAULTS, **options}, fused=fused)
    return out, fused[0] if fused else LevelFusion((), ())


_SCC_DEFAULTS = {"index": None, "bounds": None, "block": 128, "demote": True,
                 "specialize": False, "kcache": True, "version": False, "dead": True,
                 "fuse": True}


def _scc(kernel: Kernel, *, index, bounds, block, demote, specialize, kcache, version, dead,
         fuse, fused: list | None) -> Kernel:
    from f2loopy.analysis.loops import loop_dependences
    if not isinstance(block, int) or isinstance(block, bool) or not 1 <= block <= 1024:
        raise TransformError(f"scc: block is an integer from 1 to 1024, not {block!r}")
    if not isinstance(dead, bool):
        raise TransformError(f"scc: dead is True or False, not {dead!r}")
    if dead:
        from f2loopy.transform.dead_code import remove_dead_stores
        kernel = remove_dead_stores(kernel)
    loops = horizontal_loops(kernel, index=index, bounds=bounds)
    rest: tuple = ()
    bounds_found = _bounds(kernel, loops[0]) if loops else None
    if bounds_found is not None:
        lo, hi = bounds_found
        kernel, narrowed, rest = narrow_whole_extent_loops(kernel, lo, hi, loops)
        if narrowed:
            loops = horizontal_loops(kernel, index=index, bounds=(lo, hi))
            loops = loops + tuple(x for x in narrowed if x not in loops)
    if not loops:
        raise TransformError(f"scc: kernel '{kernel.name}' has no horizontal loops (loops "
                             "from one scalar argument to another, e.g. DO JL = KIDIA, "
                             "KFDIA, with the index and bounds asked for)")
    verdicts = loop_dependences(kernel)
    for x in loops:
        if not verdicts[x].parallel:
            raise TransformError(f"scc: the horizontal loop '{x}' {verdicts[x].reason}")
    if not isinstance(demote, bool):
        raise TransformError(f"scc: demote is True or False, not {demote!r}")
    if not isinstance(specialize, bool):
        raise TransformError(f"scc: specialize is True or False, not {specialize!r}")
    if not isinstance(kcache, bool):
        raise TransformError(f"scc: kcache is True or False, not {kcache!r}")
    if not isinstance(version, bool) and version not in ("blocks", "statements"):
        raise TransformError(f"scc: version is True, False, 'blocks' or 'statements', "
                             f"not {version!r}")
    name = loops[0]
    for x in loops[1:]:
        # each loop is parallel; the merged one is if no two instances of
        # the two loops in different iterations touch the same element
        # (temporaries private to each column aside)
        check_loop_fusion(kernel, x, name, parallel=True, lanes=loops, caller="scc")
        kernel = merge_checked_loop(kernel, x, name)
    if not isinstance(fuse, bool):
        raise TransformError(f"scc: fuse is True or False, not {fuse!r}")
    if fuse:
        kernel, report = level_fusion(kernel, column=name)
        if fused is not None:
            fused.append(report)
    if demote and specialize:
        wanted = specializable_extents(kernel, name)
        if wanted:
            from f2loopy.transform.parameters import specialize_parameters
            kernel = specialize_parameters(kernel, names=wanted)
    if demote:
        kernel = demote_temporaries(kernel, name)
    # the column guard tested once per region, not per statement
    kernel = kernel.copy(options=kernel.options.copy(hoist_guards=True))
    for x in (name,) + rest:
        outer = unique_name(kernel, f"{x}_outer")
        inner = unique_name(kernel, f"{x}_inner", extra_taken=(outer,))
        kernel = split_iname(kernel, x, block, outer_iname=outer, inner_iname=inner,
                             outer_tag="g.0", inner_tag="l.0")
    if kcache:
        from f2loopy.transform.kcache import cache_levels
        kernel = cache_levels(kernel)
    if version and demote:
        from f2loopy.transform.versioning import version_indices
        if version == "blocks":
            from f2loopy.transform.block_versioning import version_blocks
            kernel = version_blocks(kernel)
        kernel = version_indices(kernel)
    return kernel


# {{{ demotion

class _Demoter(Rewriter):
    """Drops the first subscript of the arrays in *names* (which must be the
    horizontal index *index*)."""

    def __init__(self, names, index: str):
        self.names = names
        self.index = index
        self.bad: str | None = None

    def map_variable(self, expr, *args, **kwargs):
        if expr.name in self.names:
            self.bad = expr.name
        return expr

    def map_subscript(self, expr, *args, **kwargs):
        name = expr.aggregate.name
        idx = index_tuple(expr)
        if name not in self.names:
            new = tuple(self.rec(i) for i in idx)
            if all(a is b for a, b in zip(new, idx, strict=True)):
                return expr
            return p.Subscript(expr.aggregate, new if len(new) > 1 else new[0])
        if idx[0] != p.Variable(self.index):
            self.bad = name
            return expr
        rest = tuple(self.rec(i) for i in idx[1:])
        if not rest:
            return p.Variable(name)
        return p.Subscript(expr.aggregate, rest if len(rest) > 1 else rest[0])


def _compile_time(extent, constants) -> bool:
    """Whether *extent* is known when the program is compiled: a number, or
    an expression of the arguments *constants* the kernel is specialised for
    (:func:`~f2loopy.transform.parameters.specialize_parameters`)."""
    if isinstance(extent, (int, np.integer)):
        return True
    if extent is None or isinstance(extent, (float, bool, str)):
        return False
    try:
        names = variables_read(extent)
    except Exception:     # noqa: BLE001 - not an expression of variables
        return False
    return bool(names) and names <= constants


def specializable_extents(kernel: Kernel, index: str) -> tuple[str, ...]:
    """The integer scalar arguments (read-only, not fixed) that the other
    extents of column temporaries are made of (``ZTMP(KLON, KLEV)`` read as
    ``ZTMP(JL, JK)`` with *index* ``JL``): with them compile-time constants
    (:func:`~f2loopy.transform.parameters.specialize_parameters`) those
    temporaries become demotable.  Only plain dummy arguments count (not the
    hidden extent of an assumed-shape array); empty when an extent uses
    anything else."""
    from f2loopy.ir.roles import Dummy
    from f2loopy.ir.types import is_integer
    args = {a.name: a for a in kernel.args if isinstance(a, ScalarArg)}
    written = kernel.written_variables()
    wanted: set[str] = set()
    for name, t in sorted(kernel.temporaries.items()):
        if t.base_storage or t.initializer is not None or t.read_only or t.ndim < 2 \
                or all(isinstance(s, (int, np.integer)) for s in t.shape[1:]):
            continue
        used: set[str] = set()
        for s in t.shape[1:]:
            if isinstance(s, (int, np.integer)):
                continue
            if s is None or isinstance(s, (float, bool, str)):
                used = set()
                break
            used |= variables_read(s)
        # (plain dummy arguments: the glue has their values before it builds)
        if not used or not all(n in args and n not in written and args[n].fixed_value is None
                               and isinstance(args[n].role, Dummy)
                               and is_integer(np.dtype(args[n].dtype)) for n in used):
            continue
        if _column_only(kernel, name, index):
            wanted |= used
    return tuple(sorted(wanted))


def _column_only(kernel: Kernel, name: str, index: str) -> bool:
    d = _Demoter({name}, index)
    used = False
    for insn in kernel.instructions:
        if name not in insn.dependency_names():
            continue
        used = True
        if index not in insn.within_inames:
            return False
        map_expressions(insn, d)
        if d.bad:
            return False
    return used


def demotable_temporaries(kernel: Kernel, index: str) -> tuple[str, ...]:
    """Temporaries whose every access has the loop index *index* alone as
    its first subscript and whose other extents are constants (numbers, or
    expressions of the arguments the kernel is specialised for): each
    iteration of *index* (each column) uses only its own part, which a
    private variable (or a private array of the other axes) can hold."""
    out = []
    constants = set(kernel.options.specialized)
    for name, t in sorted(kernel.temporaries.items()):
        if t.base_storage or t.initializer is not None or t.read_only or t.ndim < 1 \
                or not all(_compile_time(s, constants) for s in t.shape[1:]):
            continue
        if _column_only(kernel, name, index):
            out.append(name)
    return tuple(out)


def demote_temporaries(kernel: Kernel, index: str, *,
                       names: Sequence[str] | None = None) -> Kernel:
    """Turn the temporaries *names* (default: all of
    :func:`demotable_temporaries`), indexed by loop *index* in their first
    subscript everywhere, into private variables without that axis:
    ``ZTMP(KLON, 5)`` read as ``ZTMP(JL, JM)`` becomes a private ``ZTMP(5)``
    read as ``ZTMP(JM)``.  Run before *index* is split.

    :raises TransformError: a temporary is not demotable (named)."""
    ok = set(demotable_temporaries(kernel, index))
    names = sorted(ok) if names is None else list(names)
    for n in names:
        if n not in ok:
            raise TransformError(f"demote: temporary '{n}' is not indexed by '{index}' "
                                 "alone in its first subscript everywhere, or its other "
                                 "extents are not constant")
    if not names:
        return kernel
    d = _Demoter(set(names), index)
    insns = tuple(map_expressions(insn, d) if set(names) & insn.dependency_names()
                  else insn for insn in kernel.instructions)
    temps = dict(kernel.temporaries)
    for n in names:
        t = temps[n]
        temps[n] = t.copy(shape=t.shape[1:], lower_bounds=t.lower_bounds[1:],
                          axis_tags=fortran_axis_tags(t.ndim - 1),
                          axis_names=t.axis_names[1:] if t.axis_names else None,
                          address_space=AddressSpace.PRIVATE)
    options = kernel.options.copy(per_work_item=tuple(sorted(
        set(kernel.options.per_work_item) | set(names))))
    return kernel.copy(instructions=insns, temporaries=FrozenMap(temps), options=options)

# }}}
