"""The kind constants of the intrinsic modules ``iso_fortran_env`` and
``iso_c_binding``, and the inquiry functions ``ieee_support_inf`` and
``ieee_support_nan`` of ``ieee_arithmetic`` (true: a kernel's real types have
infinities and NaNs unless the user builds it with a finite-math option).

Modern Fortran spells kinds as ``real(real64)`` or ``real(c_double)``; a ``use``
of these modules makes their named constants visible as parameters (the
values gfortran uses on x86-64 and aarch64; also ``output_unit``,
``error_unit``, ``input_unit``, ``iostat_end`` and ``iostat_eor``, so that
``write(output_unit, *)`` is a diagnostic print and ``write(error_unit, ...)``
before a ``stop`` part of the error site).  Their other entities (the
derived types ``c_ptr``/``c_funptr``, procedures such as ``c_loc`` or
``compiler_version``, character constants such as ``c_null_char``) are known
but not provided: a module may ``use`` them for its own host-side parts (a
grid type with a ``type(c_ptr)`` component for a device copy) without
hindering the kernels next to it, and a kernel that needs one is refused
where it does (as a library module's names are,
:mod:`f2loopy.frontend.library_modules`).  A name the module does not have
is reported by the ``use ..., only:`` check or as an unknown name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend.library_modules import Library
from f2loopy.ir.types import INT32
from f2loopy.frontend.symbols import SymbolTable
from f2loopy.ir.frozen import FrozenMap

_CONSTANTS = {
    "iso_fortran_env": {
        "int8": 1, "int16": 2, "int32": 4, "int64": 8,
        "real32": 4, "real64": 8, "real128": 16,
        "numeric_storage_size": 32, "character_storage_size": 8,
        "file_storage_size": 8,
        # gfortran's preconnected units and end-of-file/record codes
        "input_unit": 5, "output_unit": 6, "error_unit": 0, "iostat_end": -1, "iostat_eor": -2,
    },
    "iso_c_binding": {
        "c_signed_char": 1, "c_short": 2, "c_int": 4, "c_long": 8, "c_long_long": 8,
        "c_size_t": 8, "c_intptr_t": 8, "c_intmax_t": 8, "c_ptrdiff_t": 8,
        "c_int8_t": 1, "c_int16_t": 2, "c_int32_t": 4, "c_int64_t": 8,
        "c_int_least8_t": 1, "c_int_least16_t": 2, "c_int_least32_t": 4,
        "c_int_least64_t": 8, "c_int_fast8_t": 1, "c_int_fast16_t": 8,
        "c_int_fast32_t": 8, "c_int_fast64_t": 8,
        "c_float": 4, "c_double": 8, "c_long_double": 10,
        "c_float_complex": 4, "c_double_complex": 8, "c_long_double_complex": 10,
        "c_bool": 1, "c_char": 1,
    },
}


#: the entities of the intrinsic modules that are not constants above (Fortran
#: 2018): known, so that a ``use`` of them is no error, but not provided
_UNPROVIDED = {
    "iso_fortran_env": frozenset({
        "atomic_int_kind", "atomic_logical_kind", "character_kinds", "integer_kinds",
        "logical_kinds", "real_kinds", "compiler_options", "compiler_version",
        "current_team", "initial_team", "parent_team", "event_type", "lock_type",
        "team_type", "iostat_inquire_internal_unit", "stat_failed_image", "stat_locked",
        "stat_locked_other_image", "stat_stopped_image", "stat_unlocked",
        "stat_unlocked_failed_image"}),
    "iso_c_binding": frozenset({
        "c_ptr", "c_funptr", "c_null_ptr", "c_null_funptr", "c_loc", "c_funloc",
        "c_associated", "c_f_pointer", "c_f_procpointer", "c_sizeof", "c_null_char",
        "c_alert", "c_backspace", "c_form_feed", "c_new_line", "c_carriage_return",
        "c_horizontal_tab", "c_vertical_tab", "c_float128", "c_float128_complex"}),
}

_WHY = {
    "iso_fortran_env": "only its kind, unit and iostat constants are supported",
    "iso_c_binding": "only its kind constants are supported: a kernel has no C pointers, "
                     "procedures or character constants of it",
}


#: the inquiry functions of ``ieee_arithmetic`` a kernel answers (LAPACK's
#: ieeeck asks them): handled as intrinsics by the expression converter; the
#: module's other procedures are refused by name where they are used
IEEE_INQUIRIES = frozenset({"ieee_support_inf", "ieee_support_nan"})


@dataclass(frozen=True)
class IntrinsicModule:
    """An intrinsic module: named constants, and for ``ieee_arithmetic``
    the inquiry functions of :data:`IEEE_INQUIRIES` (intrinsics)."""

    name: str
    symtab: SymbolTable
    node: None = None
    procedures: FrozenMap = field(default_factory=FrozenMap)
    intrinsic_functions: frozenset = frozenset()
    #: its entities that are known but not provided (refused where used)
    unprovided: Library | None = None

    @property
    def procedure_names(self) -> frozenset:
        return frozenset()


def intrinsic_module(name: str) -> IntrinsicModule | None:
    """A module info (``.symtab``, ``.procedures``) for intrinsic module *name*,
    or None if *name* is not one that f2loopy knows."""
    low = name.lower()
    if low == "ieee_arithmetic":
        symtab = SymbolTable()
        symtab.implicit_none = True
        return IntrinsicModule(low, symtab, intrinsic_functions=IEEE_INQUIRIES)
    if low not in _CONSTANTS:
        return None
    symtab = SymbolTable()
    symtab.implicit_none = True
    for const, value in _CONSTANTS[low].items():
        sym = symtab.declare(const, None)
        sym.dtype = INT32
        sym.is_parameter = True
        sym.value = np.int32(value)
    return IntrinsicModule(low, symtab, unprovided=Library(
        low, "", (), names=_UNPROVIDED[low], reason=_WHY[low]))




def is_ieee_inquiry(reader, module, local: str, remote: str) -> bool:
    """Whether *remote* of a ``use`` of *module* (as *local*) is one of the
    intrinsic inquiry functions it provides; another procedure of
    ``ieee_arithmetic`` is a located error (raised by *reader*)."""
    if remote in getattr(module, "intrinsic_functions", frozenset()) and local == remote:
        return True
    if getattr(module, "name", "") == "ieee_arithmetic":
        raise reader.error(f"'{remote}' of intrinsic module ieee_arithmetic is not "
                           "supported (only ieee_support_inf and ieee_support_nan are)",
                           remote, UnsupportedFeatureError)
    return False
