"""Mapping hardware-parallel inames onto the OpenCL grid.

Each iname tagged ``g.N`` / ``l.N`` takes the value ``base + get_group_id(N)``
(or ``get_local_id(N)``), where ``base`` is its smallest value.  Local sizes
must be compile-time constants; numbers of groups may depend on parameters
and are computed by the host glue from the expressions recorded here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import islpy as isl

from f2loopy.diagnostics import CodegenError
from f2loopy.ir.domains import combined_domain
from f2loopy.ir.isl_tools import align_params, dim_type, expr_from_pwaff
from f2loopy.ir.kernel import Kernel
from f2loopy.ir.tags import GroupAxisTag, LocalAxisTag


@dataclass(frozen=True)
class HardwareIname:
    iname: str
    kind: str          # "g" or "l"
    axis: int
    base: object       # pymbolic expression (parameters only)
    size: Any          # pymbolic expression (an int for local axes)
    lower: isl.PwAff
    upper: isl.PwAff


@dataclass(frozen=True)
class Grid:
    """Sizes of the launch grid.

    :attr local_size: work-group size per axis (3 entries): ints, or
        pymbolic expressions in the kernel parameters for a local iname whose
        length is only known at run time (see :attr:`fixed_local_size`).
    :attr num_groups: number of groups per axis, as pymbolic expressions in
        the kernel parameters (3 entries).
    """

    inames: tuple
    local_size: tuple
    num_groups: tuple

    def hw(self, iname: str) -> HardwareIname:
        for h in self.inames:
            if h.iname == iname:
                return h
        raise KeyError(iname)

    @property
    def fixed_local_size(self) -> bool:
        """Whether the work-group size is known at translation time."""
        import numbers
        return all(isinstance(x, numbers.Integral) for x in self.local_size)

    @property
    def is_parallel(self) -> bool:
        return bool(self.inames)


def compute_grid(kernel: Kernel) -> Grid:
    hws = []
    assumptions = kernel.assumptions
    for iname, tag in kernel.iname_tags.items():
        if not isinstance(tag, (GroupAxisTag, LocalAxisTag)):
            continue
        if iname not in kernel.all_inames():
            continue
        dom = combined_domain(kernel, [iname])
        if dom.is_empty():
            continue
        lower = dom.dim_min(0).coalesce()
        upper = dom.dim_max(0).coalesce()
        _check_param_only(kernel, iname, lower, upper)
        size_pw = (upper - lower + 1).coalesce()
        if isinstance(tag, LocalAxisTag):
            size = _constant_upper_bound(size_pw, assumptions)
            if size is None:
                # a run-time work-group size: the host computes it at launch
                # (at least 1) and checks it against the device's limit
                size = _max_expr([expr_from_pwaff(size_pw, _params_context(assumptions)), 1])
        else:
            size = expr_from_pwaff(_max_with_zero(size_pw), _params_context(assumptions))
        base = expr_from_pwaff(lower, _params_context(assumptions))
        hws.append(HardwareIname(iname, "g" if isinstance(tag, GroupAxisTag) else "l",
                                 tag.axis, base, size, lower, upper))
    local = [1, 1, 1]
    groups: list = [1, 1, 1]
    for axis in range(3):
        sizes = [h.size for h in hws if h.kind == "l" and h.axis == axis]
        if sizes:
            local[axis] = _max_expr(sizes)
    for axis in range(3):
        sizes = [h.size for h in hws if h.kind == "g" and h.axis == axis]
        if sizes:
            groups[axis] = sizes[0] if len(sizes) == 1 else _max_expr(sizes)
    # an axis used by local inames only still needs a group count of 1
    return Grid(tuple(sorted(hws, key=lambda h: (h.kind, h.axis, h.iname))),
                tuple(local), tuple(groups))


def _max_with_zero(pw: isl.PwAff) -> isl.PwAff:
    zero = pw.sub(pw)
    return pw.max(zero)


def _params_context(assumptions):
    return assumptions if assumptions.is_params() else assumptions.params()


def _constant_upper_bound(size: isl.PwAff, assumptions) -> int | None:
    """Largest value of *size* under *assumptions*, if that is bounded by a constant."""
    ctx = _params_context(assumptions)
    size, ctx = align_params(size, ctx)
    size = size.intersect_params(ctx)
    try:
        val = size.max_val()
    except isl.Error:
        return None
    if val.is_infty() or val.is_neginfty() or val.is_nan():
        return None
    return int(val.to_python())


def _check_param_only(kernel, iname, lower, upper):
    for pw in (lower, upper):
        for name in pw.get_var_names(dim_type.param):
            if name in kernel.temporaries:
                raise CodegenError(f"iname '{iname}' is parallel but its bounds depend on "
                                   f"'{name}', which the kernel computes", kernel.span)


def _max_expr(exprs):
    import numbers

    import pymbolic.primitives as p
    consts = [e for e in exprs if isinstance(e, numbers.Integral)]
    rest = list(dict.fromkeys(e for e in exprs if not isinstance(e, numbers.Integral)))
    if consts:
        rest.append(max(int(c) for c in consts))
    return rest[0] if len(rest) == 1 else p.Call(p.Variable("max"), tuple(rest))


