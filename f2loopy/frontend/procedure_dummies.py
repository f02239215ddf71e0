"""Dummy procedures: ``external f``, ``procedure(iface) :: f``, an interface
body, or a dummy that the body calls.

A kernel calls procedures known when it is translated, so a dummy procedure
is bound to one:

* where a procedure of the file calls another with an actual procedure
  (``call solver(n, u, my_rhs)``), the callee is inlined specialised to it:
  its calls of the dummy are calls of ``my_rhs`` (:func:`specialise_call`);
* a kernel translated from a subroutine with a dummy procedure needs a
  binding from whoever translates it (``--bind KERNEL:DUMMY=PROCEDURE``;
  ``f2loopyfc`` and CMake pass it on): the kernel calls that procedure
  (a procedure of the file, of a module it can see, or of the search path)
  and takes no argument for the dummy (:func:`bind_kernel`).

A specialisation is a :class:`~f2loopy.frontend.units.Procedure` whose
``bindings`` map the dummies (lower case) to procedures; the registry's
lookup of a name in its body (:meth:`~f2loopy.frontend.units.FileRegistry.
find`) returns the bound procedure for a dummy, and nothing for an unbound one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fparser.two import Fortran2003 as F

from f2loopy.diagnostics import F2LoopyError, FortranError, UnsupportedFeatureError
from f2loopy.escape import is_identifier
from f2loopy.ir.frozen import FrozenMap

#: a binding as given on the command line: KERNEL:DUMMY=PROCEDURE
_BINDING = re.compile(r"([A-Za-z][A-Za-z0-9_]*):([A-Za-z][A-Za-z0-9_]*)="
                      r"([A-Za-z][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class Binding:
    """``--bind KERNEL:DUMMY=PROCEDURE`` (names in lower case)."""

    kernel: str
    dummy: str
    procedure: str

    def option(self) -> str:
        return f"--bind {self.kernel}:{self.dummy}={self.procedure}"


def parse_bindings(values) -> tuple[Binding, ...]:
    """The ``--bind`` *values* (strings ``KERNEL:DUMMY=PROCEDURE``, or
    :class:`Binding` objects) as bindings, each dummy once.

    :raises F2LoopyError: a value of another shape, or a dummy bound twice
        to different procedures."""
    out: dict[tuple[str, str], Binding] = {}
    for value in values:
        if isinstance(value, Binding):
            b = value
        else:
            m = _BINDING.fullmatch(value) if isinstance(value, str) else None
            if m is None or not all(is_identifier(g, 63) for g in m.groups()):
                raise F2LoopyError(f"--bind {ascii(value)}: give KERNEL:DUMMY=PROCEDURE "
                                   "(three Fortran names)")
            b = Binding(*(g.lower() for g in m.groups()))
        old = out.get((b.kernel, b.dummy))
        if old is not None and old.procedure != b.procedure:
            raise F2LoopyError(f"{b.option()}: the dummy is bound to '{old.procedure}' "
                               "already")
        out[(b.kernel, b.dummy)] = b
    return tuple(out.values())


def procedure_dummies(dummies, externals, called, symtab) -> tuple[str, ...]:
    """The dummies (as written) that are procedures: declared ``external``
    (or by ``procedure(...)`` or an interface body, which
    :class:`~f2loopy.frontend.declarations.DeclarationReader` records among
    its *externals*), or named by a ``call`` (*called*, lower case)."""
    out = []
    for d in dummies:
        low = d.lower()
        if low in externals or low in called:
            sym = symtab.get(d) if symtab.is_local(d) else None
            if sym is not None and sym.is_array:
                continue            # 'external' of an array is the compiler's error
            out.append(d)
    return tuple(out)


def specialise(proc, bindings: dict):
    """*proc* with its dummy procedures *bindings* (lower name -> Procedure)
    bound: one object per distinct binding (the inliner's caches key on the
    procedure objects)."""
    if not bindings:
        return proc
    base = proc.base if proc.base is not None else proc
    merged = dict(proc.bindings or {})
    merged.update(bindings)
    key = tuple(sorted((d, id(p)) for d, p in merged.items()))
    cache = base.specialisations
    if key not in cache:
        import dataclasses
        cache[key] = dataclasses.replace(base, bindings=FrozenMap(merged), base=base,
                                         specialisations={})
    return cache[key]


def specialise_call(lowering, proc, callee, actual_nodes: list):
    """*proc* (prepared as *callee*) bound to the actual procedures that a
    call of it in *lowering*'s unit passes (*actual_nodes* in the order of
    the dummies, None where absent), or *proc* itself when it has no dummy
    procedure.

    :raises FortranError: an actual argument of a dummy procedure that is not
        a procedure of the file, of a module or of the search path."""
    if not callee.procedure_dummies:
        return proc
    bindings = {}
    wanted = {d.lower() for d in callee.procedure_dummies}
    for d, node in zip(callee.dummies, actual_nodes, strict=True):
        if d.lower() not in wanted:
            continue
        if node is None:
            raise lowering.error(f"optional dummy procedure '{d}' of '{proc.name}' is left "
                                 "out: not supported (pass a procedure)", proc.name,
                                 UnsupportedFeatureError)
        target = None
        if isinstance(node, F.Name):
            target = lowering.find_procedure(str(node))
        if target is None or not hasattr(target, "prepare"):
            raise lowering.error(
                f"the actual argument '{node}' of dummy procedure '{d}' of '{proc.name}' is not "
                "a subroutine or function of the file, of a module or of the search path (an "
                "intrinsic or a generic name cannot be passed: pass a procedure that calls it)",
                str(node) if isinstance(node, F.Name) else proc.name, UnsupportedFeatureError)
        bindings[d.lower()] = target
    return specialise(proc, bindings)


def specialise_scan(registry, proc, actual_nodes: list, symtab, module):
    """*proc* bound to the actual procedures of a call with *actual_nodes*
    (as written, positional or keyword), resolved in the caller's scope
    (*symtab*, *module*), for the analysis of what the call assigns; *proc*
    itself where it has no dummy procedure or an actual is not resolved
    (the call's own error comes when it is lowered)."""
    passed = False
    for a in actual_nodes:
        a = a.items[1] if isinstance(a, F.Actual_Arg_Spec) else a
        sym = symtab.get(str(a)) if isinstance(a, F.Name) and symtab is not None else None
        # (a variable is not looked up: the search path is read only for
        # names that may be procedures)
        if isinstance(a, F.Name) and (sym is None or "external" in sym.attributes or
                                      str(a).lower() in symtab.procedure_dummies) and \
                registry.find(str(a), symtab, module) is not None:
            passed = True
    if not passed or id(proc) in _SCANNING:
        return proc             # no procedure passed (or a call within its own scan)
    _SCANNING.add(id(proc))
    try:
        callee = proc.prepare(registry.src, registry)
    except FortranError:
        return proc
    finally:
        _SCANNING.discard(id(proc))
    if not callee.procedure_dummies:
        return proc
    names = [d.lower() for d in callee.dummies]
    bindings = {}
    for k, a in enumerate(actual_nodes):
        dummy: str | None
        if isinstance(a, F.Actual_Arg_Spec):
            dummy, a = str(a.items[0]).lower(), a.items[1]
        else:
            dummy = names[k] if k < len(names) else None
        if dummy is None or dummy not in {d.lower() for d in callee.procedure_dummies}:
            continue
        if not isinstance(a, F.Name):
            return proc
        try:
            target = registry.find(str(a), symtab, module)
        except FortranError:
            return proc
        if target is None or not hasattr(target, "prepare"):
            return proc
        bindings[dummy] = target
    return specialise(proc, bindings)


#: procedures whose preparation :func:`specialise_scan` is in (a host and
#: its internal procedures prepare one another)
_SCANNING: set = set()


def bind_kernel(src, proc, prep, registry, bindings: tuple[Binding, ...]):
    """*proc*, the subroutine of a kernel (prepared as *prep*), specialised
    to the *bindings* given for it (``--bind``); the :class:`~f2loopy.ir.
    kernel.BoundProcedure` s the kernel records, in the order of the dummies.

    :raises FortranError: at the subroutine statement: a dummy procedure
        without a binding (the message names the option to give), a binding
        of a name that is not a dummy procedure, or of a procedure that the
        subroutine cannot see."""
    from f2loopy.ir.kernel import BoundProcedure
    mine = {b.dummy: b for b in bindings if b.kernel == proc.name.lower()}
    dummies = {d.lower(): d for d in prep.procedure_dummies}
    span = src.span(prep.first_line, proc.name)
    for b in mine.values():
        if b.dummy not in dummies:
            have = ", ".join(prep.procedure_dummies) or "none"
            raise FortranError(f"{b.option()}: '{b.dummy}' is not a dummy procedure of "
                               f"'{proc.name}' (its dummy procedures: {have})", span)
    resolved = {}
    for low, d in dummies.items():
        given = mine.get(low)
        if given is None:
            raise UnsupportedFeatureError(
                f"dummy procedure '{d}' of '{proc.name}' needs a procedure to call (a kernel "
                "calls procedures known when it is translated): translate with --bind "
                f"{proc.name.lower()}:{low}=PROCEDURE (a subroutine or function of the file or "
                "of a module; the kernel then takes no argument for it)",
                src.span(prep.first_line, d))
        target = registry.find(given.procedure, prep.symtab, proc.module)
        if target is None:
            # a procedure of a module of the file that the subroutine does not use
            found = [info.procedures[given.procedure] for info in registry.modules.values()
                     if given.procedure in info.procedures]
            if len(found) > 1:
                raise FortranError(f"{given.option()}: modules "
                                   f"{', '.join(t.module.name for t in found)} each define "
                                   f"'{given.procedure}' (use the one wanted in '{proc.name}')",
                                   span)
            target = found[0] if found else None
        if target is None or not hasattr(target, "prepare") or \
                target.name.lower() == proc.name.lower():
            from f2loopy.frontend.search_path import not_found_message
            what = not_found_message("procedure", given.procedure, registry.search)
            raise FortranError(f"{given.option()}: {what}", span)
        resolved[low] = target
    out = []
    for k, d in enumerate(prep.dummies):
        target = resolved.get(d.lower())
        if target is None:
            continue
        out.append(BoundProcedure(
            dummy=d, position=k, procedure=target.name,
            module=target.module.name if target.module is not None and
            not target.module.is_program else None,
            result_dtype=_result_dtype(src, target, registry)))
    return specialise(proc, resolved), tuple(out)


def _result_dtype(src, target, registry):
    """The result type of *target* if it is a function, else None."""
    if target.kind != "function":
        return None
    tprep = target.prepare(src, registry)
    return tprep.symtab.get(tprep.result_name).dtype
