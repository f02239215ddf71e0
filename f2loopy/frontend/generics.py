"""Generic interfaces of modules: ``interface NAME`` with ``module procedure
A, B`` (or ``procedure X``, or interface bodies of external procedures).

Real code calls kind-generic helpers (Reference LAPACK's ``LA_ISNAN`` over
``SISNAN``/``DISNAN``, physics codes' ``interface fminj`` over one procedure
per real kind).  A reference to the generic name is resolved at each call,
as a compiler resolves it: to the one specific procedure whose dummy
arguments match the actual arguments in number, type, kind and rank (names
of keyword arguments included); that procedure is then inlined like a call
by its own name.  ``interface operator(+)`` blocks are kept as generics named
``operator(+)``, which :mod:`f2loopy.frontend.derived_values` resolves for
operands of derived type; ``interface assignment(=)`` is not read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from fparser.two import Fortran2003 as F

from f2loopy.diagnostics import FortranError, UnsupportedFeatureError
from f2loopy.frontend.characters import is_character
from f2loopy.frontend.source import statement_lines

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_host import LoweringHost as _Host, ModuleScope, ProcedureRegistry
    from f2loopy.frontend.source import SourceFile
else:
    _Host = object


@dataclass(eq=False)
class Generic:
    """A generic name of a module and the names of its specific procedures."""

    name: str
    module: ModuleScope            # the module that declares it
    names: tuple[str, ...]         # the specific procedures, as listed
    line: int
    src: SourceFile | None = None
    registry: ProcedureRegistry | None = None
    kind: str = "generic"

    def specifics(self) -> list:
        """The specific procedures (module procedures of the same module
        first, then procedures of the file or the search path)."""
        out = []
        for n in self.names:
            proc = self.module.procedures.get(n.lower())
            if proc is None and self.registry is not None:
                proc = self.registry.find(n, None, self.module)
            if proc is None:
                raise UnsupportedFeatureError(
                    f"generic '{self.name}': its specific procedure '{n}' is not defined "
                    "in the module nor found elsewhere",
                    self.src.span(self.line, n) if self.src is not None else None)
            out.append(proc)
        return out


def specifics_of(proc) -> list:
    """*proc*, or a generic's specific procedures (any of them may be the one
    called); none where they cannot be found."""
    if not isinstance(proc, Generic):
        return [proc]
    try:
        return proc.specifics()
    except FortranError:
        return []


def module_generics(spec) -> list[tuple[str, tuple[str, ...], int]]:
    """``(generic name, specific names, line)`` of the generic interface
    blocks in a module's specification part *spec* (operators and
    assignment are left out: declaring them is an error only where used)."""
    out: list[tuple[str, tuple[str, ...], int]] = []
    if spec is None:
        return out
    for node in spec.children:
        if not isinstance(node, F.Interface_Block):
            continue
        head = node.children[0]
        spec_name = head.items[0] if isinstance(head, F.Interface_Stmt) else None
        if isinstance(spec_name, F.Generic_Spec):
            from f2loopy.frontend.derived_types import operator_key
            key = operator_key(spec_name)
            if key is None:
                continue            # assignment(=)
            spec_name = f"operator({key})"     # (resolved by f2loopy.frontend.derived_values)
        elif not isinstance(spec_name, F.Name):
            continue                # plain 'interface', abstract
        names: list[str] = []
        for body in node.children[1:-1]:
            if isinstance(body, F.Procedure_Stmt):
                names.extend(str(n) for n in body.items[0].items)
            elif isinstance(body, (F.Subroutine_Body, F.Function_Body)):
                names.append(str(body.children[0].items[1]))
        out.append((str(spec_name), tuple(names), statement_lines(head)[0]))
    return out


def is_generic_interface(node) -> bool:
    """Whether interface block *node* defines a generic name (not an
    operator, not a plain block of external interfaces)."""
    head = node.children[0]
    return isinstance(head, F.Interface_Stmt) and isinstance(head.items[0], F.Name)


def _describe(sig) -> str:
    dtype, rank = sig
    if isinstance(dtype, str):
        what = f"type({dtype})"
    elif dtype is None:
        what = "untyped"
    elif is_character(dtype):
        what = "character"
    elif dtype.kind == "b":
        what = "logical"
    else:
        what = {"f": "real", "i": "integer", "c": "complex"}.get(dtype.kind, "?") + \
            f"({dtype.itemsize if dtype.kind != 'c' else dtype.itemsize // 2})"
    return what + (f" rank-{rank} array" if rank else " scalar")


def _same(a, b) -> bool:
    (da, ra), (db, rb) = a, b
    if ra != rb:
        return False
    if isinstance(da, str) or isinstance(db, str):
        return da == db
    if da is None or db is None:
        return False
    if is_character(da) or is_character(db):
        return is_character(da) and is_character(db)
    return np.dtype(da).kind == np.dtype(db).kind and \
        np.dtype(da).itemsize == np.dtype(db).itemsize


class GenericsMixin(_Host):
    """Resolution of generic names at calls (mixed into UnitLowering)."""

    def resolve_generic(self, proc, arg_nodes, name: str, intrinsic: bool = False):
        """*proc* itself, or for a :class:`Generic` the specific procedure
        that the actual arguments *arg_nodes* select.  With *intrinsic* (a
        function reference whose name is also an intrinsic's: a generic
        ``abs`` that adds a specific for a type of its own), None when no
        specific matches: the intrinsic, which the generic extends."""
        if not isinstance(proc, Generic):
            return proc
        actual = [(self._keyword_of(a), self._actual_signature(a, name)) for a in arg_nodes]
        matches, tried = [], []
        for spec in proc.specifics():
            try:
                prep = spec.prepare(self.src, self.registry)
            except FortranError:
                continue
            sigs = {d.lower(): self._dummy_signature(prep, d) for d in prep.dummies}
            order = [d.lower() for d in prep.dummies]
            tried.append(f"{spec.name}({', '.join(_describe(sigs[d]) for d in order)})")
            if _matches(actual, order, sigs):
                matches.append(spec)
        if len(matches) == 1:
            return matches[0]
        given = ", ".join(_describe(s) for _, s in actual)
        if not matches and intrinsic:
            return None
        if not matches:
            raise self.error(f"no specific procedure of generic '{proc.name}' takes "
                             f"({given}); it has {'; '.join(tried) or 'none'}", name)
        raise self.error(f"generic '{proc.name}' is ambiguous for ({given}): "
                         f"{', '.join(m.name for m in matches)} all match", name)

    def resolve_operator(self, name: str, module, names: tuple, arg_nodes, op: str):
        """The specific procedure among *names* (of *module*, or found from
        it) that operator *name* (``operator(+)``, spelled *op*) with
        operands *arg_nodes* calls, chosen as a generic's."""
        generic = Generic(name, module, names, self.lines[0], src=self.src,
                          registry=self.registry)
        return self.resolve_generic(generic, arg_nodes, op)

    @staticmethod
    def _keyword_of(node):
        return str(node.items[0]).lower() if isinstance(node, F.Actual_Arg_Spec) else None

    def _dummy_signature(self, prep, dummy: str):
        sym = prep.symtab.get(dummy)
        if sym is None:
            return prep.symtab.implicit_type(dummy), 0
        if sym.derived is not None:
            return sym.derived.name.lower(), len(sym.dims or ())
        dtype = sym.dtype if sym.dtype is not None else prep.symtab.implicit_type(sym.name)
        return dtype, len(sym.dims or ())

    def _actual_signature(self, node, generic: str):
        """(dtype or derived type name, rank) of an actual argument."""
        if isinstance(node, F.Actual_Arg_Spec):
            node = node.items[1]
        if isinstance(node, (F.Part_Ref, F.Data_Ref)):
            # an element or component of derived type (p(i), x%inner)
            from f2loopy.frontend.derived_types import _derived_type_of
            tdef = _derived_type_of(self.symtab, node)
            if tdef is not None:
                return tdef.name.lower(), 0
        if isinstance(node, (F.Name, F.Part_Ref)):
            name = str(node if isinstance(node, F.Name) else node.items[0])
            sym = self.symtab.get(name)
            if sym is not None and sym.derived is not None and isinstance(node, F.Name):
                return sym.derived.name.lower(), len(sym.dims or ())
            if sym is not None and self.is_array_symbol(sym):
                binding = self.bindings.get(sym.name.lower())
                rank = getattr(binding, "rank", None)
                rank = len(sym.dims or ()) if rank is None else rank
                if isinstance(node, F.Part_Ref):
                    subs = node.items[1]
                    subs = list(subs.items) if isinstance(subs, F.Section_Subscript_List) \
                        else [subs]
                    rank = sum(isinstance(s, F.Subscript_Triplet) for s in subs)
                return self.var_dtype(name), rank
        from f2loopy.frontend.inline import has_array_operand
        if has_array_operand(self, node):
            raise self.error(f"an array expression as an argument of generic '{generic}' "
                             "is not supported: pass an array or a section, or call the "
                             "specific procedure by its name", generic,
                             UnsupportedFeatureError)
        before = (len(self.instructions), len(self.extra_temporaries))
        value = self.expr(node)
        if (len(self.instructions), len(self.extra_temporaries)) != before:
            raise self.error(f"an argument of generic '{generic}' that calls a procedure is "
                             "not supported: compute it into a variable first, or call the "
                             "specific procedure by its name", generic,
                             UnsupportedFeatureError)
        return self.checked_dtype(value), 0


def _matches(actual, order, sigs) -> bool:
    if len(actual) != len(order):
        return False
    given = set()
    for k, (keyword, sig) in enumerate(actual):
        dummy = keyword if keyword is not None else order[k]
        if dummy not in sigs or dummy in given or not _same(sig, sigs[dummy]):
            return False
        given.add(dummy)
    return True
