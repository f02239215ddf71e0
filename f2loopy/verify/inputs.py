"""Inputs for running a subroutine both ways: sizes, value ranges, random values.

:func:`plan_inputs` looks at the *original* kernels (the subroutines as the
frontend lowered them, before any transformation) and decides

* the value of every integer scalar argument used in shapes, loop bounds or
  subscripts (a "size"): given (``--size``, a fixed parameter) or chosen
  near a small random value so that the kernels' assumptions hold and every
  affine subscript stays inside its array (an isl parameter set);
* the range of values of integer arrays that feed subscripts (``x(col(j))``)
  or data-dependent loop bounds (``do j = rowptr(i), rowptr(i+1)-1``), so
  that the loops they drive stay in bounds too; arrays used as both lower
  and upper loop bounds get nondecreasing values (CSR row pointers);
* the extent of assumed-size (``*``) axes, from the largest subscript used.

What cannot be worked out is asked for: an :class:`InputError` names the
variable and the statement, and ``--range NAME=LO:HI`` (or ``--size``)
answers it.  :meth:`InputPlan.generate` then draws the random values.
"""

from __future__ import annotations

import islpy as isl
import numpy as np
import pymbolic.primitives as p

from f2loopy.diagnostics import F2LoopyError
from f2loopy.ir.domains import combined_domain, iname_to_domain_index
from f2loopy.ir.expressions import accesses, substitute
from f2loopy.ir.folding import NotConstant, evaluate_constant
from f2loopy.ir.isl_tools import (
    NonAffineError, align_params, dim_type, param_names, pwaff_from_expr, set_from_condition,
    set_names)
from f2loopy.ir.kernel import ArrayArg, Assignment, Kernel
from f2loopy.ir.roles import Allocation
from f2loopy.verify.input_plan import (
    DEFAULT_INT_RANGE, ArgSpec, InputPlan, ValueRange, nearest_first)
from f2loopy.verify.index_values import _bound_role, _indirect, value_range
from f2loopy.verify.reshaped import first_overrun
from f2loopy.verify.subscripts import _Access, _array_accesses, _where

#: sizes are chosen in [1, MAX_SIZE]
MAX_SIZE = 512
#: preferred sizes are drawn from this range (then moved to the nearest valid value)
PREFERRED_SIZES = (4, 9)
#: the largest lower bound (in magnitude) drawn for an allocatable component
MAX_LOWER = 8
#: extent of an assumed-size axis that no affine subscript bounds
DEFAULT_ASSUMED_EXTENT = 10


class InputError(F2LoopyError):
    """Inputs cannot be chosen without help from the user."""


# {{{ arguments

def merge_arguments(kernels) -> dict:
    """name -> :class:`ArgSpec` over *kernels* (called in sequence)."""
    args: dict = {}
    for k in kernels:
        written = k.written_variables()
        for a in k.args:
            spec = args.get(a.name)
            is_array = isinstance(a, ArrayArg)
            if spec is None:
                args[a.name] = ArgSpec(a.name, np.dtype(a.dtype), is_array,
                                       tuple(a.shape) if is_array else (),
                                       tuple(a.lower_bounds) if is_array else (),
                                       a.name in written, a.span, a.intent)
                continue
            if spec.is_array != is_array or spec.dtype != np.dtype(a.dtype) or \
                    (is_array and (tuple(a.shape) != spec.shape
                                   or tuple(a.lower_bounds) != spec.lower_bounds)):
                raise InputError(f"argument '{a.name}' is declared differently in the "
                                 f"subroutines called in sequence ({k.name})", a.span)
            spec.written = spec.written or a.name in written
    return args

# }}}


def _int_value(expr, values: dict) -> int:
    """The value of the integer expression *expr* given scalar *values*."""
    subst = {n: np.int64(v) for n, v in values.items()}
    try:
        return int(evaluate_constant(substitute(expr, subst)))
    except (NotConstant, TypeError, ValueError, ZeroDivisionError, OverflowError):
        raise InputError(f"cannot evaluate '{expr}' with {values}") from None


