"""Emitting the OpenCL C text of one kernel from its schedule tree.

Loop bounds and guards come from the loop domains with isl: each loop runs
over exactly the range its domain allows given the enclosing loops (what isl
cannot prove from that range becomes a guard on the instructions, nothing
else does).  The *context* threaded through the walk is the set of values
the enclosing loops and the grid can take.
"""

from __future__ import annotations

from typing import Any

import islpy as isl
import numpy as np
import pymbolic.primitives as p

from f2loopy.ir.types import kernel_type_inferrer
from f2loopy.codegen.c_expressions import (
    PREC_ADD, PREC_REL, CExpressionPrinter, assigned_constant)
from f2loopy.codegen.grid import Grid
from f2loopy.codegen.helpers import HelperSet
from f2loopy.codegen.names import c_name
from f2loopy.codegen.vectors import vec_axis, vectorizable
from f2loopy.diagnostics import CodegenError
from f2loopy.escape import c_comment
from f2loopy.ir.domains import combined_domain, iname_closure
from f2loopy.ir.expressions import variables_read
from f2loopy.ir.folding import normalize_integer
from f2loopy.ir.layout import LayoutError, linear_offset
from f2loopy.ir.isl_tools import (
    NonAffineError, align_params, dim_type, expr_from_pwaff, expr_from_set, pwaff_from_expr,
    range_constraint, set_to_params)
from f2loopy.ir.kernel import (
    AddressSpace, ArrayArg, Assignment, BarrierInstruction, Kernel, NoOpInstruction,
    ScalarArg, Temporary)
from f2loopy.ir.tags import ILPTag, UnrollTag, VectorizeTag
from f2loopy.ir.work_limit import set_too_complex
from f2loopy.schedule.linearize import BarrierNode, InsnNode, LoopNode


#: the kernel argument of the error buffer (f2loopy.frontend.errors): a name
#: no Fortran variable can have
ERROR_BUFFER = "_f2l_err"


