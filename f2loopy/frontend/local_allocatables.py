"""Allocatable local arrays used as work arrays: ``real(8), allocatable ::
tmp(:,:)``, ``allocate(tmp(nx, ny))``, used, ``deallocate(tmp)``; also
``save, allocatable`` ones allocated on the first call (``if (.not.
allocated(tmp)) allocate(tmp(nx, ny))``).

A kernel cannot allocate memory, so such an array becomes a temporary of the
kernel (one per call site of a procedure that is inlined) with the bounds of
its ``allocate`` statement: every ``allocate`` of it in the procedure must
give the same bounds, written with values the procedure does not assign.
Constant bounds give a temporary of that shape; run-time ones a global
scratch buffer that the host glue allocates for each launch (the rules of
:mod:`f2loopy.frontend.work_arrays`).  ``allocated(tmp)`` reads a logical
flag that is false when the procedure starts and that ``allocate`` and
``deallocate`` set; ``allocate(..., stat=s)`` sets ``s`` to 0 (the memory
exists: the glue allocated it before the launch).

A ``save, allocatable`` array is given a fresh temporary on every call, as if
each call were the first.  That keeps Fortran's meaning only when no value
crosses calls, which :func:`check_saved_work_arrays` proves on the kernel IR
once it is built (else a located error says why):

* the instructions that depend on the state on entry (they read the
  ``allocated`` flag of a saved array, or a scalar temporary assigned from
  one) assign only saved arrays, their flags and scalar temporaries (one
  array's flag may decide the allocation of several);
* the array's elements that those instructions write (``tmp = 0`` after the
  first allocation) are written before any other access to the array, and in
  loops of their own (beyond those around the procedure's call);
* every element any instruction reads is written earlier in the same call by
  an instruction that does not depend on the state on entry: for each read, isl checks
  that the elements it reads are among those written by the writes before it
  in program order, in the same iterations of the loops they share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import islpy as isl
import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F
from fparser.two.utils import walk

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend.allocatables import ALLOCATE_MESSAGE
from f2loopy.frontend.bindings import ArrayView
from f2loopy.ir.expressions import variables_read
from f2loopy.ir.folding import NotConstant, evaluate_constant, normalize_integer
from f2loopy.ir.kernel import AddressSpace, Temporary
from f2loopy.ir.types import BOOL

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_host import LoweringHost as _Host
else:
    _Host = object


def is_work_allocatable(sym) -> bool:
    """Whether *sym* is an allocatable local array of a procedure."""
    return "local_allocatable" in sym.attributes


@dataclass
class WorkArray:
    """One allocatable local array of one (inlined) procedure."""

    sym: object
    allocations: list            # the F.Allocation nodes of it, in order
    flag: str | None             # IR name of the 'allocated' flag, if asked
    outer_inames: frozenset      # the loops around the procedure's call
    temporary: str | None = None
    bounds: tuple | None = None  # (lower, upper) Fortran bounds

    @property
    def name(self) -> str:
        return self.sym.name      # type: ignore[attr-defined]

    @property
    def span(self):
        return self.sym.span      # type: ignore[attr-defined]


def prepare_work_arrays(lowering, nodes) -> None:
    """Before the body *nodes* of *lowering*'s procedure is lowered: record
    its allocatable local arrays and set their ``allocated`` flags false."""
    syms = [s for s in lowering.symtab.local_symbols() if is_work_allocatable(s)]
    if not syms:
        return
    allocations: dict[str, list] = {s.name.lower(): [] for s in syms}
    asked: set[str] = set()
    for node in nodes:
        for a in walk(node, F.Allocation):
            low = str(a.items[0]).lower()
            if low in allocations:
                allocations[low].append(a)
        for ref in walk(node, F.Intrinsic_Function_Reference):
            if str(ref.items[0]).lower() == "allocated":
                asked.update(str(n).lower() for n in walk(ref.items[1], F.Name))
    for sym in syms:
        low = sym.name.lower()
        flag = None
        if low in asked:
            flag = lowering.new_temporary(f"{sym.name}_allocated", BOOL)
            lowering.add_raw_assignment(flag, np.bool_(False), predicates=())
        rec = WorkArray(sym, allocations[low], flag, lowering.current_inames())
        lowering.st.work_arrays[(id(lowering), low)] = rec
        if "saved_work" in sym.attributes:
            # checked once the kernel is built, used or not (its flag may
            # decide other values)
            lowering.st.saved_work.append(rec)


def _record(lowering, sym) -> WorkArray:
    rec = lowering.st.work_arrays.get((id(lowering), sym.name.lower()))
    if rec is None or rec.sym is not sym:
        raise lowering.error(f"allocatable local array '{sym.name}' is not known here",
                             sym.name, UnsupportedFeatureError)
    return rec


def work_array_bounds(lowering, sym) -> tuple:
    """``(lower bounds, upper bounds)`` of allocatable local *sym*: those of
    its ``allocate`` statements."""
    rec = _record(lowering, sym)
    if rec.bounds is not None:
        return rec.bounds
    if not rec.allocations:
        raise lowering.error(f"allocatable local array '{sym.name}' is used but never "
                             f"allocated in '{lowering.unit_name}' (a kernel cannot keep an "
                             "allocation between calls): allocate it there", sym.name,
                             UnsupportedFeatureError)
    texts = {_spec_text(a) for a in rec.allocations}
    if len(texts) > 1:
        raise lowering.error(f"allocatable local array '{sym.name}' is allocated with "
                             f"different bounds in '{lowering.unit_name}' (f2loopy gives it "
                             "one size for the whole call): allocate it once, or with the "
                             "same bounds everywhere", sym.name, UnsupportedFeatureError)
    spec = rec.allocations[0].items[1]
    specs = list(spec.items) if spec is not None else []
    if len(specs) != len(sym.dims):
        raise lowering.error(f"'{sym.name}' has {len(sym.dims)} dimension(s) but its "
                             f"allocation gives {len(specs)}", sym.name)
    from f2loopy.frontend.work_arrays import assigned_name
    name = assigned_name(lowering, (node for s in specs for node in s.items))
    if name is not None:
        raise lowering.error(
            f"the bounds of allocatable local array '{sym.name}' depend on "
            f"'{name}', which '{lowering.unit_name}' assigns (f2loopy sizes the "
            "array once per call): allocate it with values the procedure "
            "leaves unchanged", sym.name, UnsupportedFeatureError)
    lbs = tuple(1 if s.items[0] is None else
                normalize_integer(lowering.int_expr(s.items[0], "an array bound"))
                for s in specs)
    ubs = tuple(normalize_integer(lowering.int_expr(s.items[1], "an array bound"))
                for s in specs)
    rec.bounds = (lbs, ubs)
    return rec.bounds


def _spec_text(allocation) -> str:
    return "".join(str(allocation.items[1]).lower().split())


def work_array_view(lowering, sym) -> ArrayView:
    """The view of allocatable local *sym* (its temporary made on first use)."""
    from f2loopy.frontend.work_arrays import _invariant
    rec = _record(lowering, sym)
    lbs, ubs = work_array_bounds(lowering, sym)
    if rec.temporary is None:
        shape = []
        for lb, ub in zip(lbs, ubs, strict=True):
            for n in sorted(variables_read(lb) | variables_read(ub)):
                if not _invariant(lowering, n):
                    raise lowering.error(
                        f"the bounds of allocatable local array '{sym.name}' depend on "
                        f"'{n}', which the kernel computes (a work array of run-time size "
                        "is device memory the host allocates for each launch): allocate it "
                        "with the kernel's scalar arguments or constants", sym.name,
                        UnsupportedFeatureError)
            shape.append(normalize_integer(p.Sum((ub, p.Product((-1, lb)), 1))))
        space = None
        try:
            shape = [max(0, int(evaluate_constant(s))) for s in shape]
            lbs_c = tuple(int(evaluate_constant(lb)) for lb in lbs)
        except NotConstant:
            space = AddressSpace.GLOBAL
            lbs_c = lbs
        for n in set().union(*(variables_read(x) for x in (*shape, *lbs_c))):
            if lowering.root.is_invariant_param(n):
                lowering.root.used.add(n.lower())
        if lowering.parent is None:
            # the kernel's own local: its Fortran name (the symbol reserves it)
            name = sym.name
            lowering.extra_temporaries[name] = Temporary(
                name=name, dtype=np.dtype(sym.dtype), shape=tuple(shape), lower_bounds=lbs_c,
                span=sym.span, address_space=space)
        else:
            name = lowering.new_temporary(sym.name, sym.dtype, shape=tuple(shape),
                                          lower_bounds=lbs_c, address_space=space)
        rec.temporary = name
    return ArrayView(sym.name, rec.temporary, np.dtype(sym.dtype), lbs, ubs)


def work_array_allocated(lowering, arg_nodes):
    """The value of ``allocated(a)`` (*arg_nodes*) of an allocatable local
    array: its flag; None if the argument is something else."""
    args = [a.items[1] if isinstance(a, F.Actual_Arg_Spec) and
            str(a.items[0]).lower() == "array" else a for a in arg_nodes]
    if len(args) != 1 or not isinstance(args[0], F.Name):
        return None
    sym = lowering.symtab.get(str(args[0]))
    if sym is None or not is_work_allocatable(sym):
        return None
    rec = _record(lowering, sym)
    assert rec.flag is not None        # prepare_work_arrays saw the call
    return p.Variable(rec.flag)


class WorkArraysMixin(_Host):
    """``allocate`` and ``deallocate`` of allocatable local arrays (mixed
    into UnitLowering); of anything else they stay errors."""

    def stmt_Allocate_Stmt(self, node):
        type_spec, allocations, options = node.items
        objects = [self._work_array(a.items[0], "allocate") for a in allocations.items]
        if type_spec is not None:
            raise self.error("'allocate' with a type is not supported", "allocate",
                             UnsupportedFeatureError)
        for opt in (options.items if options is not None else ()):
            key = str(opt.items[0]).lower()
            if key != "stat":
                raise self.error(f"'allocate' with {key}= is not supported (only stat=)",
                                 key, UnsupportedFeatureError)
            target = opt.items[1]
            if not isinstance(target, F.Name):
                raise self.error("stat= of 'allocate' must be a scalar variable here",
                                 str(target), UnsupportedFeatureError)
            sym = self.symbol(str(target))
            expr, dt = self.scalar_target(sym, str(target))
            self.add_assignment(expr, dt, np.int32(0), str(target))
        for sym in objects:
            rec = _record(self, sym)
            if rec.flag is not None:
                self.add_assignment(p.Variable(rec.flag), BOOL, np.bool_(True), sym.name)

    def stmt_Deallocate_Stmt(self, node):
        objects, options = node.items
        syms = [self._work_array(o, "deallocate") for o in objects.items]
        if options is not None:
            raise self.error("'deallocate' with options is not supported", "deallocate",
                             UnsupportedFeatureError)
        for sym in syms:
            rec = _record(self, sym)
            if rec.flag is not None:
                self.add_assignment(p.Variable(rec.flag), BOOL, np.bool_(False), sym.name)

    def _work_array(self, obj, stmt: str):
        sym = self.symtab.get(str(obj)) if isinstance(obj, F.Name) else None
        if sym is None or not is_work_allocatable(sym):
            hint = ""
            if sym is not None and "allocatable" in sym.attributes and \
                    not self.symtab.is_local(sym.name):      # a module's (or the host's)
                # (the Allen-Tildesley a_res_full: coefficient tables of the module,
                # allocated, filled, used and deallocated in one function)
                hint = (f"; if '{sym.name}' holds values only between its allocate and "
                        f"deallocate in '{self.unit_name}', declare it there as an "
                        "allocatable local, which a kernel makes a work array")
            raise self.error(ALLOCATE_MESSAGE.format(stmt=stmt) + hint, stmt,
                             UnsupportedFeatureError)
        return sym


# {{{ the proof that a saved array keeps no value between calls

def check_saved_work_arrays(kernel, saved) -> None:
    """Raise a located error unless each ``save, allocatable`` work array of
    *saved* (:class:`WorkArray`) keeps no value between calls of
    *kernel* (the conditions of the module docstring)."""
    if not saved:
        return
    from f2loopy.analysis.accesses import AccessAnalysis
    analysis = AccessAnalysis(kernel)
    written = kernel.written_variables()
    insns = list(kernel.instructions)
    # what depends on the state on entry: the flags of all saved arrays (one
    # array's flag often decides the allocation of several); what it decides
    # may only be saved arrays, their flags and scalar temporaries
    on_flag = _flag_dependent(kernel, insns, {w.flag for w in saved if w.flag is not None})
    allowed = {w.temporary for w in saved if w.temporary is not None} | \
        {w.flag for w in saved if w.flag is not None}
    for w in saved:
        _check_one(kernel, analysis, w, written, insns, on_flag, allowed)


def _refuse(w, why: str, span=None):
    raise UnsupportedFeatureError(
        f"saved allocatable array '{w.name}' may carry values from one call to the next, "
        f"which a kernel cannot keep (f2loopy gives it fresh memory on every call): {why}; "
        "write every element in the call before reading it, or pass the array as an "
        "argument", span if span is not None else w.span)


def _check_one(kernel, analysis, w, written, insns, on_flag, allowed) -> None:
    for n, insn in enumerate(insns):
        name = getattr(insn, "assignee_name", None)
        t = kernel.temporaries.get(name)
        if on_flag[n] and name not in allowed and (t is None or t.shape):
            _refuse(w, "whether it is allocated when the call starts decides a value that "
                    f"is not the array (at {_where(insn)})", insn.span)
    if w.temporary is None:      # never used: only what its flag decides matters
        return
    init_writes, accesses = [], []
    for n, insn in enumerate(insns):
        name = getattr(insn, "assignee_name", None)
        reads = [idx for nm, idx in insn.read_accesses() if nm == w.temporary]
        if on_flag[n]:
            if reads:
                _refuse(w, "it is read where whether it is allocated on entry decides "
                        f"(at {_where(insn)})", insn.span)
            if name == w.temporary:
                init_writes.append(n)
            continue
        if name == w.temporary or reads:
            accesses.append(n)
    for n in init_writes:
        for m in accesses:
            shared = (insns[n].within_inames & insns[m].within_inames) - w.outer_inames
            if m < n or shared:
                _refuse(w, f"what it holds after its first allocation (at {_where(insns[n])}) "
                        "is not overwritten before it is used", insns[n].span)
    writes = [n for n in accesses if getattr(insns[n], "assignee_name", None) == w.temporary]
    for m in accesses:
        for idx in (idx for nm, idx in insns[m].read_accesses() if nm == w.temporary):
            if not _covered(kernel, analysis, insns, m, idx, [n for n in writes if n < m],
                            written):
                _refuse(w, f"the elements read at {_where(insns[m])} are not all written "
                        "earlier in the same call", insns[m].span)


def _flag_dependent(kernel, insns, flags) -> list[bool]:
    """Per instruction, whether what it does depends on *flags* (reads one,
    or a scalar temporary assigned from one, in its value, its conditions or
    the bounds of its loops)."""
    from f2loopy.analysis.accesses import loop_bound_variables
    tainted = set(flags)
    out = [False] * len(insns)
    changed = bool(tainted)
    while changed:
        changed = False
        for n, insn in enumerate(insns):
            if out[n] or not (variables_read(*insn.read_expressions()) |
                              loop_bound_variables(kernel, insn.within_inames)) & tainted:
                continue
            out[n] = changed = True
            name = getattr(insn, "assignee_name", None)
            t = kernel.temporaries.get(name)
            if t is not None and not t.shape:
                tainted.add(name)
    return out


def _where(insn) -> str:
    s = insn.span
    return f"{s.filename}:{s.line}" if s is not None else insn.id


def _covered(kernel, analysis, insns, m, idx, before, written) -> bool:
    """Whether every element that subscript *idx* of instruction *m* reads
    is written by the instructions *before* (indices) earlier in the same
    iterations of the loops they share."""
    from f2loopy.analysis.accesses import loop_bound_variables
    from f2loopy.ir.isl_tools import align_params, reorder_set
    if idx is None:
        return False
    read = insns[m]
    elems = [f"_elem{k}" for k in range(len(idx))]
    names = _order(kernel, read.within_inames) + elems
    try:
        reads = _accessed(kernel, analysis, read, idx, elems, written, strict=False)
        if reads is None:
            return False
        covered = None
        for n in before:
            write = insns[n]
            widx = write.assignee.index if isinstance(write.assignee, p.Subscript) else None
            if widx is None:
                continue
            widx = widx if isinstance(widx, tuple) else (widx,)
            if len(widx) != len(idx):
                continue
            common = write.within_inames & read.within_inames
            if loop_bound_variables(kernel, write.within_inames - common):
                continue       # its own loops' bounds may have changed since
            s = _accessed(kernel, analysis, write, widx, elems, written, strict=True,
                          also=read.predicates)
            if s is None:
                continue
            s = reorder_set(s, names)
            covered = s if covered is None else covered.union(s)
        if covered is None:
            return False
        reads, covered = align_params(reads, covered)
        return reads.is_subset(covered)
    except isl.Error:
        return False


def _order(kernel, inames) -> list:
    return [i for i in kernel.all_inames() if i in inames]


def _accessed(kernel, analysis, insn, idx, elems, written, *, strict, also=()):
    """``{[inames..., elems...]}``: the instances of *insn* (under its
    conditions) and the elements its subscript *idx* names, or None if the
    subscript is not affine in the inames and the kernel's unchanging
    arguments.  A condition isl cannot express is left out (*strict*
    False: a larger set) or must be one of *also* that reads only values the
    kernel never assigns (*strict*: it then holds for both instructions),
    else None."""
    from f2loopy.ir.isl_tools import (
        NonAffineError, align_params, make_space, pwaff_from_expr, reorder_set,
        set_from_condition)
    inames = _order(kernel, insn.within_inames)

    def fixed(names) -> bool:
        return all(n in inames or (n not in written and kernel.has_variable(n))
                   for n in names)

    params = sorted(set().union(*(variables_read(e) for e in idx)) - set(inames))
    if not fixed(params):
        return None
    space = make_space(inames + elems, params)
    s = isl.Set.universe(space)
    try:
        for k, e in enumerate(idx):
            var = isl.PwAff.var_on_domain(isl.LocalSpace.from_space(space), isl.dim_type.set,
                                          len(inames) + k)
            s = s & var.eq_set(pwaff_from_expr(e, space))
    except NonAffineError:
        return None
    for cond in insn.predicates:
        names = variables_read(cond)
        c = None
        if fixed(names):
            try:
                c = set_from_condition(cond, make_space(
                    inames, sorted(set(names) - set(inames))))
            except (NonAffineError, TypeError, ValueError):
                c = None
        if c is None:
            if strict and not (cond in also and not set(names) & written):
                return None
            continue
        c = reorder_set(c, inames + elems)
        s, c = align_params(s, c)
        s = s & c
    dom = reorder_set(analysis.instance_domain(insn.within_inames), inames + elems)
    s, dom = align_params(s, dom)
    return s & dom

# }}}


__all__ = ["WorkArray", "WorkArraysMixin",
           "check_saved_work_arrays", "is_work_allocatable", "prepare_work_arrays",
           "work_array_allocated", "work_array_bounds", "work_array_view"]
