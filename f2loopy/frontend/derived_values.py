"""Assignments of whole derived-type values (``t = p(i)``: component by
component, as Fortran's intrinsic assignment does) and of array components
(``p(i)%w = 0``)."""

from __future__ import annotations

import weakref

from fparser.two import Fortran2003 as F

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend.derived_types import (
    TypeDef, _derived_type_of, _element_of_array, _is_text, _subscripts, array_designator,
    _alias, component_symbol, data_ref_parts, leaves, next_component, normal_operator,
    selector_symbol)


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
    if rtype is None:
        # a function result, structure constructor or defined operation
        # (total = total + pair): evaluated into a temporary, then copied
        value = derived_operand(lowering, rhs)
        if value is not None:
            rhs, rtype = value
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


# {{{ values of derived type: function results, structure constructors, defined operators

#: expression nodes of an operator: ``(left, op, right)`` or ``(op, operand)``
OPERATOR_NODES = (F.Level_2_Expr, F.Add_Operand, F.Mult_Operand, F.Level_3_Expr,
                  F.Level_4_Expr, F.And_Operand, F.Or_Operand, F.Equiv_Operand, F.Level_5_Expr,
                  F.Expr, F.Level_2_Unary_Expr, F.Level_1_Expr)


def kernel_derived_check(sym, proc_name: str) -> None:
    """Refuse what a kernel cannot take or return: a ``class(t)`` dummy
    (accepted in procedures that are inlined) or a function result of
    derived type (*sym* not a dummy)."""
    if "polymorphic" in sym.attributes:
        name = sym.derived.name
        raise UnsupportedFeatureError(
            f"polymorphic 'class({name})' declarations are not supported (a kernel needs the "
            f"exact type: declare it type({name}), or pass the components)", sym.span)
    if not sym.is_dummy and sym.derived is not None:
        raise UnsupportedFeatureError(
            f"function '{proc_name}' returns a value of type({sym.derived.name}), which a "
            "kernel cannot return: translate a subroutine that calls it (its result is "
            "inlined component by component there)", sym.span)


def derived_result(reader, symtab, rsym, prefix_type) -> bool:
    """Whether function result *rsym* is of derived type (declared in the
    body, or by *prefix_type*: ``type(t) function f(...)``, flattened here)."""
    if isinstance(prefix_type, F.Declaration_Type_Spec):
        from f2loopy.frontend.derived_types import flatten_all, lookup_type
        rsym.derived = lookup_type(reader, prefix_type)
        flatten_all(symtab)
    return rsym.derived is not None


def operator_procedures(modules) -> set:
    """The lower-case names of the procedures that implement operators in
    *modules* (``generic :: operator(+) => add`` of a type, ``interface
    operator(+)``): used through the operator, they are no kernels."""
    from fparser.two.utils import walk

    from f2loopy.frontend.derived_types import operator_key
    out: set = set()
    for info in modules:
        node = getattr(info, "node", None)
        if node is None:
            continue
        bound = {}
        for b in walk(node, F.Specific_Binding):
            bound[str(b.items[3]).lower()] = str(b.items[4] or b.items[3]).lower()
        for b in walk(node, F.Generic_Binding):
            if operator_key(b.items[1]) is not None:
                out.update(bound.get(str(n).lower(), str(n).lower()) for n in b.items[2].items)
        for block in walk(node, F.Interface_Block):
            head = block.children[0]
            if isinstance(head, F.Interface_Stmt) and operator_key(head.items[0]) is not None:
                for body in walk(block, F.Procedure_Stmt):
                    out.update(str(n).lower() for n in body.items[0].items)
    return out


def _type_of(lowering, node):
    """The :class:`TypeDef` of designator *node*, or None (also where the
    name's declaration failed: the conversion says why)."""
    from f2loopy.diagnostics import FortranError
    try:
        return _derived_type_of(lowering.symtab, node)
    except FortranError:
        return None