class KernelEmitter:
    def __init__(self, kernel: Kernel, grid: Grid, schedule, *, address_spaces: dict,
                 by_reference: frozenset = frozenset()):
        self.kernel = kernel
        self.grid = grid
        self.schedule = schedule
        self.address_spaces = address_spaces
        self.helpers = HelperSet()
        self.types = kernel_type_inferrer(kernel)
        # scalar arguments passed as one-element buffers (written here, or by
        # another launch of a kernel split at global barriers)
        self.written = kernel.written_variables() | by_reference
        self.printer = CExpressionPrinter(self.dtype_of, self.c_variable, self.c_subscript,
                                          self.helpers)
        self.lines: list[str] = []
        self.indent = 1
        self.vector_iname = None
        self._domains: dict[tuple, isl.Set] = {}
        self._body_inames: dict[int, set] = {}
        #: (id of a context, the enclosing inames a statement runs in) -> (the
        #: context, its guard): the statements of one block share their
        #: context, and most share their inames, so each distinct guard is
        #: computed once (code generation near linear in the statements)
        self._guards: dict[tuple, tuple] = {}
        self._hoist: Any = None
        self.uses_double = False

    # {{{ naming and types

    def dtype_of(self, expr):
        dt = self.types(expr)
        if dt == np.float64 or dt == np.complex128:
            self.uses_double = True
        return dt

    def c_variable(self, name: str) -> str:
        var = self._lookup(name)
        if isinstance(var, ScalarArg) and name in self.written:
            return f"{c_name(name)}[0]"
        if isinstance(var, Temporary) and not var.shape and \
                self.address_spaces.get(name) == AddressSpace.GLOBAL:
            return f"{c_name(name)}[0]"       # a one-element buffer
        if var is not None and getattr(var, "shape", None) and not isinstance(var, ScalarArg):
            raise CodegenError(f"array '{name}' used without subscripts")
        return c_name(name)

    def _lookup(self, name):
        try:
            return self.kernel.variable(name)
        except KeyError:
            return None

    def c_subscript(self, name: str, indices) -> str:
        var = self._lookup(name)
        if var is None:
            raise CodegenError(f"unknown array '{name}'")
        if len(indices) != var.ndim:
            raise CodegenError(f"'{name}' has {var.ndim} axes but is indexed with "
                               f"{len(indices)}", None)
        va = vec_axis(var)
        if va is not None:
            axis, n = va
            sub = var.copy(shape=var.shape[:axis] + var.shape[axis + 1:],
                           lower_bounds=var.lower_bounds[:axis] + var.lower_bounds[axis + 1:],
                           axis_tags=tuple(t for k, t in enumerate(var.axis_tags) if k != axis),
                           axis_names=None)
            rest = tuple(i for k, i in enumerate(indices) if k != axis)
            if self.vector_iname is not None and \
                    self.vector_iname in variables_read(indices[axis]):
                # a whole vector: drop the vector axis
                offset = self.linear_offset(sub, rest)
                return f"{self.c_array_name(var)}[{self.printer.rec(offset, 0)}]"
            comp = _constant_component(indices[axis], var.lower_bounds[axis], n) \
                if isinstance(var, ArrayArg) else None
            if comp is not None:
                # one component of a global vector array: read (or write) it as
                # a component of the vector (q[...].s1), not through a float
                # pointer: NVIDIA's compiler then loads the vector once (the
                # paper's level 5 ran 8% faster on an H100, docs PERF.md)
                offset = self.linear_offset(sub, rest)
                return f"{self.c_array_name(var)}[{self.printer.rec(offset, 0)}].s{comp:x}"
            offset = self.linear_offset(var, indices)
            return f"{self.c_array_name(var)}_flat[{self.printer.rec(offset, 0)}]"
        offset = self.linear_offset(var, indices)
        text = self.printer.rec(offset, 0)
        return f"{self.c_array_name(var)}[{text}]"

    def c_array_name(self, var) -> str:
        if isinstance(var, Temporary) and var.read_only and var.initializer is not None:
            return c_name(f"{self.kernel.name}_{var.name}")
        if isinstance(var, Temporary) and var.base_storage:
            return c_name(var.base_storage)
        return c_name(var.name)

    def linear_offset(self, var, indices):
        try:
            return linear_offset(var, indices)
        except LayoutError as exc:
            raise CodegenError(str(exc)) from None

    # }}}

    # {{{ domains and context
    #
    # The context is a parameter-only isl set: the kernel parameters and the
    # inames of the enclosing loops (and of the grid) are all parameters.

    def domain(self, names) -> isl.Set:
        key = tuple(names)
        if key not in self._domains:
            self._domains[key] = combined_domain(self.kernel, list(names))
        return self._domains[key]

    def initial_context(self) -> tuple[list[str], isl.Set]:
        """The parallel inames and the context the kernel body starts in.

        The range of each parallel iname is kept apart
        (:meth:`context_for` adds those of the inames a domain uses); the
        context holds what the ranges imply for the kernel parameters.
        Guards and bounds are computed against a context whose parameters
        are only those that matter, so code generation stays near linear in
        the number of parallel loops."""
        names = [h.iname for h in self.grid.inames]
        ctx = self.kernel.assumptions
        ctx = ctx if ctx.is_params() else ctx.params()
        # the groups along an axis are as many as its longest iname has
        # values: a shorter one (a statement run by group 0 only) is guarded
        longest: dict = {}
        for o in self.grid.inames:
            if o.kind == "g":
                size = o.upper - o.lower + 1
                if o.axis in longest:
                    a, b = align_params(longest[o.axis], size)
                    size = a.max(b)
                longest[o.axis] = size
        self._hw_ranges = {}
        bounds = {}
        for h in self.grid.inames:
            if h.kind == "l" and isinstance(self.grid.local_size[h.axis], (int, np.integer)):
                upper = h.lower + (self.grid.local_size[h.axis] - 1)
            elif h.kind == "l":
                # a run-time work-group size (at least one work-item, also
                # where the loop is empty): base <= iname < base + size
                from f2loopy.ir.isl_tools import make_space
                size = self.grid.local_size[h.axis]
                space = make_space([], sorted(variables_read(h.base) | variables_read(size)))
                base = pwaff_from_expr(h.base, space)
                upper = (base + pwaff_from_expr(size, space) - 1).coalesce()
                self._hw_ranges[h.iname] = range_constraint(h.iname, base, upper, 1)
                bounds[h.iname] = (base, upper)
                continue
            else:
                upper = h.upper
                if sum(o.kind == "g" and o.axis == h.axis for o in self.grid.inames) > 1:
                    lower, top = align_params(h.lower, longest[h.axis])
                    upper = (lower + top - 1).coalesce()
            self._hw_ranges[h.iname] = range_constraint(h.iname, h.lower, upper, 1)
            bounds[h.iname] = (h.lower, upper)
        for name, r in self._hw_ranges.items():
            # (what the range implies only where its bounds are defined: a
            # statement inside the iname runs only there, but the kernel runs
            # everywhere)
            r = _where_defined(r, *bounds[name])
            k = r.find_dim_by_name(dim_type.param, name)
            implied = r.project_out(dim_type.param, k, 1) if k >= 0 else r
            ctx = _intersect_params(ctx, _plain(implied))
        return names, ctx

    def context_for(self, ctx: isl.Set, names) -> isl.Set:
        """*ctx* with the ranges of the parallel inames among *names*."""
        have = set(ctx.get_var_names(dim_type.param))
        for n in names:
            r = self._hw_ranges.get(n)
            if r is not None and n not in have:
                ctx = _intersect_params(ctx, r)
        return ctx

    # }}}

    # {{{ emission

    def emit_line(self, text: str):
        self.lines.append("    " * self.indent + text)

    def emit_body(self):
        names, ctx = self.initial_context()
        for h in self.grid.inames:
            fn = "get_group_id" if h.kind == "g" else "get_local_id"
            # as the left operand of '+': a piecewise base (a ?: expression)
            # is parenthesised
            base = self.printer.rec(normalize_integer(h.base), PREC_ADD)
            value = f"(int) {fn}({h.axis})" if base == "0" else f"{base} + (int) {fn}({h.axis})"
            self.emit_line(f"int const {c_name(h.iname)} = {value};")
        self.emit_nodes(self.schedule, names, ctx)

    def emit_nodes(self, nodes, names, ctx):
        if self.kernel.options.hoist_guards:
            from f2loopy.codegen.guards import guard_runs
            runs = guard_runs(self, list(nodes))
            if runs is not None:
                for run in runs:
                    self.emit_run(run, names, ctx)
                return
        self.emit_plain_nodes(nodes, names, ctx)

    @property
    def hardware_inames(self) -> set:
        return {h.iname for h in self.grid.inames}

    def hoist_info(self):
        if self._hoist is None:
            from f2loopy.codegen.guards import hoist_info
            self._hoist = hoist_info(self.kernel, self.hardware_inames, self.address_spaces)
        return self._hoist

    def emit_run(self, run, names, ctx):
        """The nodes of *run* (:class:`~f2loopy.codegen.guards.Run`) in one
        block under their common condition on the parallel inames."""
        own = tuple(n for n in names if n in run.hardware)
        cond = self._domain_guard(own, ctx) if own else None
        if cond is None or isinstance(cond, (bool, np.bool_)) or \
                (len(run.nodes) == 1 and isinstance(run.nodes[0], InsnNode)):
            self.emit_plain_nodes(run.nodes, names, ctx)
            return
        inner = _intersect_params(self.context_for(ctx, own),
                                  _as_params(self.domain(own), own))
        self.emit_line(f"if ({self.printer.rec(cond, 0)})")
        self.emit_line("{")
        self.indent += 1
        self.emit_plain_nodes(run.nodes, names, inner)
        self.indent -= 1
        self.emit_line("}")

    def emit_plain_nodes(self, nodes, names, ctx):
        k = 0
        nodes = list(nodes)
        chain = None
        while k < len(nodes):
            node = nodes[k]
            if not isinstance(node, LoopNode):
                chain = None
            if isinstance(node, InsnNode):
                # group consecutive instructions under the same condition
                group: list = []
                written: set[str] = set()
                cond = self.insn_condition(self.kernel.insn(node.insn_id), names, ctx)
                while k < len(nodes) and isinstance(nodes[k], InsnNode):
                    insn = self.kernel.insn(nodes[k].insn_id)
                    c = cond if not group else self.insn_condition(insn, names, ctx)
                    if group and (c != cond or
                                  variables_read(*insn.predicates) & written):
                        # (not if an earlier one changes the condition: a flag
                        # that 'exit' or a 'do while' condition sets)
                        break
                    group.append(insn)
                    written.update(insn.assignee_names())
                    k += 1
                self.emit_guarded(cond, group)
                continue
            if isinstance(node, LoopNode):
                chain = self.emit_loop(node, names, ctx, chain=chain)
            elif isinstance(node, BarrierNode):
                fence = "CLK_LOCAL_MEM_FENCE" if node.scope == "local" else \
                    "CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE"
                comment = f" /* {c_comment(node.reason)} */" if node.reason else ""
                self.emit_line(f"barrier({fence});{comment}")
            k += 1

    def emit_guarded(self, cond, insns):
        if cond is None:
            for insn in insns:
                self.emit_instruction(insn)
            return
        self.emit_line(f"if ({cond})")
        if len(insns) == 1:
            self.indent += 1
            self.emit_instruction(insns[0])
            self.indent -= 1
            return
        self.emit_line("{")
        self.indent += 1
        for insn in insns:
            self.emit_instruction(insn)
        self.indent -= 1
        self.emit_line("}")

    def insn_condition(self, insn, names, ctx) -> str | None:
        conds = []
        guard = self.domain_guard(insn, names, ctx)
        if guard is not None:
            conds.append(guard)
        conds.extend(insn.predicates)
        if not conds:
            return None
        cond = conds[0] if len(conds) == 1 else p.LogicalAnd(tuple(conds))
        return self.printer.rec(cond, 0)

    def domain_guard(self, insn, names, ctx):
        """The condition (pymbolic) under which *insn* must run in addition to
        what the enclosing loops guarantee, or None."""
        missing = set(insn.within_inames) - set(names)
        if missing:
            raise CodegenError(f"instruction '{insn.id}' scheduled outside its loop(s) "
                               f"{', '.join(sorted(missing))}", insn.span)
        own = tuple(n for n in names if n in insn.within_inames)
        key = (id(ctx), own)
        hit = self._guards.get(key)
        if hit is not None and hit[0] is ctx:
            return hit[1]
        guard = self._domain_guard(own, ctx)
        self._guards[key] = (ctx, guard)     # (ctx kept alive: its id stays unique)
        return guard

    def _domain_guard(self, own, ctx):
        dom = _as_params(self.domain(own), own)
        dom, c = align_params(dom, self.context_for(ctx, own))
        if (dom & c).is_empty():
            return np.bool_(False)
        g = dom.gist(c)
        if g.plain_is_universe():
            return None
        cond = expr_from_set(g, c)
        if cond is True:
            return None
        return _normalize_condition(cond)

    def emit_instruction(self, insn):
        if isinstance(insn, Assignment) and isinstance(insn.expression, p.Call) and \
                getattr(insn.expression.function, "name", None) == "f2l_print":
            # list-directed output (f2loopy.ir.prints)
            from f2loopy.codegen.prints import printf_call
            self.emit_line(printf_call(self, insn.expression.parameters))
            return
        if isinstance(insn, Assignment) and isinstance(insn.expression, p.Call) and \
                getattr(insn.expression.function, "name", None) == "f2l_raise":
            # an error site: the first one reached, in any work-item, is recorded
            site, *values = insn.expression.parameters
            self.emit_line(f"if (atomic_cmpxchg(&{ERROR_BUFFER}[0], 0, {int(site)}) == 0)")
            self.emit_line("{")
            self.indent += 1
            for k, v in enumerate(values):
                self.emit_line(f"{ERROR_BUFFER}[{k + 1}] = {self.printer(v, np.dtype(np.int32))};")
            self.indent -= 1
            self.emit_line("}")
            return
        if isinstance(insn, Assignment):
            lhs = self.printer(insn.assignee)
            lhs_dtype = self.dtype_of(insn.assignee)
            rhs = assigned_constant(insn.expression, lhs_dtype) or \
                self.printer(insn.expression, lhs_dtype)
            if insn.atomic:
                raise CodegenError("atomic updates are not supported yet", insn.span)
            self.emit_line(f"{lhs} = {rhs};")
        elif isinstance(insn, BarrierInstruction):
            fence = "CLK_LOCAL_MEM_FENCE" if insn.scope == "local" else \
                "CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE"
            self.emit_line(f"barrier({fence});")
        elif isinstance(insn, NoOpInstruction):
            pass
        else:
            raise CodegenError(f"cannot generate code for instruction {insn.id}", insn.span)

    def emit_loop(self, node: LoopNode, names, ctx, *, chain=None):
        """*chain*: what the loop just before returned (None if something
        else came between).  A test of a temporary's values (as
        :func:`~f2loopy.transform.block_versioning.version_blocks` makes)
        that shares no value with the chain's tests, whose variables the
        chain's loops do not write, continues it as ``else if``.  Returns
        ``(the chain's tests, what its loops write)`` after such a test."""
        iname = node.iname
        tag = self.kernel.iname_tag(iname)
        # only the loops this one's bounds depend on (or share a domain with)
        # constrain it: the loop runs for every value of the others.  Of the
        # work-item's parallel inames, only those its body runs in count: a
        # fetch loop on l.0 beside a statement of another l.0 iname must run
        # in the lanes outside that iname's range too
        related = set(iname_closure(self.kernel, [iname])) & self.body_inames(node)
        outer = [n for n in names if n in related]
        dom = _as_params(self.domain(outer + [iname]), outer)
        ctx = self.context_for(ctx, outer)
        self.check_complexity(node, dom, ctx)
        dom, c = align_params(dom, ctx)
        dom = dom.intersect_params(c)
        if dom.is_empty():
            self.emit_line(f"/* the loop over '{c_comment(iname)}' never runs */")
            return
        lower = dom.dim_min(0).coalesce()
        upper = dom.dim_max(0).coalesce()
        stride = _stride(dom, 0)
        inner_names = names + [iname]
        runs = self.loop_guard(dom, c, lower, upper)
        after = None
        if runs is not None:
            cond = _normalize_condition(expr_from_set(runs, c))
            word = "if"
            params = set(runs.get_var_names(dim_type.param))
            if params & set(self.kernel.temporaries):
                written = {n for i in self.body_insns(node) for n in i.assignee_names()}
                if chain is not None:
                    tests, earlier = chain
                    tests, mine = align_params(tests, runs)
                    if (tests & mine).is_empty() and not params & earlier:
                        word = "else if"
                        after = (tests | mine, earlier | written)
                if after is None:
                    after = (runs, written)
            self.emit_line(f"{word} ({self.printer.rec(cond, 0)})")
            self.emit_line("{")
            self.indent += 1
            ctx = _intersect_params(ctx, runs)
        if isinstance(tag, (UnrollTag, VectorizeTag)) or \
                (isinstance(tag, ILPTag) and tag.unrolled):
            self.emit_unrolled(node, inner_names, ctx, lower, upper, stride)
        elif stride == 1 and self.kernel.iname_slabs.get(iname, (0, 0)) != (0, 0) \
                and not tag.hardware:
            self.emit_slabs(node, inner_names, ctx, lower, upper,
                            self.kernel.iname_slabs[iname])
        else:
            self.emit_for(node, inner_names, ctx, lower, upper, stride)
        if runs is not None:
            self.indent -= 1
            self.emit_line("}")
        return after

    def check_complexity(self, node, dom, ctx) -> None:
        """Refuse a loop whose domain or context has grown beyond what isl
        handles in reasonable time (nested '/' and 'mod' bounds multiply
        integer divisions): a located error (at the first statement in the
        loop), before the expensive work."""
        why = set_too_complex(ctx) or set_too_complex(dom)
        if why is None:
            return
        span = self.kernel.span
        stack = list(node.body)
        while stack:
            n = stack.pop(0)
            if isinstance(n, InsnNode):
                span = self.kernel.insn(n.insn_id).span or span
                break
            if isinstance(n, LoopNode):
                stack[:0] = n.body
        raise CodegenError(f"the bounds of loop '{c_comment(node.iname)}' and the loops around "
                           f"it are too complex to generate code for: {why}; simplify the "
                           "'/' and 'mod' in its bounds", span)

    def body_inames(self, node) -> set:
        """The inames the instructions inside loop *node* run in."""
        key = id(node)
        hit = self._body_inames.get(key)
        if hit is None:
            hit = {x for i in self.body_insns(node) for x in i.within_inames}
            self._body_inames[key] = hit
        return hit

    def body_insns(self, node) -> list:
        """The instructions inside loop *node*."""
        out, stack = [], list(node.body)
        while stack:
            n = stack.pop()
            if isinstance(n, InsnNode):
                out.append(self.kernel.insn(n.insn_id))
            elif isinstance(n, LoopNode):
                stack.extend(n.body)
        return out

    def loop_guard(self, dom, ctx, lower, upper):
        """The outer values (a parameter set) for which a loop over *dom*
        runs, if the loop needs a guard: its bounds *lower* and *upper*, as
        printed, are exact where the loop runs but may describe a non-empty
        range elsewhere in *ctx* (the loop ``i2 = i1 + 4*i1_o, 2`` printed
        knowing that it only runs for ``i1_o = 0``); None if the printed
        bounds are empty wherever the loop must not run."""
        runs = dom.params()
        runs, ctx = align_params(runs, ctx)
        outside = ctx.subtract(runs)
        if outside.is_empty():
            return None
        try:
            space = outside.get_space()
            lo = pwaff_from_expr(normalize_integer(expr_from_pwaff(lower, ctx)), space)
            hi = pwaff_from_expr(normalize_integer(expr_from_pwaff(upper, ctx)), space)
            lo, hi, outside = align_params(lo, hi, outside)
            if (lo.le_set(hi) & outside).is_empty():
                return None
        except (NonAffineError, isl.Error):
            pass
        return runs

    def emit_for(self, node, inner_names, ctx, lower, upper, stride=1):
        iname = node.iname
        lo_text = self.printer(normalize_integer(expr_from_pwaff(lower, ctx)))
        hi_text = self.printer.rec(normalize_integer(expr_from_pwaff(upper, ctx)), PREC_REL + 1)
        var = c_name(iname)
        step = "++" + var if stride == 1 else f"{var} += {stride}"
        until = ""
        ex = self.kernel.loop_exits.get(iname)
        if ex is not None and not self.kernel.iname_tag(iname).hardware:
            # the loop stops once a flag ending it is set (do while, exit...)
            until = "".join(f" && !{self.c_variable(f)}" for f in ex.flags)
        inner_ctx = _intersect_params(ctx, range_constraint(iname, lower, upper, stride))
        once = lo_text == self.printer(normalize_integer(expr_from_pwaff(upper, ctx)))
        if once and not until and not self.kernel.iname_tag(iname).hardware:
            # one iteration: a block with the index fixed, not a loop (a
            # guarded level loop merged into another, the last level of a
            # loop one level longer), which compilers need not unroll
            self.emit_line("{")
            self.indent += 1
            self.emit_line(f"int const {var} = {lo_text};")
            self.emit_nodes(node.body, inner_names, inner_ctx)
            self.indent -= 1
            self.emit_line("}")
            return
        self.emit_line(f"for (int {var} = {lo_text}; {var} <= {hi_text}{until}; {step})")
        self.emit_block(node.body, inner_names, inner_ctx)

    def emit_slabs(self, node, inner_names, ctx, lower, upper, slabs):
        """The loop as up to three loops: its first ``slabs[0]`` iterations,
        the middle, its last ``slabs[1]`` iterations; each body is generated
        knowing its range, so guards that only the ends need vanish from the
        middle."""
        first, last = slabs

        def plus(pw, k):
            return pw.add(pw.sub(pw).add_constant_val(isl.Val.int_from_si(pw.get_ctx(), k))) \
                if k else pw
        mid_lo, mid_hi = plus(lower, first), plus(upper, -last)
        pieces = []
        if first:
            pieces.append((lower, plus(lower, first - 1).min(upper)))
        pieces.append((mid_lo, mid_hi))
        if last:
            pieces.append((plus(upper, 1 - last).max(mid_lo), upper))
        for lo, hi in pieces:
            lo, hi = lo.coalesce(), hi.coalesce()
            lo, hi = align_params(lo, hi)
            cond = lo.le_set(hi)
            runs = _intersect_params(ctx, cond if cond.is_params() else cond.params())
            if runs.is_empty():
                continue
            self.emit_for(node, inner_names, ctx, lo, hi)

    def emit_block(self, body, names, ctx):
        self.emit_line("{")
        self.indent += 1
        self.emit_nodes(body, names, ctx)
        self.indent -= 1
        self.emit_line("}")

    def emit_unrolled(self, node, names, ctx, lower, upper, stride):
        iname = node.iname
        lo, hi = _const_range(lower, upper)
        if lo is None:
            raise CodegenError(f"cannot unroll loop '{iname}': its length is not a constant "
                               "(split it first)", self.kernel.span)
        if isinstance(self.kernel.iname_tag(iname), VectorizeTag) and stride == 1 and \
                self.emit_vectorized(node, names, ctx, lo, hi, lower, upper):
            return
        in_range = range_constraint(iname, lower, upper, stride)
        for value in range(lo, hi + 1, stride):
            fixed = _intersect_params(ctx, _fixed_value(iname, value))
            if fixed.is_empty():
                continue
            # the copy for this value only runs where the loop's bounds (which
            # may depend on outer loops and parameters) include it: nested
            # loops have no guard of their own that would say so
            valid = _intersect_params(fixed, in_range)
            if valid.is_empty():
                continue
            guard = None
            g = valid.gist(fixed)
            if not g.plain_is_universe():
                cond = expr_from_set(g, fixed)
                if cond is not True:
                    guard = self.printer.rec(_normalize_condition(cond), 0)
            self.emit_line("{")
            self.indent += 1
            self.emit_line(f"int const {c_name(iname)} = {value};")
            if guard is not None:
                self.emit_line(f"if ({guard})")
                self.emit_block(node.body, names, valid)
            else:
                self.emit_nodes(node.body, names, valid)
            self.indent -= 1
            self.emit_line("}")

    def emit_vectorized(self, node, names, ctx, lo, hi, lower, upper) -> bool:
        """Emit the body of vec loop *node* as vector statements, if every
        instruction in it allows that; else leave it to unrolling."""
        iname = node.iname
        length = hi - lo + 1
        if not all(isinstance(n, InsnNode) for n in node.body):
            return False
        insns = [self.kernel.insn(n.insn_id) for n in node.body]
        if not all(vectorizable(self.kernel, i, iname, length, lo, self.dtype_of)
                   for i in insns):
            return False
        inner = names                      # already includes the vec iname
        full = _intersect_params(ctx, range_constraint(iname, lower, upper, 1))
        conds = [self.insn_condition(i, inner, full) for i in insns]
        if any(c is not None and c.find(c_name(iname)) >= 0 for c in conds):
            return False
        self.vector_iname = iname
        self.printer.vector_width = length
        try:
            for insn, cond in zip(insns, conds, strict=True):
                self.emit_guarded(cond, [insn])
        finally:
            self.vector_iname = None
            self.printer.vector_width = None
        return True

    # }}}


