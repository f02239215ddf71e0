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
    """Integer scalar temporaries that hold a subscript computed first (``idx
    = off + j``, ``c = col(j)``, ``k = ks`` before ``k = nz`` later): name ->
    ``(positions, defs)``, the positions of every instruction that writes it
    (in order) and, of those, position -> instruction of the plain
    assignments ``name = expression``."""
    sets: dict = {}
    for pos, insn in enumerate(kernel.instructions):
        for name in insn.assignee_names():
            sets.setdefault(name, []).append((pos, insn))
    out: dict = {}
    for name, writes in sets.items():
        t = kernel.temporaries.get(name)
        if t is None or tuple(getattr(t, "shape", ()) or ()) or not _is_int_dtype(t.dtype):
            continue
        defs = {pos: insn for pos, insn in writes
                if isinstance(insn, Assignment) and isinstance(insn.assignee, p.Variable)}
        if defs:
            out[name] = ([pos for pos, _ in writes], defs)
    return out


def _reaching(name: str, insn, pos: int, defs: dict, kernel: Kernel):
    """The assignment of *name* whose value *insn* (the *pos*-th instruction)
    reads, as ``(position, instruction)``, or None where that is not one
    assignment for sure: the last write before *pos* must be a plain
    assignment that runs in the same iteration whenever *insn* runs (its
    loops among those of *insn*, its conditions among those of *insn*), and
    no later write may reach *insn* around a loop that *insn* is in and the
    assignment is not."""
    d = defs.get(name)
    if d is None:
        return None
    positions, assigns = d
    before = [q for q in positions if q < pos]
    if not before or before[-1] not in assigns:
        return None
    dpos = before[-1]
    dinsn = assigns[dpos]
    if not dinsn.within_inames <= insn.within_inames or \
            not set(dinsn.predicates) <= set(insn.predicates):
        return None
    inner = insn.within_inames - dinsn.within_inames
    if inner and any(q > pos and kernel.instructions[q].within_inames & inner
                     for q in positions):
        return None           # (a write later in a loop around the reading)
    return dpos, dinsn


def _forward(expr, insn, pos: int, defs: dict, kernel: Kernel, depth: int = 0):
    """*expr* (read by *insn*, the *pos*-th instruction) with the scalar
    temporaries of *defs* that it reads replaced by their values
    (:func:`_reaching`), where the result depends only on loop counters of
    *insn* and on what the kernel never writes; else *expr* itself."""
    names = {n for n, _ in accesses(expr)}
    if depth > 8 or not names & set(defs):
        return expr
    failed = []

    def value(name):
        r = _reaching(name, insn, pos, defs, kernel)
        if r is None:
            if name in defs:
                failed.append(name)
            return None
        dpos, dinsn = r
        got = _forward(dinsn.expression, dinsn, dpos, defs, kernel, depth + 1)
        if got is dinsn.expression and {n for n, _ in accesses(got)} & set(defs):
            failed.append(name)
            return None
        return got
    out = substitute(expr, value)
    if failed:
        return expr
    # (what the values brought in read must not change before *insn*: the
    # loop counters of *insn*'s iteration and what no instruction writes)
    written = kernel.written_variables()
    if any(n in written and n not in insn.within_inames
           for n in {m for m, _ in accesses(out)} - names):
        return expr
    return out


def _array_accesses(kernel: Kernel):
    """Every subscripted access to an array variable of *kernel*, per axis
    (a subscript computed into a scalar first seen through it:
    :func:`_forward`)."""
    out = []
    defs = _scalar_definitions(kernel)
    for pos, insn in enumerate(kernel.instructions):
        preds = tuple(_forward(c, insn, pos, defs, kernel) for c in insn.predicates) \
            if defs else tuple(insn.predicates)
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
                    seen = _forward(ix, insn, pos, defs, kernel) if defs else ix
                    out.append(_Access(kernel, insn, name, axis, seen, var.lower_bounds[axis],
                                       ext, text, forwarded=seen is not ix,
                                       predicates=preds))
    return out


def _where(acc: _Access) -> str:
    return f"'{acc.array_text}'" + (f" ({acc.insn.span})" if acc.insn.span else "")