def _is_int_dtype(dt) -> bool:
    return np.dtype(dt).kind in "iu"


class _Planner:
    def __init__(self, originals, assumptions, given: dict, ranges: dict, seed: int):
        self.kernels = list(originals)
        self.args = merge_arguments(self.kernels)
        self.assumptions = [a for a in assumptions if a is not None]
        self.given = dict(given)
        self.array_extents: dict = {}     # assumed-size array -> elements (--size)
        self.user_ranges = dict(ranges)
        self.rng = np.random.default_rng([seed, 0x5eed])
        self.int_scalars = [n for n, s in self.args.items()
                            if not s.is_array and _is_int_dtype(s.dtype)]
        self.accesses = [a for k in self.kernels for a in _array_accesses(k)]
        self.copies = {k.name: self._scalar_copies(k) for k in self.kernels}
        self.dd_inames = {k.name: self._data_dependent_inames(k, self.copies[k.name])
                          for k in self.kernels}
        #: extents decided later (the lower side of their subscripts bounds the sizes), values
        #: put into every access's instances (see :mod:`f2loopy.verify.module_extents`)
        self.extents_later: set[str] = set()
        self.fixed_params: dict[str, int] = {}

    # {{{ helpers

    def _scalar_copies(self, k: Kernel) -> dict:
        """Integer scalar temporaries that *k* assigns once, outside loops and
        conditions, from an expression of integer arguments no kernel writes
        (``nx = curr%nx`` before ``do i = 1, nx``): name -> that expression.
        Loops bounded by them are sized like loops bounded by the arguments."""
        count: dict = {}
        for insn in k.instructions:
            if isinstance(insn, Assignment) and isinstance(insn.assignee, p.Variable):
                count[insn.assignee.name] = count.get(insn.assignee.name, 0) + 1
        fixed = {n for n in self.int_scalars if not self.args[n].written}
        inames = set(k.all_inames())
        candidates = {}
        for insn in k.instructions:
            if not (isinstance(insn, Assignment) and isinstance(insn.assignee, p.Variable)):
                continue
            name = insn.assignee.name
            t = k.temporaries.get(name)
            if t is None or t.shape or not _is_int_dtype(t.dtype) or count[name] != 1 or \
                    insn.predicates:
                continue
            if not {n for n, _ in accesses(insn.expression)} & inames:
                candidates[name] = insn.expression
        out: dict = {}
        changed = True
        while changed:          # (through chains: j_ubound = ny, ny = curr%ny)
            changed = False
            for name, expr in candidates.items():
                if name in out:
                    continue
                used = {n for n, _ in accesses(expr)}
                if used and used <= fixed | set(out):
                    out[name] = substitute(expr, {n: out[n] for n in used if n in out})
                    changed = True
        return out

    @staticmethod
    def _data_dependent_inames(k: Kernel, copies=None) -> set:
        """Inames whose bounds (or those of an enclosing loop) come from data
        (but *copies*: see :meth:`_scalar_copies`)."""
        temps = set(k.temporaries) - set(copies or ())
        where = iname_to_domain_index(k)
        dd: set[str] = set()
        changed = True
        while changed:
            changed = False
            for iname, idx in where.items():
                if iname in dd:
                    continue
                pars = set(param_names(k.domains[idx]))
                if pars & temps or pars & dd:
                    dd.add(iname)
                    changed = True
        return dd

    def _params_space(self, names):
        return isl.Set.universe(isl.Space.create_from_names(
            isl.DEFAULT_CONTEXT, set=[], params=list(names))).params()

    def _domain(self, acc: _Access, inames) -> isl.Set:
        """Instances of the access's instruction over *inames*, with the
        affine predicates of the instruction applied where possible."""
        k = acc.kernel
        order = [i for i in k.all_inames() if i in inames]
        dom = combined_domain(k, order, with_assumptions=False)
        dom, _ = align_params(dom, self._params_space(self.int_scalars))
        for name, value in self.fixed_params.items():
            dom = dom & _param_eq(dom.get_space(), name, value)
        for name, expr in self.copies.get(k.name, {}).items():
            pos = dom.find_dim_by_name(dim_type.param, name)
            if pos < 0:
                continue
            try:
                dom = dom & set_from_condition(p.Comparison(p.Variable(name), "==", expr),
                                               dom.get_space())
            except Exception:  # noqa: BLE001 - not affine: the loop stays data-dependent
                continue
            dom = dom.project_out(dim_type.param, pos, 1)
        for pred in acc.predicates:
            try:
                cond = set_from_condition(pred, dom.get_space())
            except Exception:  # noqa: BLE001 - not an affine condition: ignored
                continue
            dom = dom & cond
        return dom

    def _oob(self, acc: _Access, dom: isl.Set, extent_value=None, lower_only=False):
        """The instances of *dom* where the access is out of bounds (None if
        the subscript is not affine); *lower_only*: below the lower bound."""
        space = dom.get_space()
        try:
            idx = pwaff_from_expr(acc.index, space)
            lb = pwaff_from_expr(acc.lb, space)
            if acc.extent is None or lower_only:
                if extent_value is None or lower_only:
                    return idx.lt_set(lb) & dom
                ub = lb + (extent_value - 1)
            else:
                ub = lb + pwaff_from_expr(acc.extent, space) - 1
        except NonAffineError:
            return None
        return (idx.lt_set(lb) | idx.gt_set(ub)) & dom

    # }}}

    def plan(self) -> InputPlan:
        values = self._choose_sizes()
        shapes, lbs = self._shapes(values)
        # (an array a procedure views with other extents: see verify/reshaped.py)
        over = first_overrun(self, {n: v for n, v in values.items() if n in self.int_scalars},
                             shapes)
        if over is not None:
            used = {n for e in (over.index, over.extent, over.lb) if e is not None
                    for n, _ in accesses(e)}
            shown = ", ".join(f"{n}={v}" for n, v in values.items() if n in used)
            raise InputError(f"the original reaches past the end of '{over.array}' with the "
                             f"sizes drawn ({shown}): its subscript multiplies or divides "
                             "sizes (as where a procedure views an array with other "
                             "extents), which the check cannot choose sizes for; give sizes "
                             "with --size or --range for which it stays in bounds",
                             over.insn.span)
        ranges = self._index_ranges(values, shapes, lbs)
        for name, r in self.user_ranges.items():
            ranges[name] = r
        for name, r in ranges.items():
            if r.lo > r.hi:
                raise InputError(f"no values of '{name}' keep every subscript in bounds "
                                 f"({r.why}); give them with --range {name}=LO:HI",
                                 self.args[name].span)
        return InputPlan(self.args, values, shapes, lbs, ranges,
                         [n for n in values if n not in self.given])

    # {{{ sizes

    def _size_names(self) -> list:
        """Integer scalars that act as sizes: in shapes, domains, subscripts,
        assumptions."""
        used: set[str] = set()
        for spec in self.args.values():
            for e in (*spec.shape, *spec.lower_bounds):
                if e is not None:
                    used.update(n for n, _ in accesses(e))
        for k in self.kernels:
            copies = self.copies[k.name]
            for d in k.domains:
                used.update(param_names(d))
                for n in param_names(d):
                    if n in copies:
                        used.update(m for m, _ in accesses(copies[n]))
            for t in k.temporaries.values():
                for e in (*t.shape, *t.lower_bounds):
                    if e is not None:
                        used.update(n for n, _ in accesses(e))
        for acc in self.accesses:
            used.update(n for n, _ in accesses(acc.index))
        for a in self.assumptions:
            used.update(param_names(a))
        written = {n for n, s in self.args.items() if s.written}
        written |= self.extents_later | set(self.fixed_params)     # (not sizes here)
        return [n for n in self.int_scalars if n in used and n not in written]

    def _safe_set(self, names):
        """Parameter values (over *names*) for which every affine subscript
        outside data-dependent loops stays in bounds, and the accesses whose
        bad sets make it up."""
        universe = self._params_space(names)
        bad_parts = []
        seen = set()
        for acc in self.accesses:
            if acc.extent is None:
                continue
            # (the same subscript of arrays of the same bounds in the same
            # loops under the same conditions: one question; real code asks
            # few questions thousands of times)
            key = (acc.kernel.name, acc.index, acc.lb, acc.extent,
                   frozenset(acc.insn.within_inames), acc.predicates)
            if key in seen:
                continue
            seen.add(key)
            dd = self.dd_inames[acc.kernel.name]
            idx_names = {n for n, _ in accesses(acc.index)}
            if idx_names & dd:
                continue
            inames = [i for i in acc.insn.within_inames if i not in dd]
            try:
                dom = self._domain(acc, inames)
            except (NonAffineError, isl.Error):
                continue
            extra = set(param_names(dom)) - set(names)
            if extra - set(self.int_scalars):
                continue
            oob = self._oob(acc, dom, lower_only=acc.extent is not None and bool(
                {n for n, _ in accesses(acc.extent)} & self.extents_later))
            if oob is None:
                continue
            bad = oob.params()
            # integer arguments that are no size, aligned in by _domain: an
            # input (a flag in a condition) may take any value, so the sizes
            # must keep the access in bounds for all of them; one the kernel
            # writes (a subscript it computes) is not for sizes to bound
            involved = False
            for n in sorted(extra):
                pos = bad.find_dim_by_name(dim_type.param, n)
                if pos < 0:
                    continue
                if self.args[n].written and bad.involves_dims(dim_type.param, pos, 1):
                    involved = True
                else:
                    bad = bad.project_out(dim_type.param, pos, 1)
            if involved:
                continue
            bad, _ = align_params(bad, universe)
            if not bad.is_empty():
                bad_parts.append((bad, acc))
        safe = universe
        done: list = []
        seen_text: set = set()
        for bad, _ in bad_parts:
            # (a set subtracted twice changes nothing: the same text is skipped
            # at once, isl's equality tests only while they are few)
            if str(bad) in seen_text or (len(done) <= 32 and any(bad == d for d in done)):
                continue
            seen_text.add(str(bad))
            done.append(bad)
            b, s = align_params(bad, safe)
            safe = s - b
        return safe, bad_parts

    def _choose_sizes(self) -> dict:
        names = self._size_names()
        values = {}
        for n in self.int_scalars:
            if n in self.given:
                values[n] = int(self.given[n])
        for n, v in self.given.items():
            if n not in values:
                values[n] = v
        if not names:
            return self._ordered(values)
        safe, bad_parts = self._safe_set(names)
        # every size in [1, MAX_SIZE], or in the range given with --range; the
        # lower bound of an allocatable component of a derived-type argument
        # in [-MAX_LOWER, MAX_LOWER], 1 where it can be (heat's data(0:n+1))
        lower = {a.name for k in self.kernels for a in k.args
                 if isinstance(a.role, Allocation) and a.role.what == "lbound"}
        bounds = {}
        for n in names:
            if n in values:
                continue
            r = self.user_ranges.get(n)
            lo, hi = (-MAX_LOWER, MAX_LOWER) if n in lower else (1, MAX_SIZE)
            if r is not None:
                lo, hi = int(np.ceil(r.lo)), int(np.floor(r.hi))
            bounds[n] = (lo, hi)

        def admissible(s, *, given=True):
            for a in self.assumptions:
                a = a if a.is_params() else a.params()
                x, y = align_params(s, a)
                s = x & y
            s, _ = align_params(s, self._params_space(names))
            s = s & self._nonnegative_extents(s.get_space(), names)
            for n, (lo, hi) in bounds.items():
                s = s & _param_box(s.get_space(), n, lo, hi)
            for n in names:
                if given and n in values:
                    s = s & _param_eq(s.get_space(), n, values[n])
            return s
        s = admissible(safe)
        if s.is_empty():
            # which accesses are out of bounds for every size is decided
            # without the sizes given with --size: given sizes that break a
            # subscript are refused below, with its place
            s = admissible(self._unconditional_dropped(
                admissible(self._params_space(names), given=False), bad_parts))
        if s.is_empty():
            ranged = [n for n in bounds if n in self.user_ranges]
            if ranged:
                n = ranged[0]
                raise InputError(f"--range {n}={bounds[n][0]}:{bounds[n][1]}: no value in it "
                                 "fits the kernel's assumptions and keeps every subscript in "
                                 f"bounds (with the other sizes)", self.args[n].span)
            self._explain_infeasible(names, values, bad_parts)
        s = self._loops_run(s, names)
        for n in names:
            if n in values:
                continue
            lo, hi = bounds[n]
            pref = int(self.rng.integers(PREFERRED_SIZES[0], PREFERRED_SIZES[1] + 1))
            if n in lower:
                pref = 1
            if n in self.user_ranges:
                pref = int(self.rng.integers(lo, hi + 1))
            for v in nearest_first(pref, lo, hi):
                trial = s & _param_eq(s.get_space(), n, v)
                if not trial.is_empty():
                    s = trial
                    values[n] = v
                    break
            else:  # pragma: no cover - s was not empty
                raise InputError(f"no value of '{n}' fits; give it with --size {n}=VALUE")
        return self._ordered(values)

    @staticmethod
    def _unconditional_dropped(base, bad_parts):
        """The sizes of *base* that keep in bounds every access of
        *bad_parts* that is in bounds for some of them: one out of bounds
        for every size (``v(i-1)`` at ``i = 1``) must be guarded by what the
        analysis cannot see (a ``cycle`` at ``i == 1``), or the original
        itself goes out of bounds, which its run under ``-fcheck=bounds``
        reports before any kernel runs."""
        s = base
        for bad, _ in bad_parts:
            b, full = align_params(bad, base)
            if (full - b).is_empty():
                continue
            x, y = align_params(s, bad)
            s = x - y
        s, _ = align_params(s, base)
        return s

    def _nonnegative_extents(self, space, names) -> isl.Set:
        """Sizes for which no array argument has a negative extent (``a(kidia:
        kfdia)`` with kfdia < kidia - 1), which the glue refuses as a shape."""
        ok = isl.Set.universe(space)
        for spec in self.args.values():
            for e in spec.shape if spec.is_array else ():
                if e is None or not {n for n, _ in accesses(e)} <= set(names):
                    continue
                try:
                    ok = ok & set_from_condition(p.Comparison(e, ">=", 0), space)
                except Exception:  # noqa: BLE001 - not affine: clipped in _shapes
                    continue
        return ok

    def _loops_run(self, s, names):
        """*s* narrowed, loop nest by loop nest, to the sizes for which the
        nest runs at least once (``do i = 40, n`` wants n >= 40), wherever
        that leaves some sizes: default sizes that make loops empty check
        nothing.  A nest that runs for no size (or only against the other
        constraints) is left alone."""
        for k in self.kernels:
            for dom in k.domains:
                ran = dom.params()
                for n in reversed(ran.get_var_names(dim_type.param)):
                    if n not in names:     # data, outer values: some value will do
                        idx = ran.find_dim_by_name(dim_type.param, n)
                        ran = ran.project_out(dim_type.param, idx, 1)
                x, y = align_params(s, ran)
                trial = x & y
                if not trial.is_empty():
                    s = trial
        return s

    def _ordered(self, values):
        order = list(self.args)
        return {n: values[n] for n in sorted(values, key=lambda x: order.index(x)
                                             if x in order else len(order))}

    def _explain_infeasible(self, names, values, bad_parts):
        given = {n: v for n, v in values.items() if n in names}
        if given:
            point = self._params_space(names)
            for n, v in given.items():
                point = point & _param_eq(point.get_space(), n, v)
            for bad, acc in bad_parts:
                b, pt = align_params(bad, point)
                # bad with the given values (others free): out of bounds for every choice?
                if not (pt & b).is_empty() and (pt - b).is_empty():
                    shown = ", ".join(f"{n}={v}" for n, v in given.items())
                    raise InputError(f"with {shown}, {_where(acc)} goes out of bounds of "
                                     f"'{acc.array}'", acc.insn.span)
            shown = ", ".join(f"{n}={v}" for n, v in given.items())
            raise InputError(f"no sizes fit the kernel's assumptions and keep every subscript "
                             f"in bounds with {shown}; give other values with --size")
        raise InputError("no sizes fit the kernel's assumptions and keep every subscript in "
                         "bounds; give them with --size NAME=VALUE")

    # }}}

    # {{{ shapes

    def _shapes(self, values):
        shapes, lbs = {}, {}
        ints = {n: v for n, v in values.items() if n in self.int_scalars}
        for name, spec in self.args.items():
            if not spec.is_array:
                continue
            lb = tuple(_int_value(e, ints) for e in spec.lower_bounds)
            ext = []
            for axis, e in enumerate(spec.shape):
                if e is None:
                    ext.append(self._assumed_extent(name, axis, lb[axis], ints))
                else:
                    ext.append(max(0, _int_value(e, ints)))
            shapes[name] = tuple(ext)
            lbs[name] = lb
        return shapes, lbs

    def _assumed_extent(self, name, axis, lb, ints) -> int:
        """Elements of assumed-size array *name* (its last *axis*) the
        subroutines use: from the largest subscript, where the subscripts can
        be bounded; given with ``--size NAME=N`` otherwise."""
        if name in self.array_extents:
            return self.array_extents[name]
        best = None
        unknown = None
        for acc in self.accesses:
            if acc.array != name or acc.axis != axis:
                continue
            dd = self.dd_inames[acc.kernel.name]
            if {n for n, _ in accesses(acc.index)} & dd:
                unknown = acc
                continue
            inames = [i for i in acc.insn.within_inames if i not in dd]
            try:
                dom = self._fixed(self._domain(acc, inames), ints)
                pw = pwaff_from_expr(acc.index, dom.get_space())
            except (NonAffineError, isl.Error):
                unknown = acc
                continue
            if dom.is_empty():
                continue
            for piece_set, aff in pw.get_pieces():
                piece = dom & piece_set
                if piece.is_empty():
                    continue
                m = piece.max_val(aff)
                if m.is_int():
                    v = int(m.to_python())
                    best = v if best is None else max(best, v)
        if unknown is not None:
            raise InputError(f"cannot tell how many elements of assumed-size array '{name}' "
                             f"the subroutine uses (the subscript of {_where(unknown)} cannot "
                             f"be bounded); give them with --size {name}=N",
                             self.args[name].span)
        if best is None:
            return DEFAULT_ASSUMED_EXTENT
        return max(1, best - lb + 1)

    def _fixed(self, s: isl.Set, ints: dict) -> isl.Set:
        for n, v in ints.items():
            if s.find_dim_by_name(dim_type.param, n) >= 0:
                s = s & _param_eq(s.get_space(), n, v)
        return s

    # }}}

    # {{{ value ranges of integer arrays

    def _index_ranges(self, values, shapes, lbs) -> dict:
        ints = {n: v for n, v in values.items() if n in self.int_scalars}
        ranges: dict = {}

        def add(name, r):
            ranges[name] = ranges[name].intersect(r) if name in ranges else r

        # (an intent(out) argument's value on entry is undefined: the
        # subroutine sets it before using it, so no input value matters)
        int_arrays = {n for n, s in self.args.items()
                      if s.is_array and _is_int_dtype(s.dtype) and s.intent != "out"}
        scalar_ints = {n for n in self.int_scalars
                       if n not in values and self.args[n].intent != "out"}

        def bounds_of(acc):
            lb = _int_value(acc.lb, ints) if acc.array not in lbs else lbs[acc.array][acc.axis]
            if acc.array in shapes:
                ext = shapes[acc.array][acc.axis]
            else:
                ext = _int_value(acc.extent, ints)
            return lb, lb + ext - 1

        # indirect subscripts: x(col(j) + c)
        for acc in self.accesses:
            if acc.extent is None and acc.array not in shapes:
                continue
            used = {n for n, _ in accesses(acc.index)}
            feeding = (used & int_arrays) | (used & scalar_ints)
            if not feeding:
                continue
            source, offset = _indirect(acc.index, ints)
            if source is not None and source in feeding:
                lo, hi = bounds_of(acc)
                add(source, ValueRange(lo - offset, hi - offset,
                                       why=f"subscript {_where(acc)}"))
                continue
            if acc.forwarded and used & self.dd_inames[acc.kernel.name]:
                # (values(rowstart + j - 1) with rowstart = rowstarts(i) and j
                # a loop over the row: bounded through the loop's bounds)
                continue
            got = value_range(self, acc, feeding, ints, None if acc.extent is not None
                              else shapes[acc.array][acc.axis])
            if got is not None and got[0] not in self.user_ranges:
                add(*got)
                continue
            for name in sorted(feeding):
                if name in self.user_ranges:
                    continue
                raise InputError(f"cannot tell which values of '{name}' keep the subscript "
                                 f"{_where(acc)} in bounds; give them with --range "
                                 f"{name}=LO:HI", acc.insn.span)

        for name, r in ranges.items():     # (sides no access bounded)
            if r.lo == -np.inf:
                r.lo = min(DEFAULT_INT_RANGE[0], r.hi)
            if r.hi == np.inf:
                r.hi = max(DEFAULT_INT_RANGE[1], r.lo)
        # data-dependent loop bounds: do j = rowptr(i), rowptr(i+1) - 1
        roles: dict = {}
        for k in self.kernels:
            self._loop_bound_ranges(k, ints, shapes, lbs, add, roles)
        for name, rs in roles.items():
            if rs >= {"lower", "upper"} and name in ranges:
                ranges[name].nondecreasing = True
        return ranges

    def _loop_bound_ranges(self, k: Kernel, ints, shapes, lbs, add, roles):
        dd = self.dd_inames[k.name]
        if not dd:
            return
        where = iname_to_domain_index(k)
        temps = set(k.temporaries)
        int_arrays = {n for n, s in self.args.items() if s.is_array and _is_int_dtype(s.dtype)}
        assigned: dict = {}
        for insn in k.instructions:
            if isinstance(insn, Assignment) and isinstance(insn.assignee, p.Variable):
                assigned.setdefault(insn.assignee.name, []).append(insn)
        for j in sorted(dd):
            dom = k.domains[where[j]]
            bound_temps = [n for n in param_names(dom) if n in temps]
            if not bound_temps:
                continue
            valid = self._valid_range(k, j, dd, ints, shapes)
            for t in bound_temps:
                role = _bound_role(dom, j, t)
                if valid is None:
                    lo, hi = DEFAULT_INT_RANGE
                else:
                    lo, hi = valid
                t_lo = lo if role != "upper" else lo - 1
                t_hi = hi if role != "lower" else hi + 1
                for insn in assigned.get(t, []):
                    source, offset = _indirect(insn.expression, ints)
                    if source is None or source not in int_arrays:
                        if {n for n, _ in accesses(insn.expression)} & int_arrays:
                            names = sorted({n for n, _ in accesses(insn.expression)}
                                           & int_arrays)
                            if all(n in self.user_ranges for n in names):
                                continue
                            raise InputError(
                                f"cannot tell which values of '{names[0]}' keep the loop over "
                                f"'{j}' in bounds; give them with --range {names[0]}=LO:HI",
                                insn.span)
                        continue
                    add(source, ValueRange(t_lo - offset, t_hi - offset,
                                           why=f"bound of the loop over '{j}'"
                                               + (f" ({insn.span})" if insn.span else "")))
                    roles.setdefault(source, set()).add(role)

    def _valid_range(self, k: Kernel, j: str, dd: set, ints, shapes):
        """The interval of values of the data-dependent iname *j* for which
        every subscript that uses it stays in bounds (None: unconstrained)."""
        valid = None
        for acc in self.accesses:
            if acc.kernel is not k or j not in acc.insn.within_inames:
                continue
            used = {n for n, _ in accesses(acc.index)}
            if j not in used or (used & dd) - {j}:
                continue
            inames = [i for i in acc.insn.within_inames if i not in dd]
            try:
                outer = self._fixed(self._domain(acc, inames), ints)
            except (NonAffineError, isl.Error):
                continue
            # the same instances with j free
            dom = outer.insert_dims(dim_type.set, outer.dim(dim_type.set), 1)
            dom = dom.set_dim_name(dim_type.set, dom.dim(dim_type.set) - 1, j)
            ext = None
            if acc.extent is None and acc.array in shapes:
                ext = shapes[acc.array][acc.axis]
            oob = self._oob(acc, dom, extent_value=ext)
            if oob is None:
                continue
            oob = self._fixed(oob, ints)
            names = set_names(oob)
            keep = names.index(j)
            bad_j = oob.project_out(dim_type.set, keep + 1, len(names) - keep - 1) \
                .project_out(dim_type.set, 0, keep)
            bad_j = bad_j.project_out(dim_type.param, 0, bad_j.dim(dim_type.param))
            allowed = bad_j.complement()
            valid = allowed if valid is None else valid & allowed
        if valid is None or valid.is_empty():
            return None
        lo_val, hi_val = valid.dim_min_val(0), valid.dim_max_val(0)
        lo = int(lo_val.to_python()) if lo_val.is_int() else None
        hi = int(hi_val.to_python()) if hi_val.is_int() else None
        if lo is None:
            if hi is None:
                return None
            lo = min(1, hi)
        if hi is None:
            hi = lo + DEFAULT_INT_RANGE[1] - 1
        return lo, hi

    # }}}