def _normalize_condition(cond):
    """Simplify the integer parts of an isl-produced condition."""
    if isinstance(cond, p.Comparison):
        return p.Comparison(normalize_integer(cond.left), cond.operator,
                            normalize_integer(cond.right))
    if isinstance(cond, (p.LogicalAnd, p.LogicalOr)):
        return type(cond)(tuple(_normalize_condition(c) for c in cond.children))
    return cond


def _as_params(s: isl.Set, names) -> isl.Set:
    """Move the set dimensions *names* to parameters (a parameter set if no
    set dimension is left)."""
    s = set_to_params(s, names)
    return s.params() if s.dim(dim_type.set) == 0 else s


def _where_defined(r: isl.Set, lower, upper) -> isl.Set:
    """The range *r* of a hardware iname (a parameter set), or anything where
    its bounds *lower*/*upper* are not defined.  A bound defined only on some
    parameters (the base of a loop over ``1..KIDIA-1``, defined where
    ``KIDIA >= 2``) does not make the kernel run only there: the work-items
    exist for every value, and a context holding ``KIDIA >= 2`` would let
    guards drop conditions that are needed when ``KIDIA = 1``."""
    defined = None
    for pw in (lower, upper):
        d = pw.domain()
        d = d if d.is_params() else d.params()
        defined = d if defined is None else _intersect_params(defined, d)
    if defined is None or defined.plain_is_universe():
        return r
    outside = defined.complement()
    if outside.is_empty():
        return r
    r, outside = align_params(r, outside)
    return (r | outside).coalesce()


