"""``str(kernel)``: a stable, readable summary of a kernel."""

from __future__ import annotations

import numpy as np

from f2loopy.ir.expressions import NodeStringifier
from f2loopy.ir.roles import (
    Allocation, CommonMember, Extent, ModuleVariable, Presence, Result, Stored)
from f2loopy.ir.kernel import (
    ArrayArg, Assignment, BarrierInstruction, Kernel, NoOpInstruction, ScalarArg)

_RULE = "-" * 75


class ExpressionPrinter(NodeStringifier):
    """pymbolic stringifier that prints numpy literals compactly
    (``0.1f`` for single, ``0.1`` for double precision)."""

    def map_constant(self, expr, enclosing_prec, *args, **kwargs):
        return format_constant(expr)


def format_constant(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return ".true." if value else ".false."
    if isinstance(value, np.floating):
        text = repr(float(value)) if value.dtype == np.float64 else str(value)
        if "e" not in text and "." not in text and "inf" not in text and "nan" not in text:
            text += ".0"
        return text + ("f" if value.dtype == np.float32 else "")
    if isinstance(value, np.complexfloating):
        return f"({format_constant(value.real)}, {format_constant(value.imag)})"
    if isinstance(value, np.integer):
        return str(int(value))
    return repr(value)


def expr_to_str(expr) -> str:
    return ExpressionPrinter()(expr)


def _shape_str(shape) -> str:
    return ", ".join("*" if s is None else expr_to_str(s) for s in shape)


def kernel_to_str(kernel: Kernel) -> str:
    out = [_RULE, f"KERNEL: {kernel.name}" + (f"  ({kernel.span})" if kernel.span else ""),
           _RULE, "ARGUMENTS:"]
    for a in kernel.args:
        role = a.role
        if isinstance(role, Extent):
            out.append(f"{a.name}: {a.dtype}, scalar, extent of axis {role.axis + 1} of "
                       f"{role.array} (from the caller's array)")
        elif isinstance(role, Allocation):
            what = f"allocated flag of allocatable {role.array}" if role.what == "allocated" \
                else f"{role.what} of axis {role.axis + 1} of allocatable {role.array}"
            out.append(f"{a.name}: {a.dtype}, scalar, {what}")
        elif isinstance(role, Presence):
            out.append(f"{a.name}: {a.dtype}, scalar, presence flag of optional {role.dummy}")
        elif isinstance(role, Stored):
            shape = f"shape ({_shape_str(a.shape)}), " if a.shape else "scalar, "
            if isinstance(role, ModuleVariable) and role.allocatable:
                shape = f"allocatable, shape ({_shape_str(a.shape)}), lower bounds (" + \
                    ", ".join(expr_to_str(lb) for lb in a.lower_bounds) + "), "
            if isinstance(role, ModuleVariable):
                where = f"module variable {role.module}::{'%'.join(role.path)}"
            elif isinstance(role, CommonMember):
                where = f"common /{role.block}/ member {role.member}"
            else:
                where = f"saved local of {role.owner}"
            out.append(f"{a.name}: {a.dtype}, {shape}{where}")
        elif isinstance(role, Result) and isinstance(a, ArrayArg):
            out.append(f"{a.name}: {a.dtype}, shape ({_shape_str(a.shape)}), the function "
                       "result")
        elif isinstance(role, Result):
            out.append(f"{a.name}: {a.dtype}, scalar, the function result")
        elif isinstance(a, ScalarArg):
            out.append(f"{a.name}: {a.dtype}, scalar" + (f", intent({a.intent})"
                                                         if a.intent else ""))
        elif isinstance(a, ArrayArg):
            lbs = ", ".join(expr_to_str(lb) for lb in a.lower_bounds)
            tags = ", ".join(str(t) for t in a.axis_tags)
            out.append(f"{a.name}: {a.dtype}, shape ({_shape_str(a.shape)}), lower bounds "
                       f"({lbs}), layout ({tags})" + (f", intent({a.intent})"
                                                      if a.intent else ""))
    out += [_RULE, "DOMAINS:"]
    out += [str(d) for d in kernel.domains]
    if kernel.assumptions is not None and not kernel.assumptions.plain_is_universe():
        out += [_RULE, "ASSUMPTIONS:", str(kernel.assumptions)]
    inames = kernel.all_inames()
    if inames:
        out += [_RULE, "INAME TAGS:"]
        out += [f"{i}: {kernel.iname_tag(i)}" for i in inames]
    if kernel.loop_exits:
        out += [_RULE, "LOOP EXITS:"]
        for i, ex in kernel.loop_exits.items():
            desc = f"{i}: ends when {' or '.join(ex.flags)}" if ex.flags else f"{i}:"
            if ex.sequential:
                desc += f"; sequential ({ex.sequential})"
            out.append(desc)
    if kernel.error_sites:
        out += [_RULE, "ERROR SITES:"]
        for k, site in enumerate(kernel.error_sites, 1):
            where = f"  ! {site.span}" if site.span else ""
            out.append(f"{k}: {site.message(['#%d' % (i + 1) for i in range(8)])}{where}")
    if kernel.temporaries:
        out += [_RULE, "TEMPORARIES:"]
        for t in kernel.temporaries.values():
            desc = f"{t.name}: {t.dtype}"
            if t.shape:
                desc += f", shape ({_shape_str(t.shape)})"
                if any(lb != 0 for lb in t.lower_bounds):
                    desc += f", lower bounds ({', '.join(expr_to_str(lb) for lb in t.lower_bounds)})"
                desc += f", layout ({', '.join(str(x) for x in t.axis_tags)})"
            desc += f", {t.address_space or 'auto'}"
            if t.base_storage:
                desc += f", storage {t.base_storage}"
            if t.read_only:
                desc += ", constant"
            out.append(desc)
    if kernel.substitutions:
        out += [_RULE, "SUBSTITUTION RULES:"]
        for r in kernel.substitutions.values():
            out.append(f"{r.name}({', '.join(r.arguments)}) := {expr_to_str(r.expression)}")
    out += [_RULE, "INSTRUCTIONS:"]
    for insn in kernel.instructions:
        out.append(instruction_to_str(insn))
    out.append(_RULE)
    return "\n".join(out)


def instruction_to_str(insn) -> str:
    if isinstance(insn, Assignment):
        body = f"{expr_to_str(insn.assignee)} = {expr_to_str(insn.expression)}"
    elif isinstance(insn, BarrierInstruction):
        body = f"... {insn.scope[0]}barrier"
    elif isinstance(insn, NoOpInstruction):
        body = "... nop"
    else:
        body = type(insn).__name__
    if insn.predicates:
        body = f"if ({' and '.join(expr_to_str(pr) for pr in insn.predicates)}) {body}"
    attrs = [f"id={insn.id}"]
    if insn.within_inames:
        attrs.append(f"inames={':'.join(sorted(insn.within_inames))}")
    if insn.depends_on:
        attrs.append(f"dep={':'.join(sorted(insn.depends_on))}")
    if insn.tags:
        attrs.append(f"tags={':'.join(sorted(insn.tags))}")
    if insn.no_sync_with:
        attrs.append("nosync=" + ":".join(f"{i}@{s}" for i, s in sorted(insn.no_sync_with)))
    if insn.priority:
        attrs.append(f"priority={insn.priority}")
    where = f"  ! {insn.span}" if insn.span else ""
    return f"{body}  {{{', '.join(attrs)}}}{where}"
