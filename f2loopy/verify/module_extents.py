"""Inputs for kernels over many allocatable module arrays indexed by module
variables (an ocean model's ``u(is_pe-onx:ie_pe+onx, js_pe-onx:je_pe+onx, nz)``
and twenty arrays like it, looped over ``do j = js_pe-onx, je_pe+onx``).

:func:`~f2loopy.verify.inputs.plan_inputs` decides every size at once: one
isl set over the index variables and each array's extents, which for such a
kernel grows past the check's isl budget.  :func:`plan_extents_last` decides
in two steps instead, as the program's own set-up does: first the index
variables and the other sizes (every subscript of such an array must stay at
or above its lower bound, 1, and the kernel's assumptions must hold for some
extents), then, with those fixed, each array's extents (so that the
subscripts' ranges lie inside the arrays' bounds).  The values are checked as
in one step: a subscript that no extent keeps in bounds is reported with its
place, as before.
"""

from __future__ import annotations

from f2loopy.ir.roles import Allocation, Component
from f2loopy.ir.work_limit import next_step_budget
from f2loopy.verify.input_plan import InputPlan
from f2loopy.verify.inputs import make_planner


def module_extent_names(originals) -> set:
    """The extent arguments of the allocatable module arrays of *originals*
    (not those of allocatable components of derived-type dummies)."""
    components = {a.name for k in originals for a in k.args
                  if isinstance(a.role, Component) and a.role.allocatable}
    return {a.name for k in originals for a in k.args
            if isinstance(a.role, Allocation) and a.role.what == "extent"
            and a.role.array not in components}


def plan_extents_last(originals, *, assumptions=(), given=None, ranges=None,
                      seed: int = 0) -> InputPlan:
    """:func:`~f2loopy.verify.inputs.plan_inputs` (the same arguments and
    result), deciding the extents of the allocatable module arrays after the
    other sizes (see the module docstring)."""
    given = dict(given or {})
    assumptions = [a for a in assumptions if a is not None]
    first = make_planner(originals, assumptions=(), given=given, ranges=ranges, seed=seed)
    later = module_extent_names(originals) - set(first.given)
    # the allocation's own values (lower bounds 1, allocated), not --size
    # values (a --size that breaks a subscript is reported, not planned around)
    own = {a.name for k in originals for a in k.args
           if isinstance(a.role, Allocation) and a.role.what != "extent"}
    fixed = {n: int(v) for n, v in first.given.items() if n in own and n in first.int_scalars}
    first.extents_later, first.fixed_params = later, fixed
    first.assumptions = [_settled(a, fixed, later) for a in assumptions]
    sizes = first._choose_sizes()
    # (two steps, each under the isl budget of the check: the second's sets
    # are small, with the sizes of the first put in)
    next_step_budget()
    # the second step: the same planner with those sizes given (and put into
    # every access's instances, where they make the sets small)
    fixed = {n: v for n, v in sizes.items() if n not in later}
    second = make_planner(originals, assumptions=(), given={**given, **fixed},
                          ranges=ranges, seed=seed)
    second.fixed_params = {n: int(v) for n, v in fixed.items() if n in second.int_scalars}
    second.assumptions = [_settled(a, second.fixed_params, ()) for a in assumptions]
    plan = second.plan()
    plan.chosen = [n for n in plan.values if n not in first.given]
    return plan


def _settled(assumption, fixed: dict, dropped):
    """The parameter set *assumption* with the parameters of *fixed* set to
    their values and those of *dropped* projected out (any value will do)."""
    import islpy as isl
    a = assumption if assumption.is_params() else assumption.params()
    for n in (*fixed, *dropped):
        pos = a.find_dim_by_name(isl.dim_type.param, n)
        if pos < 0:
            continue
        if n in fixed:
            c = isl.Constraint.equality_alloc(a.get_space())
            c = c.set_coefficient_val(isl.dim_type.param, pos, 1).set_constant_val(-fixed[n])
            a = a.add_constraint(c)
        a = a.project_out(isl.dim_type.param, pos, 1)
    return a


#: keys (file, subroutines) whose inputs needed :func:`plan_extents_last`:
#: the later coverage rounds of the same check go there at once instead of
#: exhausting the isl budget again
_EXTENTS_LAST: set = set()


def planners_for(key, kernels, plan_inputs) -> list:
    """The planners to try in order for *kernels*: *plan_inputs*, then (for
    kernels with allocatable module arrays) :func:`plan_extents_last`, which
    alone where :func:`too_complex` said so for *key*."""
    if not module_extent_names(kernels):
        return [plan_inputs]
    if key in _EXTENTS_LAST:
        return [plan_extents_last]
    return [plan_inputs, plan_extents_last]


def too_complex(key) -> None:
    """Deciding every size at once exceeded the isl budget for *key*."""
    _EXTENTS_LAST.add(key)
