"""The symbol table of one subroutine, built from its specification part.

Fortran names are case-insensitive: symbols are keyed by the lower-case name
and keep the spelling of their first declaration (or first use), which is the
name the IR uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from f2loopy.ir.types import (
    BOOL, COMPLEX64, COMPLEX128, FLOAT32, FLOAT64, INT32, INT64)
from f2loopy.diagnostics import FortranError, SourceSpan, UnsupportedFeatureError
from f2loopy.frontend.default_kinds import default_complex, default_real
from f2loopy.frontend.library_modules import Library, library_name_error

if TYPE_CHECKING:
    from f2loopy.frontend.derived_types import TypeDef


@dataclass
class Symbol:
    """What the declarations say about one name.

    :attr dims: per axis ``(lower, upper)`` fparser nodes or pymbolic
        expressions; upper is ``"*"`` for assumed size, ``":"`` for an
        assumed shape (lower None: 1); None for scalars.
    """

    name: str
    dtype: np.dtype | None = None
    dims: list | None = None
    intent: str | None = None
    is_dummy: bool = False
    is_parameter: bool = False
    init_node: object = None
    value: object = None          # folded parameter value / initializer array
    span: SourceSpan | None = None
    type_span: SourceSpan | None = None
    attributes: set = field(default_factory=set)
    data_values: list | None = None
    #: for a module variable: ``("module", module, variable)`` (lower-case),
    #: its constant shape and lower bounds, and its initial value (or None)
    storage: tuple | None = None
    storage_shape: tuple = ()
    storage_lbs: tuple = ()
    storage_init: object = None
    #: what identifies the storage across procedures (a common block member
    #: by its position: ``("common", block, index)``); None: :attr:`storage`
    storage_key: tuple | None = None
    #: the members of its common block, in order (all are passed together)
    common_members: list | None = None
    #: a variable of derived type: its :class:`~f2loopy.frontend.derived_types.TypeDef`
    #: and its component symbols (lower-case name -> symbol)
    derived: TypeDef | None = None
    components: dict | None = None
    #: a component symbol: the names from the variable down (``("p", "q", "x")``)
    path: tuple | None = None
    component_init: object = None
    #: the rank of the array of derived type the component belongs to
    struct_rank: int = 0
    #: a logical's kind (bytes in memory): a dummy keeps it (the glue passes
    #: the caller's storage); in the kernel every logical computes alike
    logical_kind: int = 4
    #: a character parameter: its text, at its length (its ``value`` is the
    #: text's flag code, :func:`~f2loopy.frontend.characters.character_code`)
    text: str | None = None

    @property
    def is_array(self) -> bool:
        return self.dims is not None

    @property
    def array_dims(self) -> list:
        """:attr:`dims` of an array (asked of a scalar: an internal error)."""
        if self.dims is None:
            raise TypeError(f"internal error: '{self.name}' is not an array")
        return self.dims

    @property
    def is_initialized(self) -> bool:
        """Given a value by a ``data`` statement or an initialisation in its
        declaration (and not a parameter): such a local keeps its value between
        calls in Fortran (implicit ``save``)."""
        return "initialized" in self.attributes


@dataclass(eq=False)
class StatementFunction:
    """``name(args) = body`` declared before the first executable statement."""

    name: str
    args: list
    body: object
    dtype: np.dtype
    arg_dtypes: list


class SymbolTable:
    """Symbols of one program unit.

    *imports* holds what is visible from a module (the host module of a
    module procedure, or ``use``); a local declaration of the same name hides it.
    """

    def __init__(self):
        self._syms: dict[str, Symbol] = {}
        self.imports: dict[str, Symbol] = {}
        #: local name -> (module info, name in the module) of used module procedures
        self.use_renames: dict[str, tuple] = {}
        self.used_modules: list = []
        #: library modules without source used here or in a host or used module
        #: (module name -> the library and the span of its ``use``)
        self.libraries: dict[str, tuple[Library, SourceSpan | None]] = {}
        #: lower-case name -> derived type definition visible here
        self.types: dict = {}
        #: names of an enclosing ``associate`` -> the symbols they stand for
        self.aliases: dict = {}
        #: a procedure's internal procedures (lower name -> Procedure), if any
        self.internals: dict | None = None
        #: a procedure's dummy procedures (lower names), and the procedures
        #: they are bound to (:mod:`f2loopy.frontend.procedure_dummies`)
        self.procedure_dummies: frozenset = frozenset()
        self.procedure_bindings: Mapping = {}
        #: lower-case names of the procedures an interface block of this unit
        #: describes (an explicit interface: gfortran checks calls of them)
        self.interfaces: set[str] = set()
        self.implicit_none = False
        # letter -> dtype; Fortran's default implicit typing
        self.implicit: dict[str, np.dtype] = {
            c: (INT32 if c in "ijklmn" else default_real()) for c in "abcdefghijklmnopqrstuvwxyz"}

    def get(self, name: str) -> Symbol | None:
        low = name.lower()
        alias = self.aliases.get(low)
        if alias is not None:
            return alias
        sym = self._syms.get(low)
        if sym is None:
            sym = self.imports.get(low)
        if sym is not None and "poisoned" in sym.attributes:
            assert isinstance(sym.value, BaseException)
            raise sym.value          # its module's declaration failed: say why
        return sym

    def is_local(self, name: str) -> bool:
        return name.lower() in self._syms

    def __contains__(self, name: str) -> bool:
        low = name.lower()
        return low in self._syms or low in self.imports

    def declare(self, name: str, span: SourceSpan | None) -> Symbol:
        sym = self._syms.get(name.lower())
        if sym is None:
            sym = Symbol(name=name, span=span)
            self._syms[name.lower()] = sym
        return sym

    def symbols(self) -> list[Symbol]:
        """Local symbols, then the imported ones they do not hide."""
        return list(self._syms.values()) + [s for k, s in self.imports.items()
                                            if k not in self._syms]

    def local_symbols(self) -> list[Symbol]:
        return list(self._syms.values())

    def library_error(self, name: str) -> UnsupportedFeatureError | None:
        """The refusal of *name* if a library module used here may provide it
        (see :mod:`f2loopy.frontend.library_modules`), else None."""
        for library, span in self.libraries.values():
            if library.provides(name):
                return library_name_error(name, library, span)
        return None

    def implicit_type(self, name: str) -> np.dtype | None:
        """The type of undeclared *name* by the implicit rules (None under
        ``implicit none``); a name a used library module may provide is
        refused (it is no local variable)."""
        exc = self.library_error(name)
        if exc is not None:
            raise exc
        if self.implicit_none:
            return None
        return self.implicit.get(name[0].lower())


def import_components(symtab: SymbolTable, sym) -> None:
    """The component symbols of derived-type *sym* become visible too (by
    their flattened names)."""
    for csym in (sym.components or {}).values():
        symtab.imports.setdefault(csym.name.lower(), csym)
        import_components(symtab, csym)


def import_host(symtab: SymbolTable, host: SymbolTable) -> None:
    """Make the symbols of module *host* visible in *symtab* (host association)."""
    symtab.types.update(host.types)
    for sym in host.symbols():
        symtab.imports[sym.name.lower()] = sym
    symtab.use_renames.update(host.use_renames)
    symtab.used_modules.extend(host.used_modules)
    symtab.libraries.update(host.libraries)
    symtab.implicit_none = host.implicit_none
    symtab.implicit = dict(host.implicit)


def dtype_from_type_spec(type_name: str, kind, span: SourceSpan,
                         star: bool = False) -> np.dtype:
    """numpy dtype for Fortran type *type_name* with kind *kind* (an int or None).

    *star* says the kind came from the ``*N`` byte-size form, which differs for
    complex (``complex*16`` is double precision complex).
    """
    t = type_name.upper().replace(" ", "")
    if t == "DOUBLEPRECISION":
        if kind is not None:
            raise FortranError("DOUBLE PRECISION takes no kind", span)
        return FLOAT64
    if t == "DOUBLECOMPLEX":
        return COMPLEX128
    table: dict[int | None, np.dtype]
    if t == "INTEGER":
        table = {None: INT32, 1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: INT32, 8: INT64}
    elif t == "REAL":
        table = {None: default_real(), 4: FLOAT32, 8: FLOAT64}
    elif t == "COMPLEX":
        table = ({None: default_complex(), 8: COMPLEX64, 16: COMPLEX128} if star
                 else {None: default_complex(), 4: COMPLEX64, 8: COMPLEX128})
    elif t == "LOGICAL":
        # every kind computes alike; a dummy's kind is its storage (Symbol.logical_kind)
        table = {None: BOOL, 1: BOOL, 2: BOOL, 4: BOOL, 8: BOOL}
    elif t == "CHARACTER":
        raise UnsupportedFeatureError("character variables are not supported "
                                      "(kernels compute on numbers)", span)
    else:
        raise UnsupportedFeatureError(f"type '{type_name.lower()}' is not supported", span)
    if kind not in table:
        raise UnsupportedFeatureError(
            f"{type_name.lower()} of kind {kind} is not supported (kinds: "
            f"{', '.join(str(k) for k in table if k is not None)})", span)
    return table[kind]
