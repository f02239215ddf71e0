"""Lowering the executable statements of one subroutine to the kernel IR.

Statements become :class:`~f2loopy.ir.kernel.Assignment` s in program order;
``do`` loops become loop domains (one per loop, with a fresh iname); ``if``
constructs become predicates on the instructions inside.  Dependencies are
added afterwards from program order (:mod:`f2loopy.analysis.dependences`).
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.analysis.types import (
    BOOL, INT32, FortranTypeError, infer_type, is_complex, is_integer, is_logical)
from f2loopy.diagnostics import FortranError, SourceSpan, UnsupportedFeatureError
from f2loopy.frontend.declarations import statement_lines
from f2loopy.frontend.expressions import ConversionContext, ExpressionConverter
from f2loopy.frontend.symbols import Symbol, SymbolTable
from f2loopy.ir.expressions import is_constant, variables_read
from f2loopy.ir.folding import NotConstant, _cast, evaluate_constant, fold_constants
from f2loopy.ir.isl_tools import NonAffineError, make_space, pwaff_from_expr
from f2loopy.ir.kernel import Assignment, Temporary

_UNSUPPORTED_STATEMENTS = {
    "Print_Stmt": "'print' statements are not supported (kernels cannot do I/O)",
    "Write_Stmt": "'write' statements are not supported (kernels cannot do I/O)",
    "Read_Stmt": "'read' statements are not supported (kernels cannot do I/O)",
    "Open_Stmt": "'open' statements are not supported (kernels cannot do I/O)",
    "Close_Stmt": "'close' statements are not supported (kernels cannot do I/O)",
    "Format_Stmt": "'format' statements are not supported (kernels cannot do I/O)",
    "Goto_Stmt": "'goto' is not supported (use structured loops and if blocks)",
    "Computed_Goto_Stmt": "computed 'goto' is not supported",
    "Arithmetic_If_Stmt": "arithmetic 'if' is not supported (use if/else)",
    "Exit_Stmt": "'exit' is not supported (loop trip counts must be known on entry)",
    "Stop_Stmt": "'stop' is not supported in a kernel",
    "Error_Stop_Stmt": "'error stop' is not supported in a kernel",
    "Allocate_Stmt": "'allocate' is not supported (kernels cannot allocate memory)",
    "Deallocate_Stmt": "'deallocate' is not supported (kernels cannot allocate memory)",
    "Pointer_Assignment_Stmt": "pointer assignment is not supported",
    "Where_Construct": "'where' constructs are not supported",
    "Where_Stmt": "'where' statements are not supported",
    "Forall_Construct": "'forall' constructs are not supported (use 'do concurrent')",
    "Forall_Stmt": "'forall' statements are not supported (use 'do concurrent')",
    "Associate_Construct": "'associate' constructs are not supported",
    "Block_Construct": "'block' constructs are not supported",
    "Entry_Stmt": "'entry' statements are not supported",
    "Nullify_Stmt": "'nullify' is not supported",
    "Inquire_Stmt": "'inquire' is not supported",
    "Backspace_Stmt": "'backspace' is not supported",
    "Rewind_Stmt": "'rewind' is not supported",
    "Endfile_Stmt": "'endfile' is not supported",
    "Pause_Stmt": "'pause' is not supported",
    "Assign_Stmt": "'assign' is not supported",
    "Assigned_Goto_Stmt": "assigned 'goto' is not supported",
}


@dataclass
class LoopScope:
    var: str          # lower-case Fortran variable name
    iname: str


class UnitLowering:
    """Build the instructions, domains and temporaries of one subroutine.

    :arg written: lower-case names assigned anywhere in the unit (so that a
        scalar argument nobody writes can serve as a loop-bound parameter).
    """

    def __init__(self, src, symtab: SymbolTable, dummy_names: list[str], written: set[str],
                 do_variables: set[str]):
        self.src = src
        self.symtab = symtab
        self.dummies = [d.lower() for d in dummy_names]
        self.written = written
        self.do_variables = do_variables
        self.instructions: list[Assignment] = []
        self.domains: list[isl.Set] = []
        self.loops: list[LoopScope] = []
        self.predicates: list = []
        self.extra_temporaries: dict[str, Temporary] = {}
        self.used: set[str] = set()           # lower-case names of variables used
        self.taken_names: set[str] = {s.name.lower() for s in symtab.symbols()}
        self.insn_ids: set[str] = set()
        self.claimed_inames: set[str] = set()
        self.lines = (0, 0)

    # {{{ utilities

    def error(self, message, needle=None, cls=FortranError):
        first, last = self.lines
        return cls(message, self.src.span_in_lines(first, last, needle))

    def statement_span(self) -> SourceSpan:
        return self.src.span(self.lines[0])

    def fresh_name(self, base: str) -> str:
        name, k = base, 0
        while name.lower() in self.taken_names:
            k += 1
            name = f"{base}_{k}"
        self.taken_names.add(name.lower())
        return name

    def fresh_id(self, base: str) -> str:
        name, k = base, 0
        while name in self.insn_ids:
            k += 1
            name = f"{base}_{k}"
        self.insn_ids.add(name)
        return name

    def symbol(self, name: str) -> Symbol:
        sym = self.symtab.get(name)
        if sym is None:
            dtype = self.symtab.implicit_type(name)
            if dtype is None:
                raise self.error(f"'{name}' has no type (implicit none is in effect; "
                                 "declare it)", name)
            sym = self.symtab.declare(name, self.src.span_in_lines(*self.lines, name))
            sym.dtype = dtype
        if sym.dtype is None:
            sym.dtype = self.symtab.implicit_type(sym.name)
            if sym.dtype is None:
                raise self.error(f"'{sym.name}' has no type (implicit none is in effect; "
                                 "declare it)", name)
        return sym

    def var_dtype(self, name: str) -> np.dtype:
        for scope in self.loops:
            if scope.iname == name:
                return INT32
        if name in self.extra_temporaries:
            return self.extra_temporaries[name].dtype
        return self.symbol(name).dtype

    def dtype_of(self, expr) -> np.dtype:
        return infer_type(expr, self.var_dtype)

    def current_inames(self) -> frozenset:
        return frozenset(s.iname for s in self.loops)

    def loop_for(self, var: str) -> LoopScope | None:
        for scope in reversed(self.loops):
            if scope.var == var.lower():
                return scope
        return None

    def is_invariant_param(self, name: str) -> bool:
        """A scalar dummy argument the kernel never writes."""
        low = name.lower()
        sym = self.symtab.get(name)
        return (low in self.dummies and low not in self.written and sym is not None
                and not sym.is_array and not sym.is_parameter)

    # }}}

    # {{{ expressions

    def converter(self) -> ExpressionConverter:
        ctx = ConversionContext(
            error=self.error, resolve_name=self.resolve_name, array_ref=self.array_ref,
            function_call=self.function_call, dtype_of=self.checked_dtype,
            kind_value=self.kind_value, array_intrinsic=self.array_intrinsic)
        return ExpressionConverter(ctx)

    def checked_dtype(self, expr):
        try:
            return self.dtype_of(expr)
        except FortranTypeError as exc:
            raise self.error(str(exc)) from None

    def kind_value(self, node) -> int:
        value = self.constant(node)
        if value.dtype.kind not in "iu":
            raise self.error("kind must be an integer constant", str(node))
        return int(value)

    def constant(self, node):
        expr = self.converter()(node)
        try:
            return evaluate_constant(expr)
        except (NotConstant, FortranTypeError):
            raise self.error(f"'{node}' is not a constant", str(node)) from None

    def expr(self, node):
        return fold_constants(self.converter()(node))

    def resolve_name(self, name: str, node):
        scope = self.loop_for(name)
        if scope is not None:
            return p.Variable(scope.iname)
        if name.lower() in self.do_variables:
            raise self.error(f"the value of loop variable '{name}' outside its loop is not "
                             "supported", name, UnsupportedFeatureError)
        sym = self.symbol(name)
        if sym.is_parameter:
            if isinstance(sym.value, np.ndarray):
                raise self.error(f"whole-array use of '{name}' is not supported here", name,
                                 UnsupportedFeatureError)
            return sym.value
        if sym.is_array:
            raise self.error(f"whole-array use of '{name}' is not supported here (write an "
                             "explicit loop or index it)", name, UnsupportedFeatureError)
        self.used.add(sym.name.lower())
        return p.Variable(sym.name)

    def array_ref(self, name: str, index_nodes, node):
        sym = self.symtab.get(name)
        if sym is None or not sym.is_array:
            return None
        if len(index_nodes) != len(sym.dims):
            raise self.error(f"'{sym.name}' has {len(sym.dims)} dimension(s) but "
                             f"{len(index_nodes)} subscript(s) are given", name)
        conv = self.converter()
        indices = []
        for inode in index_nodes:
            if isinstance(inode, F.Subscript_Triplet):
                return self.section_ref(sym, index_nodes, node)
            idx = fold_constants(conv(inode))
            dt = self.checked_dtype(idx)
            if not is_integer(dt):
                raise self.error(f"subscript of '{sym.name}' must be an integer", str(inode))
            indices.append(idx)
        if sym.is_parameter:
            return self.constant_table_ref(sym, indices)
        self.used.add(sym.name.lower())
        return p.Subscript(p.Variable(sym.name),
                           tuple(indices) if len(indices) != 1 else indices[0])

    def constant_table_ref(self, sym: Symbol, indices):
        self.used.add(sym.name.lower())
        return p.Subscript(p.Variable(sym.name),
                           tuple(indices) if len(indices) != 1 else indices[0])

    def section_ref(self, sym, index_nodes, node):
        raise self.error(f"array section of '{sym.name}' is not supported here", sym.name,
                         UnsupportedFeatureError)

    def function_call(self, name, arg_nodes, node):
        return None

    def array_intrinsic(self, name, arg_nodes, node):
        raise self.error(f"array intrinsic '{name}' is not supported here", name,
                         UnsupportedFeatureError)

    # }}}

    # {{{ statements

    def lower_block(self, nodes) -> None:
        nodes = [n for n in nodes if n is not None]
        for k, node in enumerate(nodes):
            self.lower_statement(node, is_last=(k == len(nodes) - 1))

    def lower_statement(self, node, is_last=False) -> None:
        saved = self.lines
        lines = statement_lines(node)
        if lines != (0, 0):
            self.lines = lines
        try:
            name = type(node).__name__
            method = getattr(self, "stmt_" + name, None)
            if method is not None:
                if name == "Return_Stmt":
                    method(node, is_last)
                else:
                    method(node)
                return
            message = _UNSUPPORTED_STATEMENTS.get(name)
            if message is None:
                keyword = str(node).strip().split("(")[0].split()[0].lower() \
                    if str(node).strip() else name
                message = f"'{keyword}' statements are not supported"
                needle = keyword
            else:
                needle = str(node).strip().split("(")[0].split()[0].lower() \
                    if str(node).strip() else None
            raise self.error(message, needle, UnsupportedFeatureError)
        finally:
            self.lines = saved

    def stmt_Continue_Stmt(self, node):
        pass

    def stmt_Return_Stmt(self, node, is_last):
        if not is_last or self.loops or self.predicates:
            raise self.error("'return' is only supported as the last statement",
                             "return", UnsupportedFeatureError)

    def stmt_Assignment_Stmt(self, node):
        lhs_node, _, rhs_node = node.items
        assignee, lhs_dtype = self.lower_assignee(lhs_node)
        rhs = self.expr(rhs_node)
        self.add_assignment(assignee, lhs_dtype, rhs, str(lhs_node))

    def lower_assignee(self, lhs_node):
        if isinstance(lhs_node, F.Name):
            name = str(lhs_node)
            if self.loop_for(name) is not None:
                raise self.error(f"loop variable '{name}' cannot be assigned inside its "
                                 "loop", name)
            sym = self.symbol(name)
            if sym.is_parameter:
                raise self.error(f"cannot assign to parameter '{sym.name}'", name)
            if sym.is_array:
                return self.whole_array_assignee(sym)
            if name.lower() in self.do_variables:
                raise self.error(f"assigning loop variable '{name}' outside its loop is not "
                                 "supported", name, UnsupportedFeatureError)
            self.used.add(sym.name.lower())
            return p.Variable(sym.name), sym.dtype
        if isinstance(lhs_node, F.Part_Ref):
            name = str(lhs_node.items[0])
            sym = self.symtab.get(name)
            if sym is None or not sym.is_array:
                raise self.error(f"'{name}' is not an array", name)
            if sym.is_parameter:
                raise self.error(f"cannot assign to parameter '{sym.name}'", name)
            ref = self.array_ref(name, list(lhs_node.items[1].items), lhs_node)
            return ref, sym.dtype
        raise self.error(f"unsupported assignment target '{lhs_node}'", str(lhs_node),
                         UnsupportedFeatureError)

    def whole_array_assignee(self, sym):
        raise self.error(f"whole-array assignment to '{sym.name}' is not supported",
                         sym.name, UnsupportedFeatureError)

    def convert_for_assignment(self, rhs, lhs_dtype, needle):
        rhs_dtype = self.checked_dtype(rhs)
        if rhs_dtype == lhs_dtype:
            return rhs
        if is_logical(lhs_dtype) != is_logical(rhs_dtype):
            raise self.error("cannot assign a logical value to a numeric variable or vice "
                             "versa", needle)
        if is_complex(rhs_dtype) and not is_complex(lhs_dtype):
            rhs = p.Call(p.Variable("realpart"), (rhs,))
        if is_constant(rhs):
            return _cast(rhs, lhs_dtype)
        return p.Call(p.Variable(np.dtype(lhs_dtype).name), (rhs,))

    def add_assignment(self, assignee, lhs_dtype, rhs, needle, *, base_id=None,
                       predicates=None):
        rhs = self.convert_for_assignment(rhs, lhs_dtype, needle)
        if base_id is None:
            base_id = (assignee.aggregate.name if isinstance(assignee, p.Subscript)
                       else assignee.name)
        insn = Assignment(
            id=self.fresh_id(base_id),
            assignee=assignee,
            expression=rhs,
            within_inames=self.current_inames(),
            tags=self.src.tags_at(self.lines[0]),
            predicates=tuple(self.predicates if predicates is None else predicates),
            span=self.src.span_in_lines(*self.lines, needle),
        )
        self.instructions.append(insn)
        return insn

    # {{{ do loops

    def stmt_Block_Nonlabel_Do_Construct(self, node):
        content = node.content
        self.lower_do(content[0], content[1:-1])

    def stmt_Block_Label_Do_Construct(self, node):
        content = list(node.content)
        # fparser flattens loops that share a terminal label into one construct
        heads = []
        while content and isinstance(content[0], F.Label_Do_Stmt):
            heads.append(content.pop(0))
        body = content   # the terminal labelled statement is part of the body
        self._lower_label_do(heads, body)

    def _lower_label_do(self, heads, body):
        if len(heads) == 1:
            self.lower_do(heads[0], body)
        else:
            self.lower_do(heads[0], [_NestedLabelDo(heads[1:], body)])

    def stmt__NestedLabelDo(self, node):
        self._lower_label_do(node.heads, node.body)

    def lower_do(self, do_stmt, body):
        saved = self.lines
        self.lines = statement_lines(do_stmt)
        control = do_stmt.items[-1] if isinstance(do_stmt, F.Label_Do_Stmt) else do_stmt.items[1]
        if control is None:
            raise self.error("'do' without a loop control (an endless loop) is not "
                             "supported", "do", UnsupportedFeatureError)
        cond, var_bounds, _, concurrent = control.items
        if cond is not None:
            raise self.error("'do while' loops are not supported (loop bounds must be known "
                             "on entry)", "do while", UnsupportedFeatureError)
        if concurrent is not None:
            headers = self.concurrent_headers(concurrent)
        else:
            var_node, bound_nodes = var_bounds
            headers = [(str(var_node), *bound_nodes, *([None] * (3 - len(bound_nodes))))]
        opened = []
        for var, lo_node, hi_node, step_node in headers:
            opened.append(self.open_loop(var, lo_node, hi_node, step_node))
        self.lines = saved
        self.lower_block(body)
        for _ in opened:
            self.loops.pop()

    def concurrent_headers(self, header):
        raise self.error("'do concurrent' is not supported yet", "concurrent",
                         UnsupportedFeatureError)

    def open_loop(self, var: str, lo_node, hi_node, step_node) -> LoopScope:
        sym = self.symbol(var)
        if sym.is_array or sym.is_parameter or not is_integer(sym.dtype):
            raise self.error(f"loop variable '{var}' must be an integer scalar variable", var)
        if self.loop_for(var) is not None:
            raise self.error(f"loop variable '{var}' is already the variable of an "
                             "enclosing loop", var)
        lo, hi = self.expr(lo_node), self.expr(hi_node)
        step = 1
        if step_node is not None:
            try:
                step = int(evaluate_constant(self.expr(step_node)))
            except NotConstant:
                raise self.error("loop step must be a constant", str(step_node),
                                 UnsupportedFeatureError) from None
            if step == 0:
                raise self.error("loop step is zero", str(step_node))
        for bound, node in ((lo, lo_node), (hi, hi_node)):
            if not is_integer(self.checked_dtype(bound)):
                raise self.error("loop bounds must be integers", str(node),
                                 UnsupportedFeatureError)
        if sym.name.lower() in self.claimed_inames:
            iname = self.fresh_name(sym.name)
        else:
            iname = sym.name
        self.claimed_inames.add(iname.lower())
        if step < 0:
            raise self.error("negative loop steps are not supported yet", str(step_node),
                             UnsupportedFeatureError)
        lo_p = self.bound_parameter(iname, "lbound", lo)
        hi_p = self.bound_parameter(iname, "ubound", hi)
        self.domains.append(self.make_domain(iname, lo_p, hi_p, step))
        scope = LoopScope(sym.name.lower(), iname)
        self.loops.append(scope)
        return scope

    def bound_parameter(self, iname: str, which: str, expr):
        """*expr* if it can be part of the loop domain (affine in invariant scalar
        arguments and enclosing inames), else a temporary holding its value."""
        names = variables_read(expr)
        outer = self.current_inames()
        if all(n in outer or self.is_invariant_param(n) for n in names):
            try:
                self.to_pwaff(expr, iname)
                for n in names:
                    if n not in outer:
                        self.used.add(n.lower())
                return expr
            except NonAffineError:
                pass
        tmp = self.fresh_name(f"{iname}_{which}")
        self.extra_temporaries[tmp] = Temporary(name=tmp, dtype=INT32, span=self.statement_span())
        self.add_assignment(p.Variable(tmp), INT32, expr, None, base_id=tmp)
        return p.Variable(tmp)

    def to_pwaff(self, expr, iname):
        names = sorted(variables_read(expr))
        space = make_space([iname], names)
        return pwaff_from_expr(expr, space)

    def make_domain(self, iname: str, lo, hi, step: int) -> isl.Set:
        names = sorted(variables_read(lo) | variables_read(hi))
        space = make_space([iname], names)
        i = isl.PwAff.var_on_domain(isl.LocalSpace.from_space(space), isl.dim_type.set, 0)
        lo_a, hi_a = pwaff_from_expr(lo, space), pwaff_from_expr(hi, space)
        dom = i.ge_set(lo_a) & i.le_set(hi_a)
        if step != 1:
            # i = lo + step*t for some t >= 0
            zero = i.sub(i)
            dom = dom & (i - lo_a).mod_val(isl.Val.int_from_si(space.get_ctx(), step)) \
                .eq_set(zero)
        return dom.coalesce()

    # }}}

    # {{{ if

    def stmt_If_Stmt(self, node):
        cond_node, action = node.items
        cond = self.condition(cond_node)
        start = len(self.instructions)
        self.with_predicate(cond, lambda: self.lower_statement(action))
        self.snapshot_conditions(start, [(cond, None)])

    def condition(self, node):
        cond = self.expr(node)
        if not is_logical(self.checked_dtype(cond)):
            raise self.error("condition is not logical", str(node))
        return cond

    def with_predicate(self, cond, body):
        if is_constant(cond):
            if bool(cond):
                body()
            else:
                # statements in a never-taken branch are still checked, then dropped
                n = len(self.instructions)
                body()
                del self.instructions[n:]
            return
        self.predicates.append(cond)
        try:
            body()
        finally:
            self.predicates.pop()

    def stmt_If_Construct(self, node):
        content = list(node.content)
        branches = []        # (condition node or None, [statements], lines)
        current = None
        for ch in content:
            if isinstance(ch, (F.If_Then_Stmt, F.Else_If_Stmt)):
                current = [ch.items[0], [], statement_lines(ch)]
                branches.append(current)
            elif isinstance(ch, F.Else_Stmt):
                current = [None, [], statement_lines(ch)]
                branches.append(current)
            elif isinstance(ch, F.End_If_Stmt):
                pass
            else:
                current[1].append(ch)
        start = len(self.instructions)
        taken = []           # earlier conditions, all false for the next branch
        conds = []
        for cond_node, body, lines in branches:
            saved = self.lines
            self.lines = lines
            cond = self.condition(cond_node) if cond_node is not None else None
            self.lines = saved
            preds = [p.LogicalNot(c) for c in taken]
            if cond is not None:
                preds.append(cond)
                conds.append((cond, lines))
            guard = _conjunction(preds)
            if guard is None:
                self.lower_block(body)
            else:
                self.with_predicate(guard, lambda b=body: self.lower_block(b))
            if cond is not None:
                taken.append(cond)
        self.snapshot_conditions(start, conds)

    def snapshot_conditions(self, start: int, conds) -> None:
        """If statements from index *start* on write a variable that one of the
        *conds* reads, evaluate each condition once into a logical temporary
        before the construct (Fortran evaluates conditions on entry)."""
        body = self.instructions[start:]
        written = {insn.assignee_name for insn in body}
        if not any(variables_read(c) & written for c, _ in conds):
            return
        replacements = {}
        snapshot_insns = []
        for k, (cond, lines) in enumerate(conds):
            name = self.fresh_name("cond")
            self.extra_temporaries[name] = Temporary(name=name, dtype=BOOL,
                                                     span=self.statement_span())
            earlier = [p.LogicalNot(p.Variable(n)) for n in list(replacements.values())]
            preds = tuple(self.predicates) + tuple(earlier)
            snapshot_insns.append(Assignment(
                id=self.fresh_id(name), assignee=p.Variable(name), expression=cond,
                within_inames=self.current_inames(), tags=self.src.tags_at(lines[0]),
                predicates=preds, span=self.src.span(lines[0])))
            replacements[cond] = name
        from f2loopy.ir.expressions import _Rewriter

        class _Replace(_Rewriter):
            def rec(self, expr, *args, **kwargs):
                if not is_constant(expr) and expr in replacements:
                    return p.Variable(replacements[expr])
                return super().rec(expr, *args, **kwargs)

        rep = _Replace()

        def replace(expr):
            return p.Variable(replacements[expr]) if expr in replacements else rep(expr)

        new_body = [insn.copy(predicates=tuple(replace(pr) for pr in insn.predicates))
                    for insn in body]
        self.instructions[start:] = snapshot_insns + new_body

    # }}}
    # }}}


@dataclass
class _NestedLabelDo:
    """Inner loops of a group of labelled DOs sharing one terminal statement."""

    heads: list
    body: list
    content = ()

    def __post_init__(self):
        self.item = getattr(self.heads[0], "item", None)


def _conjunction(preds):
    if not preds:
        return None
    if len(preds) == 1:
        return preds[0]
    return p.LogicalAnd(tuple(preds))
