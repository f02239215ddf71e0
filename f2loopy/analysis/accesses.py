"""Memory accesses of instructions and exact (isl) tests on them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import islpy as isl

from f2loopy.ir.domains import combined_domain
from f2loopy.ir.expressions import index_tuple, variables_read
from f2loopy.ir.isl_tools import (
    NonAffineError, align_params, dim_type, lazy_affs, pwaff_from_expr)
from f2loopy.ir.kernel import Assignment, Kernel


@dataclass(frozen=True)
class Access:
    """One access of an instruction to a variable.

    :attr index: the subscript tuple, or None for a scalar (or a use of the
        whole variable).
    """

    insn_id: str
    name: str
    index: tuple | None
    is_write: bool


def instruction_accesses(kernel: Kernel, insn, *, with_domain_params: bool = True
                         ) -> list[Access]:
    """Reads and writes of *insn* to kernel variables (not inames).

    Reads include the data-dependent loop-bound variables of its loops, since
    the loops cannot start before those are known.
    """
    inames = kernel.iname_domain_index      # (every iname, read only)
    out = []
    if isinstance(insn, Assignment):
        a = insn.assignee
        name = insn.assignee_name
        idx = index_tuple(a) if hasattr(a, "aggregate") else None
        out.append(Access(insn.id, name, idx, True))
    for name, idx in insn.read_accesses():
        if name in inames:
            continue
        out.append(Access(insn.id, name, idx, False))
    if with_domain_params:
        for name in loop_bound_variables(kernel, insn.within_inames):
            out.append(Access(insn.id, name, None, False))
    return [acc for acc in out if kernel.has_variable(acc.name)]


def loop_bound_variables(kernel: Kernel, inames) -> set[str]:
    """Temporaries that the loop bounds of *inames* read."""
    where = kernel.iname_domain_index       # (read only: no copy)
    out = set()
    for i in inames:
        idx = where.get(i)
        if idx is None:
            continue
        dom = kernel.domains[idx]
        for n in dom.get_var_names(dim_type.param):
            if n in kernel.temporaries:
                out.add(n)
    return out


class AccessAnalysis:
    """Cached instance domains and exact conflict tests for one kernel."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self._domains: dict[frozenset, isl.Set] = {}
        # (inames of a, of b, suffixes) -> the pairs of their instances;
        # (that key, side, subscript) -> the subscript as a piecewise affine
        # function on them: many accesses share their loops and subscripts
        self._joint: dict[tuple, isl.Set] = {}
        self._affs: dict[tuple, Any] = {}
        # (inames, subscripts, names taken from the other side) -> the
        # elements the access touches (see :meth:`touched`)
        self._touched: dict[tuple, Any] = {}
        self._unhashed: list = []
        # (inames, subscripts) -> the names they read that are neither those
        # inames nor parameters of their domain; id of a domain -> its
        # parameter names
        self._foreign: dict[tuple, frozenset] = {}
        self._param_names: dict[int, frozenset] = {}
        self._meet: dict[tuple, bool] = {}     # (id, id) of two of those -> they meet

    def _joint_domain(self, ia, ib, suffix_a: str, suffix_b: str) -> tuple[tuple, isl.Set]:
        key = (ia.within_inames, ib.within_inames, suffix_a, suffix_b)
        joint = self._joint.get(key)
        if joint is None:
            da = _rename_set(self.instance_domain(ia.within_inames), suffix_a)
            db = _rename_set(self.instance_domain(ib.within_inames), suffix_b)
            da, db = align_params(da, db)
            joint = self._joint[key] = _product(da, db)
        return key, joint

    def _aff(self, key: tuple, side: int, expr, space):
        """Subscript *expr* of side *side* (0: a, 1: b) of the pairs *key*."""
        k = (key, side, expr)
        cached = True
        try:
            return self._affs[k]
        except KeyError:
            pass
        except TypeError:       # an expression that cannot be hashed: not cached
            cached = False
        inames, suffix = key[side], key[2 + side]
        try:
            out = pwaff_from_expr(_suffixed(expr, inames, suffix), space)
        except NonAffineError:
            out = None
        if cached:
            self._affs[k] = out
        return out

    def instance_domain(self, inames) -> isl.Set:
        key = frozenset(inames)
        if key not in self._domains:
            order = [i for i in self.kernel.all_inames() if i in key]
            self._domains[key] = combined_domain(self.kernel, order)
        return self._domains[key]

    @cached_property
    def id_to_insn(self):
        return self.kernel.id_to_insn

    def conflict_set(self, a: Access, b: Access, *, suffix_a="__a", suffix_b="__b",
                     skip_non_affine: bool = False):
        """The pairs of instances of *a*'s and *b*'s instructions that touch the
        same element, as a set over renamed inames (``i__a``, ``i__b``), or
        None if the subscripts are not affine (unknown: assume a conflict).
        With *skip_non_affine*, a subscript position that is not affine in
        either access constrains nothing instead (the set then holds every
        pair that may conflict: ``a(i, idx(i, m))`` and ``a(i, idx(i, n))``
        still never meet for different ``i``)."""
        ia, ib = self.id_to_insn[a.insn_id], self.id_to_insn[b.insn_id]
        key, joint = self._joint_domain(ia, ib, suffix_a, suffix_b)
        if a.index is None or b.index is None:
            return joint
        if len(a.index) != len(b.index):
            return joint
        space = joint.get_space()
        for ea, eb in zip(a.index, b.index, strict=True):
            pa = self._aff(key, 0, ea, space)
            pb = self._aff(key, 1, eb, space) if pa is not None else None
            if pa is None or pb is None:
                if skip_non_affine:
                    continue
                return None
            joint = joint & pa.eq_set(pb)
        return joint

    def may_conflict(self, a: Access, b: Access) -> bool:
        """Whether some instances of *a* and *b* may touch the same element:
        whether :meth:`conflict_set` is None or not empty, decided on the
        elements each access touches (:meth:`touched`): two accesses meet
        exactly when those sets meet, and each is computed once per loops and
        subscripts, where the pairs of instances are a set per pair of
        accesses (a routine that inlines many BLAS calls on one work array
        tests tens of thousands of pairs)."""
        if a.index is None or b.index is None:
            return True
        if a.index == b.index:
            return True
        if distinct_constants(a.index, b.index):
            return False
        if len(a.index) != len(b.index):
            s = self.conflict_set(a, b)
            return s is None or not s.is_empty()
        ia, ib = self.id_to_insn[a.insn_id], self.id_to_insn[b.insn_id]
        da = self.instance_domain(ia.within_inames)
        db = self.instance_domain(ib.within_inames)
        ta = self.touched(ia.within_inames, a.index, db)
        tb = self.touched(ib.within_inames, b.index, da) if ta is not None else None
        if ta is None or tb is None:
            return True
        # (the sets are the cached ones, alive as long as this analysis)
        key = (id(ta), id(tb))
        hit = self._meet.get(key)
        if hit is None:
            ta, tb = align_params(ta, tb)
            hit = self._meet[key] = not (ta & tb).is_empty()
        return hit

    def touched(self, inames, index: tuple, other: isl.Set):
        """The elements (tuples of subscript values, over the kernel's
        parameters) that subscripts *index* take in the instances of loops
        *inames*, or None where a subscript is not affine.  As in
        :meth:`conflict_set`, a subscript may name the parameters of the
        instances' domain and of *other*'s (the other access's domain), and
        nothing else."""
        domain = self.instance_domain(inames)
        try:
            names = self._foreign.get((inames, index))
        except TypeError:               # an expression that cannot be hashed
            names = None
        if names is None:
            own = set(domain.get_var_names(dim_type.param)) | set(inames)
            names = frozenset(variables_read(*index) - own)
            try:
                self._foreign[(inames, index)] = names
            except TypeError:
                pass
        if names and not names <= self._params(other):
            return None                 # not a parameter of either side: not affine
        borrowed = names
        key = (frozenset(inames), index, borrowed)
        try:
            return self._touched[key]
        except KeyError:
            pass
        except TypeError:               # an expression that cannot be hashed: kept
            out = self._touch(domain, index, borrowed)   # alive for :attr:`_meet`
            self._unhashed.append(out)
            return out
        out = self._touched[key] = self._touch(domain, index, borrowed)
        return out

    def _params(self, s: isl.Set) -> frozenset:
        """The parameter names of *s* (one of the cached domains)."""
        key = id(s)
        hit = self._param_names.get(key)
        if hit is None:
            hit = self._param_names[key] = frozenset(s.get_var_names(dim_type.param))
        return hit

    @staticmethod
    def _touch(domain: isl.Set, index: tuple, borrowed: frozenset):
        n, rank = domain.dim(dim_type.set), len(index)
        if borrowed:
            extra = isl.Set.universe(isl.Space.create_from_names(
                isl.DEFAULT_CONTEXT, set=[], params=sorted(borrowed)))
            domain, _ = align_params(domain, extra)
        # one new dimension per subscript, named apart from every name around
        taken = set(domain.get_var_names(dim_type.param)) | \
            set(domain.get_var_names(dim_type.set)) | variables_read(*index)
        stem = "sub"
        while any(t.startswith(stem) for t in taken):
            stem = "_" + stem
        ext = domain.add_dims(dim_type.set, rank)
        for k in range(rank):
            ext = ext.set_dim_name(dim_type.set, n + k, f"{stem}{k}")
        space = ext.get_space()
        affs = lazy_affs(space)
        for k, e in enumerate(index):
            try:
                value = pwaff_from_expr(e, space)
            except NonAffineError:
                return None
            ext = ext & affs[f"{stem}{k}"].eq_set(value)
        return ext.project_out(dim_type.set, 0, n)


