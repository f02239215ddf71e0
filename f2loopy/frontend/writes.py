"""Which variables a procedure body assigns: directly, as loop variables,
or through the arguments of the procedures it calls (their own writes,
found by preparing them; for a generic name, any of its specifics)."""

from __future__ import annotations

from fparser.two import Fortran2003 as F
from fparser.two.utils import walk

from f2loopy.frontend.derived_types import data_ref_parts, leaves, next_component
from f2loopy.frontend.generics import specifics_of

_REFERENCE_NODES = (F.Part_Ref, F.Function_Reference, F.Structure_Constructor,
                    F.Intrinsic_Function_Reference)


def scan_writes(body, registry, symtab, module, names=None):
    """Lower-case names assigned in *body* (directly, as loop variables, or
    through arguments of called procedures of the file) and loop variables.
    Every name the body mentions is added to *names* if given."""
    written, do_vars = set(), set()
    calls = []
    for root in body:
        for node in walk(root, _SCANNED):
            if isinstance(node, F.Name):
                if names is not None:
                    names.add(str(node).lower())
            elif isinstance(node, F.Assignment_Stmt):
                lhs = node.items[0]
                if isinstance(lhs, F.Part_Ref):
                    lhs = lhs.items[0]
                if not isinstance(lhs, F.Data_Ref):
                    written.add(str(lhs).lower())
                    lhs_sym = symtab.get(str(lhs)) if symtab is not None else None
                    if lhs_sym is not None and lhs_sym.derived is not None:
                        # a whole derived-type value (t = p(i)): every component
                        written.update(leaf.name.lower() for leaf in leaves(lhs_sym))
                elif symtab is not None:
                    leaf = _component_leaf(symtab, lhs)
                    if leaf is not None:
                        written.update(x.name.lower() for x in
                                       (leaves(leaf) if leaf.derived is not None else [leaf]))
            elif isinstance(node, F.Loop_Control):
                if node.items[1] is not None:
                    do_vars.add(str(node.items[1][0]).lower())
            elif isinstance(node, F.Forall_Triplet_Spec):
                do_vars.add(str(node.items[0]).lower())
            else:
                calls.append(node)
    if registry is None:
        return written, do_vars
    for node in calls:
        name = str(node.items[0])
        sym = symtab.get(name) if symtab is not None else None
        if sym is not None and sym.is_array:
            continue
        proc = registry.find(name, symtab, module)
        args = node.items[1]
        actuals = list(args.items) if args is not None and hasattr(args, "items") else (
            [args] if args is not None else [])
        if proc is None:
            if name.lower() in getattr(symtab, "procedure_dummies", ()):
                # a dummy procedure not bound (yet): it may assign any
                # variable passed to it
                _add_all_actuals(actuals, symtab, written)
            continue
        for target in _candidates(specifics_of(proc), actuals):
            if not hasattr(target, "bindings"):
                _add_written_actuals(registry, target, actuals, symtab, written)
                continue
            # bound to the actual procedures passed (what they assign counts)
            from f2loopy.frontend.procedure_dummies import specialise_scan
            _add_written_actuals(registry, specialise_scan(registry, target, actuals, symtab,
                                                           module),
                                 actuals, symtab, written)
    return written, do_vars


def _candidates(specifics: list, actuals: list) -> list:
    """The specifics of a generic name that a call with *actuals* may
    resolve to: those with room for the positional actuals and a dummy for
    each keyword (a call of ``set_to_scalar(ni, nj, a, v)`` cannot reach the
    three-dummy ``set_1d``, whose third dummy it would otherwise seem to
    write); all of them where none fits (the call's own error comes later)."""
    if len(specifics) < 2:
        return specifics
    positional = sum(not isinstance(a, (F.Actual_Arg_Spec, F.Component_Spec))
                     for a in actuals)
    keywords = {str(a.items[0]).lower() for a in actuals
                if isinstance(a, (F.Actual_Arg_Spec, F.Component_Spec))}
    fit = []
    for s in specifics:
        dummies = _dummy_names(s)
        if positional <= len(dummies) and keywords <= set(dummies[positional:]):
            fit.append(s)
    return fit or specifics


def _add_all_actuals(actuals, symtab, written: set) -> None:
    """Add to *written* every variable passed among *actuals* (a call that
    may assign any of them)."""
    for a in actuals:
        if isinstance(a, (F.Actual_Arg_Spec, F.Component_Spec)):
            a = a.items[1]
        if isinstance(a, F.Part_Ref):
            a = a.items[0]
        if isinstance(a, F.Name):
            written.add(str(a).lower())
            sym = symtab.get(str(a)) if symtab is not None else None
            if sym is not None and sym.derived is not None:
                written.update(leaf.name.lower() for leaf in leaves(sym))


def _add_written_actuals(registry, proc, actuals, symtab, written: set) -> None:
    """Add to *written* the variables passed as *actuals* to dummies that
    *proc* (or what it calls) may assign."""
    changed = registry.dummy_writes(proc)
    if not changed:
        return
    dummies = _dummy_names(proc)
    if getattr(proc, "host", None) is not None:
        # an internal procedure assigns variables of its host
        written |= changed - {d.lower() for d in dummies}
    for k, a in enumerate(actuals):
        dummy = None
        if isinstance(a, (F.Actual_Arg_Spec, F.Component_Spec)):
            dummy = str(a.items[0]).lower()
            a = a.items[1]
        elif k < len(dummies):
            dummy = dummies[k]
        if dummy not in changed:
            continue
        if isinstance(a, F.Part_Ref):
            a = a.items[0]
        if isinstance(a, F.Data_Ref) and symtab is not None:
            names, _ = data_ref_parts(a)
            a = None
            sym = symtab.get(names[0]) if names else None
            for name in (names or [])[1:]:
                sym = next_component(sym, name) if sym is not None else None
            if sym is not None:
                written.update(leaf.name.lower() for leaf in
                               (leaves(sym) if sym.derived is not None else [sym]))
        if isinstance(a, F.Name):
            written.add(str(a).lower())
            sym = symtab.get(str(a)) if symtab is not None else None
            if sym is not None and sym.derived is not None:
                written.update(leaf.name.lower() for leaf in leaves(sym))


def _component_leaf(symtab, node):
    """The component symbol ``a%b%c(i)`` names (a leaf, or a component of
    derived type), or None."""
    names, _ = data_ref_parts(node)
    sym = symtab.get(names[0]) if names else None
    for name in (names or [])[1:]:
        if sym is None or not sym.components:
            return None
        sym = next_component(sym, name)
    return sym


_SCANNED = (F.Name, F.Assignment_Stmt, F.Loop_Control, F.Forall_Triplet_Spec, F.Call_Stmt,
            *_REFERENCE_NODES)


def _dummy_names(proc) -> list[str]:
    stmt = proc.node.children[0]
    dl = stmt.items[2]
    return [str(d).lower() for d in (dl.items if dl is not None else ())]