def derived_temporary(lowering, tdef):
    """A fresh variable of type *tdef* (its symbol): each component a
    temporary of the kernel, reachable by name until the statement is done."""
    import numpy as np

    from f2loopy.frontend.derived_types import flatten, leaves
    from f2loopy.frontend.symbols import Symbol
    from f2loopy.ir.kernel import Temporary
    span = lowering.statement_span()
    made: list = []

    class _Scratch:
        @staticmethod
        def declare(name, span):
            made.append(Symbol(name=name, span=span))
            return made[-1]

    root = Symbol(name=lowering.fresh_name(f"{tdef.name}_value"), span=span)
    root.derived = tdef
    flatten(_Scratch, root, fresh=lowering.fresh_name)
    for sym in (root, *made):
        lowering.symtab.aliases[sym.name.lower()] = sym
    lowering.__dict__.setdefault("scratch_aliases", []).extend(
        sym.name.lower() for sym in (root, *made))
    for leaf in leaves(root):
        if "allocatable" in leaf.attributes or "through_pointer" in leaf.attributes or \
                _is_text(leaf):
            what = "characters" if _is_text(leaf) else \
                "a pointer" if "through_pointer" in leaf.attributes else "an allocatable array"
            raise lowering.error(f"a value of type({tdef.name}) is made here, but its "
                                 f"component '{'%'.join(leaf.path[1:])}' holds {what}, which a "
                                 "kernel cannot hold in a temporary: assign the components "
                                 "one by one", None, UnsupportedFeatureError)
        leaf.attributes.add("associate_value")
        shape: tuple = ()
        lbs: tuple = ()
        if leaf.dims:
            lbs = tuple(int(str(lo)) for lo, _ in leaf.dims)
            shape = tuple(int(str(hi)) - lo + 1 for (_, hi), lo in zip(leaf.dims, lbs,
                                                                          strict=True))
        lowering.extra_temporaries[leaf.name] = Temporary(
            name=leaf.name, dtype=np.dtype(leaf.dtype), shape=shape, lower_bounds=lbs,
            span=span)
    return root


def _arguments(node) -> list:
    """The argument nodes of a reference ``f(a, k=b)`` (any of fparser's
    spellings of it)."""
    args = node.items[1]
    if args is None:
        return []
    items = list(args.items) if isinstance(args, (F.Section_Subscript_List,
                                                   F.Actual_Arg_Spec_List,
                                                   F.Component_Spec_List)) else [args]
    return [F.Actual_Arg_Spec(str(a)) if isinstance(a, F.Component_Spec) else a for a in items]


_RETURNS_DERIVED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _returns_derived(proc) -> bool:
    """Whether function *proc* (or a specific of generic *proc*) returns a
    value of derived type, read from its declarations (not prepared)."""
    from fparser.two.utils import walk

    from f2loopy.diagnostics import FortranError
    known = _RETURNS_DERIVED.get(proc)
    if known is not None:
        return known
    out = False
    try:        # (a generic's specifics, any of which may be the one called)
        specifics = proc.specifics() if hasattr(proc, "specifics") else [proc]
    except FortranError:
        specifics = []
    for spec in specifics:
        node = getattr(spec, "node", None)
        if getattr(spec, "kind", None) != "function" or node is None:
            continue
        stmt = node.children[0]
        prefix, name, _, suffix = stmt.items
        result = str(suffix.items[0]) if suffix is not None and suffix.items[0] is not None \
            else str(name)
        if any(isinstance(x, F.Declaration_Type_Spec) for x in
               (prefix.items if prefix is not None else ())):
            out = True
        for decl in walk(node.children[1:2], F.Type_Declaration_Stmt):
            if isinstance(decl.items[0], F.Declaration_Type_Spec) and any(
                    str(e.items[0]).lower() == result.lower() for e in decl.items[2].items):
                out = True
    _RETURNS_DERIVED[proc] = out
    return out


def is_derived_value(lowering, node) -> bool:
    """Whether expression *node* is a value of derived type (found without
    lowering anything)."""
    if isinstance(node, F.Parenthesis):
        return is_derived_value(lowering, node.items[1])
    if isinstance(node, (F.Name, F.Part_Ref, F.Data_Ref)) and _type_of(lowering, node) is not None:
        return True
    if isinstance(node, (F.Part_Ref, F.Function_Reference, F.Structure_Constructor)) and \
            isinstance(node.items[0], F.Name):
        return _callee(lowering, str(node.items[0])) is not None
    if isinstance(node, OPERATOR_NODES):
        return any(is_derived_value(lowering, x) for x in _operator(node)[1])
    return False


def _callee(lowering, name):
    """The derived type *name* (a structure constructor) or the function
    returning a derived type that a reference ``name(...)`` calls, or None."""
    from f2loopy.diagnostics import FortranError
    try:
        sym = lowering.symtab.get(name)
    except FortranError:
        return None
    tdef = lowering.symtab.types.get(name.lower())
    if tdef is not None and (sym is None or sym.dtype is None and sym.derived is None):
        return tdef
    if sym is not None and (lowering.is_array_symbol(sym) or sym.is_parameter):
        return None
    proc = lowering.find_procedure(name)
    return proc if proc is not None and _returns_derived(proc) else None


