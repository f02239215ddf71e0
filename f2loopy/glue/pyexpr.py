"""Integer size expressions (shapes, grid sizes) printed as Python code."""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as p

from f2loopy.codegen.names import py_name


def py_int_expr(expr) -> str:
    """Python text for an integer expression with Fortran semantics
    (``/`` truncates toward zero: printed as ``_tdiv(a, b)``)."""
    if isinstance(expr, (int, np.integer)) and not isinstance(expr, (bool, np.bool_)):
        return str(int(expr))
    if isinstance(expr, p.Variable):
        return py_name(expr.name)
    if isinstance(expr, p.Sum):
        parts = [py_int_expr(c) for c in expr.children]
        return "(" + " + ".join(parts) + ")"
    if isinstance(expr, p.Product):
        return "(" + " * ".join(py_int_expr(c) for c in expr.children) + ")"
    if isinstance(expr, p.Quotient):
        return f"_tdiv({py_int_expr(expr.numerator)}, {py_int_expr(expr.denominator)})"
    if isinstance(expr, p.FloorDiv):
        return f"({py_int_expr(expr.numerator)} // {py_int_expr(expr.denominator)})"
    if isinstance(expr, p.Remainder):
        return f"({py_int_expr(expr.numerator)} % {py_int_expr(expr.denominator)})"
    if isinstance(expr, p.Power):
        return f"({py_int_expr(expr.base)} ** {py_int_expr(expr.exponent)})"
    if isinstance(expr, p.Call) and expr.function.name in ("min", "max"):
        return f"{expr.function.name}({', '.join(py_int_expr(a) for a in expr.parameters)})"
    if isinstance(expr, p.Call) and expr.function.name in ("int32", "int64"):
        return py_int_expr(expr.parameters[0])
    if isinstance(expr, p.Call) and expr.function.name == "mod":
        a, b = (py_int_expr(x) for x in expr.parameters)
        return f"_tmod({a}, {b})"
    if isinstance(expr, p.If):
        return (f"({py_int_expr(expr.then)} if {py_bool_expr(expr.condition)} "
                f"else {py_int_expr(expr.else_)})")
    raise ValueError(f"cannot compute {expr} on the host")


def py_bool_expr(expr) -> str:
    if isinstance(expr, p.Comparison):
        return f"({py_int_expr(expr.left)} {expr.operator} {py_int_expr(expr.right)})"
    if isinstance(expr, p.LogicalAnd):
        return "(" + " and ".join(py_bool_expr(c) for c in expr.children) + ")"
    if isinstance(expr, p.LogicalOr):
        return "(" + " or ".join(py_bool_expr(c) for c in expr.children) + ")"
    if isinstance(expr, p.LogicalNot):
        return f"(not {py_bool_expr(expr.child)})"
    raise ValueError(f"cannot compute {expr} on the host")