def _param_eq(space, name, value) -> isl.Set:
    s = isl.Set.universe(space)
    idx = space.find_dim_by_name(dim_type.param, name)
    c = isl.Constraint.equality_alloc(space)
    c = c.set_coefficient_val(dim_type.param, idx, 1).set_constant_val(-int(value))
    return s.add_constraint(c)


def _param_box(space, name, lo, hi) -> isl.Set:
    s = isl.Set.universe(space)
    idx = space.find_dim_by_name(dim_type.param, name)
    c1 = isl.Constraint.inequality_alloc(space).set_coefficient_val(
        dim_type.param, idx, 1).set_constant_val(-int(lo))
    c2 = isl.Constraint.inequality_alloc(space).set_coefficient_val(
        dim_type.param, idx, -1).set_constant_val(int(hi))
    return s.add_constraint(c1).add_constraint(c2)


def plan_inputs(originals, *, assumptions=(), given=None, ranges=None,
                seed: int = 0) -> InputPlan:
    """Decide sizes, value ranges and shapes for running *originals* in sequence.

    :arg assumptions: isl parameter sets the chosen sizes must satisfy (the
        transformed kernels' :attr:`~f2loopy.ir.kernel.Kernel.assumptions`).
    :arg given: name -> value of scalars fixed by the user or by
        ``fix_parameters``.
    :arg ranges: name -> ``(lo, hi)`` value ranges given by the user.
    """
    return make_planner(originals, assumptions=assumptions, given=given, ranges=ranges,
                        seed=seed).plan()


def make_planner(originals, *, assumptions=(), given=None, ranges=None,
                 seed: int = 0) -> _Planner:
    """The planner of :func:`plan_inputs` (its arguments), names checked."""
    given = dict(given or {})
    rng = {n: (r if isinstance(r, ValueRange) else ValueRange(float(r[0]), float(r[1]),
                                                              why="--range"))
           for n, r in (ranges or {}).items()}
    planner = _Planner(originals, assumptions, given, rng, seed)
    canon = {}
    lower = {n.lower(): n for n in planner.args}
    for n, v in given.items():
        if n.lower() not in lower:
            raise InputError(f"--size {n}: no argument called '{n}'")
        name = lower[n.lower()]
        spec = planner.args[name]
        if spec.is_array:
            if None not in spec.shape:
                raise InputError(f"--size {n}: '{name}' is an array whose declaration gives "
                                 "its shape (give the sizes the declaration uses)")
            planner.array_extents[name] = int(v)
            continue
        canon[name] = v
    planner.given = canon
    for n in list(rng):
        if n.lower() not in lower:
            raise InputError(f"--range {n}: no argument called '{n}'")
        rng[lower[n.lower()]] = rng.pop(n)
    planner.user_ranges = rng
    return planner