def derived_operand(lowering, node):
    """``(designator, TypeDef)`` if *node* is a value of derived type: a
    variable, element or component as it is, a function result, structure
    constructor or defined operation evaluated into a temporary
    (:func:`derived_temporary`); None for any other value."""
    if isinstance(node, F.Parenthesis):
        return derived_operand(lowering, node.items[1])
    if isinstance(node, (F.Name, F.Part_Ref, F.Data_Ref)):
        tdef = _type_of(lowering, node)
        if tdef is not None:
            return node, tdef
    if isinstance(node, (F.Part_Ref, F.Function_Reference, F.Structure_Constructor)) and \
            isinstance(node.items[0], F.Name):
        name = str(node.items[0])
        callee = _callee(lowering, name)
        if callee is None:
            return None
        if isinstance(callee, TypeDef):
            return _construct(lowering, callee, _arguments(node), node)
        args = _arguments(node)
        proc = lowering.resolve_generic(callee, args, name)
        if proc is None or proc.kind != "function" or not _returns_derived(proc):
            return None             # (a specific of the generic that returns no type)
        value = call_function(lowering, proc, args, node)
        return value if isinstance(value, tuple) else None
    if isinstance(node, OPERATOR_NODES):
        value = defined_operation(lowering, node)
        return value if isinstance(value, tuple) else None
    return None


def call_function(lowering, proc, args, node):
    """Inline function *proc*: ``(designator of a temporary, TypeDef)`` for
    a result of derived type, else the result's value."""
    callee = proc.prepare(lowering.src, lowering.registry)
    rsym = callee.symtab.get(callee.result_name)
    if rsym is None or rsym.derived is None:
        return lowering.inline_call(proc, args, node)
    root = derived_temporary(lowering, rsym.derived)
    lowering.inline_call(proc, args, node, result_into=F.Name(root.name))
    return F.Name(root.name), rsym.derived


def _construct(lowering, tdef, args, node):
    """``t(a, k=b)``: a temporary of type *tdef* given the components."""
    root = derived_temporary(lowering, tdef)
    comps = tdef.components      # (in order: a value for one a kernel cannot use is its error)
    given: dict = {}
    for k, a in enumerate(args):
        if isinstance(a, F.Actual_Arg_Spec):
            given[str(a.items[0]).lower()] = a.items[1]
        elif k < len(comps) and not given:
            given[comps[k].name.lower()] = a
        else:
            raise lowering.error(f"structure constructor '{node}' has too many values or a "
                                 "value without a name after a named one", str(node.items[0]))
    unknown = set(given) - {c.name.lower() for c in tdef.components}
    if unknown:
        raise lowering.error(f"type '{tdef.name}' has no component '{sorted(unknown)[0]}'",
                             str(node.items[0]))
    for comp in tdef.components:
        value = given.get(comp.name.lower())
        if value is not None:
            lowering.stmt_Assignment_Stmt(F.Assignment_Stmt(f"{root.name}%{comp.name} = {value}"))
            continue
        leaf = root.components[comp.name.lower()]
        if comp.init is None or leaf.dims or comp.type is not None:
            raise lowering.error(f"structure constructor '{node}' gives no value for component "
                                 f"'{comp.name}'" + (", which has no default value"
                                                     if comp.init is None else
                                                     " (a default array value is not supported "
                                                     "here: give it)"),
                                 str(node.items[0]), UnsupportedFeatureError)
        target, dtype = lowering.lower_assignee(F.Name(leaf.name))
        lowering.add_assignment(target, dtype, comp.init[()], None, predicates=None)
    return F.Name(root.name), tdef


def _operator(node):
    """``(operator, operand nodes)`` of operator expression *node*."""
    items = node.items
    if len(items) == 3:
        return str(items[1]).strip().lower(), [items[0], items[2]]
    return str(items[0]).strip().lower(), [items[1]]