def distinct_constants(ia, ib) -> bool:
    """Some subscript position holds two different integer constants, so the
    accesses never touch the same element."""
    import numpy as np
    if len(ia) != len(ib):
        return False
    for x, y in zip(ia, ib, strict=True):
        if isinstance(x, (int, np.integer)) and isinstance(y, (int, np.integer)) and \
                int(x) != int(y):
            return True
    return False


def _rename_set(s: isl.Set, suffix: str) -> isl.Set:
    for k in range(s.dim(dim_type.set)):
        s = s.set_dim_name(dim_type.set, k, s.get_dim_name(dim_type.set, k) + suffix)
    return s


def _product(a: isl.Set, b: isl.Set) -> isl.Set:
    na = a.dim(dim_type.set)
    nb = b.dim(dim_type.set)
    a2 = a.add_dims(dim_type.set, nb)
    for k in range(nb):
        a2 = a2.set_dim_name(dim_type.set, na + k, b.get_dim_name(dim_type.set, k))
    b2 = b.insert_dims(dim_type.set, 0, na)
    for k in range(na):
        b2 = b2.set_dim_name(dim_type.set, k, a.get_dim_name(dim_type.set, k))
    return a2 & b2


def _suffixed(expr, inames, suffix):
    from f2loopy.ir.expressions import rename
    return rename(expr, {i: i + suffix for i in inames})