def _plain(s: isl.Set) -> isl.Set:
    """*s*, or where it needs integer divisions or several pieces (what the
    ranges of work-group inames of different lengths on one axis imply for
    the parameters: ``max`` of rounded-up quotients), the smallest set
    without them that contains it.  A larger context only makes guards and
    bounds valid in more cases (never wrong); a context with many pieces
    and divisions made every guard's isl work slow (CLOUDSC: about a minute
    of code generation)."""
    if s.n_basic_set() <= 1 and all(b.dim(dim_type.div) == 0 for b in s.get_basic_sets()):
        return s
    s = s.remove_divs().coalesce()
    return s if s.n_basic_set() <= 1 else isl.Set.from_basic_set(s.convex_hull())


def _intersect_params(ctx: isl.Set, cons: isl.Set) -> isl.Set:
    ctx, cons = align_params(ctx, cons)
    return ctx & cons


def _fixed_value(name: str, value: int) -> isl.Set:
    return isl.Set(f"[{name}] -> {{ : {name} = {value} }}")


def _stride(dom: isl.Set, pos: int) -> int:
    try:
        s = int(dom.get_stride(pos).to_python())
    except (AttributeError, isl.Error):
        return 1
    return s if s > 1 else 1


def _const_range(lower, upper):
    try:
        lo = lower.min_val()
        hi = upper.max_val()
    except isl.Error:
        return None, None
    for v in (lo, hi):
        if v.is_infty() or v.is_neginfty() or v.is_nan():
            return None, None
    return int(lo.to_python()), int(hi.to_python())


def _constant_component(index, lower_bound, n: int) -> int | None:
    """The vector component *index* selects, if it is a constant in range."""
    from f2loopy.ir.folding import NotConstant, evaluate_constant
    try:
        value = evaluate_constant(index - lower_bound if lower_bound else index)
    except (NotConstant, TypeError, ValueError):
        return None
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        return None
    value = int(value)
    return value if 0 <= value < n else None
