"""Turning each program unit of a file into a kernel."""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F
from fparser.two.utils import walk

from f2loopy.analysis.dependences import add_program_order_dependencies
from f2loopy.diagnostics import FortranError, UnsupportedFeatureError
from f2loopy.frontend.declarations import DeclarationReader, statement_lines
from f2loopy.frontend.lowering import UnitLowering
from f2loopy.frontend.source import SourceFile
from f2loopy.frontend.symbols import SymbolTable
from f2loopy.ir.expressions import variables_read
from f2loopy.ir.folding import NotConstant, evaluate_constant, normalize_integer
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.kernel import ArrayArg, Kernel, ScalarArg, Temporary


def program_units(src: SourceFile, tree):
    """Yield ``(kind, node, host_symbols)`` for each subroutine of the file."""
    for unit in tree.children:
        if isinstance(unit, F.Subroutine_Subprogram):
            yield unit, None
        elif isinstance(unit, F.Module):
            yield from _module_units(src, unit)
        elif isinstance(unit, (F.Function_Subprogram, F.Main_Program)):
            continue          # functions are inlined where called; programs are drivers
        elif unit is None:
            continue
        else:
            first, _ = statement_lines(unit)
            raise UnsupportedFeatureError(
                f"program unit '{type(unit).__name__.lower()}' is not supported",
                src.span(first or 1))


def _module_units(src: SourceFile, module):
    host = SymbolTable()
    host.module_name = str(module.children[0].items[1])
    spec = None
    subprograms = []
    for ch in module.children:
        if isinstance(ch, F.Specification_Part):
            spec = ch
        elif isinstance(ch, F.Module_Subprogram_Part):
            subprograms = [c for c in ch.children
                           if isinstance(c, (F.Subroutine_Subprogram, F.Function_Subprogram))]
    if spec is not None:
        reader = DeclarationReader(src, host, [])
        reader.read(spec)
        for sym in host.symbols():
            if not sym.is_parameter:
                raise FortranError(f"module variable '{sym.name}' is not supported (only "
                                   "parameters may be declared in a module)", sym.span)
    for sub in subprograms:
        if isinstance(sub, F.Subroutine_Subprogram):
            yield sub, host


def lower_subroutine(src: SourceFile, unit, host: SymbolTable | None) -> Kernel:
    parts = {type(ch).__name__: ch for ch in unit.children}
    stmt = parts["Subroutine_Stmt"]
    first, _ = statement_lines(stmt)
    _, name_node, dummy_list, suffix = stmt.items
    name = str(name_node)
    dummies = []
    for d in (dummy_list.items if dummy_list is not None else ()):
        if str(d) == "*":
            raise UnsupportedFeatureError("alternate returns ('*' arguments) are not supported",
                                          src.span(first, "*"))
        dummies.append(str(d))
    if len({d.lower() for d in dummies}) != len(dummies):
        raise FortranError("a dummy argument is repeated", src.span(first, name))
    if "Internal_Subprogram_Part" in parts:
        line, _ = statement_lines(parts["Internal_Subprogram_Part"])
        raise UnsupportedFeatureError("internal procedures ('contains' in a subroutine) are "
                                      "not supported", src.span(line, "contains"))

    symtab = SymbolTable()
    if host is not None:
        symtab.implicit_none = host.implicit_none
    reader = DeclarationReader(src, symtab, dummies, host)
    reader.read(parts.get("Specification_Part"))
    if reader.data_stmts:
        stmt_node, lines = reader.data_stmts[0]
        raise UnsupportedFeatureError("'data' statements are not supported yet",
                                      src.span(lines[0], "data"))
    if host is not None:
        for sym in host.symbols():
            if sym.name.lower() not in symtab:
                symtab._syms[sym.name.lower()] = sym

    exec_part = parts.get("Execution_Part")
    written, do_vars = _scan_writes(exec_part)
    for d in dummies:
        symtab.declare(d, src.span(first, d)).is_dummy = True
    lowering = UnitLowering(src, symtab, dummies, written, do_vars)
    if exec_part is not None:
        lowering.lower_block(exec_part.children)

    args = [_make_arg(src, reader, lowering, symtab, d, first) for d in dummies]
    temporaries = _make_temporaries(src, lowering, symtab, dummies)
    kernel = Kernel(
        name=name,
        args=tuple(args),
        temporaries=FrozenMap(temporaries),
        domains=tuple(lowering.domains),
        instructions=tuple(lowering.instructions),
        span=src.span(first, name),
        module=getattr(host, "module_name", None),
    )
    return add_program_order_dependencies(kernel)