def defined_operation(lowering, node):
    """The value of operator expression *node* if an operand is of derived
    type (the operator's procedure inlined: see :func:`call_function`), or
    None for an intrinsic operation."""
    op, operands = _operator(node)
    if not any(is_derived_value(lowering, x) for x in operands):
        return None
    values = [derived_operand(lowering, x) for x in operands]
    types = [v[1] for v in values if v is not None]
    if not types:
        return None
    key = normal_operator(op)
    names: list = []
    modules = []
    for tdef in types:
        names += [n for n in tdef.operators.get(key, []) if n not in names]
        info = lowering.registry.module(tdef.module) if tdef.module else None
        if info is not None and info not in modules:
            modules.append(info)
    if lowering.module_info is not None and lowering.module_info not in modules:
        modules.append(lowering.module_info)
    for info in modules:
        generic = getattr(info, "generics", {}).get(f"operator({key})")
        if generic is not None:
            names += [n for n in generic.names if n not in names]
    spelled = " and ".join(sorted({f"type({t.name})" for t in types}))
    if not names or not modules:
        raise lowering.error(f"operator '{op}' is not defined for {spelled} (no 'generic :: "
                             f"operator({op})' of the type nor 'interface operator({op})' of "
                             "its module)", op, UnsupportedFeatureError)
    args = [v[0] if v is not None else x for v, x in zip(values, operands, strict=True)]
    proc = lowering.resolve_operator(f"operator({op})", modules[0], tuple(names), args, op)
    if proc.kind != "function":
        raise lowering.error(f"operator '{op}' is bound to subroutine '{proc.name}'", op)
    return call_function(lowering, proc, args, node)


def operation_value(lowering, node):
    """The value of operator expression *node* in an expression (None: an
    intrinsic operation, converted as usual); a result of derived type
    cannot be used there."""
    value = defined_operation(lowering, node)
    if isinstance(value, tuple):
        raise lowering.error(f"'{node}' is a value of type({value[1].name}), which cannot be "
                             "used here: assign it to a variable of the type first", None,
                             UnsupportedFeatureError)
    return value

# }}}


def drop_scratch(lowering) -> None:
    """Forget the names of the temporaries of derived type made for the
    statement just lowered (in an inlined procedure, whose symbol table is
    the procedure's: the next inlining makes its own)."""
    names = lowering.__dict__.pop("scratch_aliases", None)
    if names and lowering.parent is not None:
        for name in names:
            lowering.symtab.aliases.pop(name, None)


def expand_derived_arguments(lowering, proc, callee, actuals, dummies=None):
    """``(dummies, actuals)`` of a call with every derived-type dummy argument
    (of *dummies*, by default the callee's) replaced by its components, each
    bound to the same component of the actual argument (a variable of the
    same type, or a component of that type; a function result, structure
    constructor or defined operation is evaluated into a temporary first)."""
    dummies_out, actuals_out = [], []
    for d, a in zip(callee.dummies if dummies is None else dummies, actuals, strict=True):
        dsym = callee.symtab.get(d)
        if dsym.derived is None or a is None:       # (None: an absent optional)
            dummies_out.append(d)
            actuals_out.append(a)
            continue
        if not isinstance(a, (F.Name, F.Part_Ref, F.Data_Ref)) or \
                isinstance(a, F.Part_Ref) and is_derived_value(lowering, a) and \
                _element_of_array(lowering.symtab, a) is None:
            value = derived_operand(lowering, a)
            if value is not None:
                a = value[0]
        element = _element_of_array(lowering.symtab, a)
        if element is not None:          # p(i) of an array of derived type p
            if element.derived.name.lower() != dsym.derived.name.lower():
                raise lowering.error(f"argument '{d}' of '{proc.name}' is "
                                     f"type({dsym.derived.name}), but the actual argument "
                                     f"'{a}' is not", str(a))
            subs = [str(x) for x in _subscripts(a)]
            mentioned = getattr(callee, "names", None)
            for dleaf, aleaf in zip(leaves(dsym), leaves(element), strict=True):
                dummies_out.append(dleaf.name)
                if mentioned is not None and dleaf.path[-1].lower() not in mentioned and \
                        _is_text(aleaf):
                    # a character component the callee never names (an array
                    # of strings, which a kernel cannot hold): left out
                    actuals_out.append(None)
                    continue
                own = len(aleaf.dims or ()) - aleaf.struct_rank
                alias = _alias(lowering.symtab, aleaf)
                actuals_out.append(F.Part_Ref(f"{alias}({', '.join([':'] * own + subs)})"))
            continue
        asym = selector_symbol(lowering.symtab, a) if isinstance(a, (F.Name, F.Data_Ref)) \
            else None
        if asym is None and isinstance(a, F.Data_Ref):
            names, index = data_ref_parts(a)
            if names is not None and index is None:
                asym = component_symbol(lowering, lowering.symtab, names, names[-1])
        if asym is None or asym.derived is None or \
                asym.derived.name.lower() != dsym.derived.name.lower():
            raise lowering.error(f"argument '{d}' of '{proc.name}' is type({dsym.derived.name}), "
                                 f"but the actual argument '{a}' is not", str(a))
        for dleaf, aleaf in zip(leaves(dsym), leaves(asym), strict=True):
            dummies_out.append(dleaf.name)
            actuals_out.append(F.Name(aleaf.name))
    return dummies_out, actuals_out
