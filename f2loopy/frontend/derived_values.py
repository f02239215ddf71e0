"""Assignments of whole derived-type values (``t = p(i)``: component by
component, as Fortran's intrinsic assignment does) and of array components
(``p(i)%w = 0``)."""

from __future__ import annotations

from fparser.two import Fortran2003 as F

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend.derived_types import (
    _derived_type_of, _is_text, array_designator, data_ref_parts, next_component)


def _component_paths(tdef, prefix=()):
    for comp in tdef.components:
        if comp.type is not None and comp.deferred is None:
            yield from _component_paths(comp.type, (*prefix, comp.name))
        else:
            yield (*prefix, comp.name), comp


def _text_from_array(lowering, lhs, rhs, path) -> bool:
    """Whether component *path* of the value assigned (``t = p(i)``) is a
    character component of an element of an array of derived type or of an
    element assigned so: a kernel holds no array of strings, so it is not
    copied, and the target's component becomes a located error where it is
    read afterwards (``t%elem``).  Scalars' character components (flags)
    are copied."""
    if not any(isinstance(x, F.Part_Ref) or isinstance(x, F.Data_Ref) and
               isinstance(x.items[0], F.Part_Ref) for x in (lhs, rhs)):
        return False
    target = _designated(lowering.symtab, lhs, path)
    if target is None or not _is_text(target):
        return False
    target.attributes.add("poisoned")
    target.value = lowering.error(
        f"component '{'%'.join(target.path)}' holds characters copied from an element of an "
        f"array of derived type ('{rhs}' at line {lowering.lines[0]}), which a kernel cannot "
        "hold (it keeps no arrays of strings): use the numeric components only",
        path[-1], UnsupportedFeatureError)
    return True


def _designated(symtab, node, path):
    """The leaf symbol of component *path* of the designator *node*."""
    names, _ = data_ref_parts(node) if isinstance(node, F.Data_Ref) else (
        [str(node.items[0]) if isinstance(node, F.Part_Ref) else str(node)], None)
    if names is None:
        return None
    sym = symtab.get(names[0])
    for name in [*names[1:], *path]:
        if sym is None or not sym.components:
            return None
        sym = next_component(sym, name)
    return sym


def lower_derived_assignment(lowering, node) -> bool:
    """Lower assignment *node* if it assigns a derived-type value (``t =
    p(i)``: component by component, as Fortran's intrinsic assignment does)
    or an array component (``p(i)%w = 0``, ``q%w = q%v + 1``: as the array
    assignment of the flattened component); False for any other assignment."""
    lhs, _, rhs = node.items
    if isinstance(lhs, F.Data_Ref):
        section = array_designator(lowering, lhs)
        if section is not None:
            lowering.array_assignment(section, rhs)
            return True
    if not isinstance(lhs, (F.Name, F.Part_Ref, F.Data_Ref)):
        return False
    ltype = _derived_type_of(lowering.symtab, lhs)
    if ltype is None:
        return False
    rtype = _derived_type_of(lowering.symtab, rhs) if isinstance(
        rhs, (F.Name, F.Part_Ref, F.Data_Ref)) else None
    if rtype is None or rtype.name.lower() != ltype.name.lower():
        spelled = str(lhs).replace(" % ", "%")
        raise lowering.error(f"'{spelled}' is of type({ltype.name}): only a variable, element "
                             f"or component of type({ltype.name}) can be assigned to it "
                             "(assign the components one by one)", spelled,
                             UnsupportedFeatureError)
    for path, comp in _component_paths(ltype):
        if comp.deferred is not None:
            raise lowering.error(f"assigning a whole value of type({ltype.name}), which has "
                                 f"{comp.deferred} component '{comp.name}', is not supported "
                                 "(assign the components one by one)"
                                 + (" (a pointer component of derived type is associated, "
                                    "not copied)" if comp.type is not None else ""),
                                 str(lhs), UnsupportedFeatureError)
        spelled = "%".join(path)
        if _text_from_array(lowering, lhs, rhs, path):
            continue
        try:
            part = F.Assignment_Stmt(f"{lhs}%{spelled} = {rhs}%{spelled}")
        except Exception:              # (fparser's errors)
            raise lowering.error(f"cannot assign '{rhs}' to '{lhs}' component by component",
                                 str(lhs), UnsupportedFeatureError) from None
        lowering.stmt_Assignment_Stmt(part)
    return True