def _scan_writes(exec_part):
    written, do_vars = set(), set()
    if exec_part is None:
        return written, do_vars
    for node in walk(exec_part, F.Assignment_Stmt):
        lhs = node.items[0]
        if isinstance(lhs, F.Part_Ref):
            lhs = lhs.items[0]
        if isinstance(lhs, F.Data_Ref):
            continue
        written.add(str(lhs).lower())
    for node in walk(exec_part, F.Loop_Control):
        if node.items[1] is not None:
            do_vars.add(str(node.items[1][0]).lower())
    for node in walk(exec_part, F.Forall_Triplet_Spec):
        do_vars.add(str(node.items[0]).lower())
    return written, do_vars


def _shape_expr(src, reader: DeclarationReader, lowering: UnitLowering, node, sym_name,
                what):
    expr = reader.convert(node, allow_dummies=True)
    for n in variables_read(expr):
        if not lowering.is_invariant_param(n):
            raise FortranError(f"{what} of '{sym_name}' depends on '{n}', which is not a "
                               "scalar argument the subroutine leaves unchanged",
                               sym_span(src, reader, sym_name))
        lowering.used.add(n.lower())
    return normalize_integer(expr)


def sym_span(src, reader, name):
    sym = reader.symtab.get(name)
    return sym.span if sym is not None and sym.span is not None else None


def _dims(src, reader, lowering, sym):
    shape, lbs = [], []
    for lo_node, hi_node in sym.dims:
        lo = 1 if lo_node is None else _shape_expr(src, reader, lowering, lo_node, sym.name,
                                                     "lower bound")
        if hi_node == "*":
            shape.append(None)
        else:
            hi = _shape_expr(src, reader, lowering, hi_node, sym.name, "upper bound")
            shape.append(normalize_integer(p.Sum((hi, p.Product((-1, lo)), 1))))
        lbs.append(lo)
    return tuple(shape), tuple(lbs)


def _make_arg(src, reader, lowering, symtab, dummy, first_line):
    sym = symtab.get(dummy)
    if sym.dtype is None:
        sym.dtype = symtab.implicit_type(dummy)
        if sym.dtype is None:
            raise FortranError(f"dummy argument '{dummy}' has no type (implicit none is in "
                               "effect; declare it)", src.span(first_line, dummy))
    if sym.is_parameter:
        raise FortranError(f"dummy argument '{dummy}' cannot be a parameter", sym.span)
    if sym.is_array:
        shape, lbs = _dims(src, reader, lowering, sym)
        if any(s is None for s in shape[:-1]):
            raise FortranError(f"only the last dimension of '{sym.name}' may be '*'", sym.span)
        return ArrayArg(name=sym.name, dtype=np.dtype(sym.dtype), shape=shape,
                        lower_bounds=lbs, intent=sym.intent, span=sym.span)
    return ScalarArg(name=sym.name, dtype=np.dtype(sym.dtype), intent=sym.intent, span=sym.span)


def _make_temporaries(src, lowering: UnitLowering, symtab, dummies) -> dict:
    temps = {}
    dummy_set = {d.lower() for d in dummies}
    for sym in symtab.symbols():
        low = sym.name.lower()
        if low in dummy_set or low not in lowering.used:
            continue
        if sym.is_parameter and not sym.is_array:
            continue
        shape, lbs = (), ()
        if sym.is_array:
            shape, lbs = _dims(src, lowering_reader(lowering, symtab), lowering, sym)
            for ext in shape:
                try:
                    evaluate_constant(ext)
                except NotConstant:
                    raise UnsupportedFeatureError(
                        f"local array '{sym.name}' has a size that is not constant "
                        "(automatic arrays are not supported)", sym.span) from None
            shape = tuple(evaluate_constant(s) for s in shape)
            shape = tuple(int(s) for s in shape)
            lbs = tuple(int(evaluate_constant(lb)) for lb in lbs)
        init = sym.value if isinstance(sym.value, np.ndarray) else None
        temps[sym.name] = Temporary(
            name=sym.name, dtype=np.dtype(sym.dtype), shape=shape, lower_bounds=lbs,
            span=sym.span, initializer=init, read_only=sym.is_parameter)
    temps.update(lowering.extra_temporaries)
    return temps


def lowering_reader(lowering: UnitLowering, symtab) -> DeclarationReader:
    return DeclarationReader(lowering.src, symtab, lowering.dummies)
