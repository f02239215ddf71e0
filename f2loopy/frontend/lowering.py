"""Lowering the executable statements of one subroutine to the kernel IR.

Statements become :class:`~f2loopy.ir.kernel.Assignment` s in program order;
``do`` loops become loop domains (one per loop, with a fresh iname); ``if``
and ``select case`` constructs become predicates on the instructions inside.
Dependencies are added afterwards from program order
(:mod:`f2loopy.analysis.dependences`).

* A loop with a negative step runs over a zero-based trip counter: ``do i =
  n, 1, -2`` becomes the iname ``i_t`` in ``{ [i_t] : i_t >= 0 and n - 2*i_t
  >= 1 }`` and ``i`` is replaced by ``n - 2*i_t`` in the body, so the
  iterations keep their order.
* ``cycle`` and an early ``return`` set a logical flag; the statements after
  them (and, for a flag of an outer loop or of the subroutine, every
  statement of the loops in between) are guarded by ``.not. flag``.
* Array syntax, array reductions (:mod:`f2loopy.frontend.arrays`) and calls
  of subroutines and functions of the same file (:mod:`f2loopy.frontend.inline`)
  are lowered to loops and instructions of the same kernel.

In collecting mode (``LoweringState(collect=True)``) a statement that fails is
recorded and lowering goes on with the next one, so that every unsupported
statement of a file can be listed at once.
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
from f2loopy.frontend.array_intrinsics import ArrayIntrinsicsMixin
from f2loopy.frontend.arrays import ArraySyntaxMixin
from f2loopy.frontend.declarations import statement_lines
from f2loopy.frontend.expressions import ConversionContext, ExpressionConverter
from f2loopy.frontend.inline import InliningMixin
from f2loopy.frontend.symbols import Symbol, SymbolTable
from f2loopy.frontend.where import WhereMixin
from f2loopy.ir.expressions import is_constant, variables_read
from f2loopy.ir.folding import (
    NotConstant, _cast, evaluate_constant, fold_constants, normalize_integer)
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
    "Select_Type_Construct": "'select type' is not supported",
    "Wait_Stmt": "'wait' is not supported (kernels cannot do I/O)",
    "Flush_Stmt": "'flush' is not supported (kernels cannot do I/O)",
}

_DO_CONSTRUCTS = (F.Block_Nonlabel_Do_Construct, F.Block_Label_Do_Construct)


class LoweringState:
    """What one kernel accumulates while its subroutine (and everything
    inlined into it) is lowered.

    :attr errors: a list collecting statement errors (collecting mode), or
        None to raise the first error.
    """

    def __init__(self, *, collect: bool = False):
        self.instructions: list = []
        self.domains: list[isl.Set] = []
        self.extra_temporaries: dict[str, Temporary] = {}
        self.taken_names: set[str] = set()
        self.insn_ids: set[str] = set()
        self.claimed_inames: set[str] = set()
        self.loops: list[LoopScope] = []
        self.predicates: list = []
        self.regions: list[Region] = []
        self.errors: list | None = [] if collect else None
        self.call_stack: list[str] = []
        self.shared_tables: dict = {}
        self.placeholders: set[str] = set()     # array-syntax positions (integers)
        #: (array, axis) -> name of the kernel argument holding the extent of
        #: an assumed-shape dummy argument's axis (lower-case array name)
        self.assumed_extents: dict[tuple[str, int], str] = {}


@dataclass(eq=False)
class Region:
    """A body that ``cycle`` or ``return`` can leave: a loop body or a whole
    procedure body.

    :attr depth: number of loops (of the shared stack) around the body.
    :attr flag: name of the logical temporary set when the body is left.
    :attr count: how many ``cycle``/``return`` statements set the flag so far.
    """

    kind: str
    owner: object
    name: str | None
    depth: int
    body_start: int
    flag: str | None = None
    count: int = 0
    trailing: object = None        # a procedure's final 'return' statement


@dataclass(eq=False)
class LoopScope:
    var: str | None           # lower-case Fortran variable (None: array-syntax loop)
    iname: str
    value: object             # the value of the Fortran variable, in terms of the iname
    owner: object
    region: Region | None = None
    body_start: int = 0


class UnitLowering(WhereMixin, ArrayIntrinsicsMixin, ArraySyntaxMixin, InliningMixin):
    """Build the instructions, domains and temporaries of one subroutine.

    :arg written: lower-case names assigned anywhere in the unit, including
        through calls (so that a scalar argument nobody writes can serve as a
        loop-bound parameter).
    :arg registry: the procedures and modules of the file (for calls).
    :arg parent: the lowering of the caller, for a procedure being inlined.
    """

    def __init__(self, src, symtab: SymbolTable, dummy_names: list[str], written: set[str],
                 do_variables: set[str], *, state: LoweringState | None = None,
                 registry=None, parent=None, unit_name: str = "",
                 statement_functions=None):
        self.src = src
        self.symtab = symtab
        self.dummies = [d.lower() for d in dummy_names]
        self.written = written
        self.do_variables = do_variables
        self.st = state if state is not None else LoweringState()
        self.registry = registry
        self.parent = parent
        self.root = parent.root if parent is not None else self
        self.unit_name = unit_name
        self.used: set[str] = set()           # lower-case names of variables used (root)
        if parent is None:
            self.st.taken_names.update(s.name.lower() for s in symtab.symbols())
        self.bindings: dict = {}              # dummy (lower) -> binding (inlined)
        self.renames: dict[str, str] = {}     # local (lower) -> IR name (inlined)
        self.views: dict = {}
        self.elemental = None
        self.statement_functions = statement_functions or {}
        self.lines = (0, 0)

    # {{{ shared state

    @property
    def instructions(self):
        return self.st.instructions

    @property
    def domains(self):
        return self.st.domains

    @property
    def extra_temporaries(self):
        return self.st.extra_temporaries

    @property
    def loops(self):
        return self.st.loops

    @property
    def predicates(self):
        return self.st.predicates

    @property
    def taken_names(self):
        return self.st.taken_names

    @property
    def claimed_inames(self):
        return self.st.claimed_inames

    # }}}

    # {{{ utilities

    def error(self, message, needle=None, cls=FortranError, *, last_occurrence=False):
        first, last = self.lines
        span = self.src.span_in_lines(first, last, needle)
        if last_occurrence and needle and span.text:
            col = span.text.lower().rfind(needle.lower()) + 1
            if col > span.column:
                span = self.src.span(span.line, needle, start_column=col)
        return cls(message, span)

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
        while name in self.st.insn_ids:
            k += 1
            name = f"{base}_{k}"
        self.st.insn_ids.add(name)
        return name

    def new_temporary(self, base: str, dtype, **kw) -> str:
        name = self.fresh_name(base)
        self.extra_temporaries[name] = Temporary(name=name, dtype=np.dtype(dtype),
                                                 span=self.statement_span(), **kw)
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
            if self.parent is None:
                self.taken_names.add(sym.name.lower())
        if sym.dtype is None:
            sym.dtype = self.symtab.implicit_type(sym.name)
            if sym.dtype is None:
                raise self.error(f"'{sym.name}' has no type (implicit none is in effect; "
                                 "declare it)", name)
        return sym

    def var_dtype(self, name: str) -> np.dtype:
        if name in self.st.placeholders:
            return INT32
        for scope in self.loops:
            if scope.iname == name:
                return INT32
        if name in self.extra_temporaries:
            return self.extra_temporaries[name].dtype
        if name.lower() in self.claimed_inames or name in self.st.assumed_extents.values():
            return INT32
        return self.root.symbol(name).dtype

    def dtype_of(self, expr) -> np.dtype:
        return infer_type(expr, self.var_dtype)

    def current_inames(self) -> frozenset:
        return frozenset(s.iname for s in self.loops)

    def loop_for(self, var: str) -> LoopScope | None:
        low = var.lower()
        for scope in reversed(self.loops):
            if scope.owner is self and scope.var == low:
                return scope
        return None

    def is_invariant_param(self, name: str) -> bool:
        """A scalar dummy argument of the kernel that the kernel never writes."""
        root = self.root
        low = name.lower()
        if name in self.st.assumed_extents.values():
            return True
        sym = root.symtab.get(name)
        return (low in root.dummies and low not in root.written and sym is not None
                and not sym.is_array and not sym.is_parameter)

    def assumed_extent(self, sym, axis: int) -> str:
        """Name of the kernel argument that holds the extent of *axis* (from
        0) of the kernel's assumed-shape dummy argument *sym*: ``a_n1``...
        The host glue takes its value from the array the caller passes."""
        key = (sym.name.lower(), axis)
        name = self.st.assumed_extents.get(key)
        if name is None:
            name = self.root.fresh_name(f"{sym.name}_n{axis + 1}")
            self.st.assumed_extents[key] = name
        return name

    def record(self, exc: FortranError) -> None:
        """Record *exc* (collecting mode) or raise it."""
        if self.st.errors is None:
            raise exc
        self.st.errors.append(exc)

    # }}}

    # {{{ expressions

    def converter(self) -> ExpressionConverter:
        ctx = ConversionContext(
            error=self.error, resolve_name=self.resolve_name, array_ref=self.array_ref,
            function_call=self.function_call, dtype_of=self.checked_dtype,
            kind_value=self.kind_value, array_intrinsic=self.array_intrinsic,
            array_constructor=self.array_constructor)
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
        expr = self.converter()(node)
        try:
            folded = fold_constants(expr)
        except OverflowError:
            folded = None
        if folded is None or _has_nonfinite_constant(folded):
            raise self.error("arithmetic overflow or invalid operation in a constant "
                             "expression (the compiler would reject it)", str(node))
        return folded

    def int_expr(self, node, what):
        e = self.expr(node)
        if not is_integer(self.checked_dtype(e)):
            raise self.error(f"{what} must be an integer", str(node))
        return e

    def resolve_name(self, name: str, node):
        scope = self.loop_for(name)
        if scope is not None:
            return scope.value
        sym = self.symbol(name)
        if self.is_array_symbol(sym):
            if self.elemental is not None:
                return self.whole_array_element(sym, name)
            raise self.error(f"whole-array use of '{name}' is not supported here (write an "
                             "explicit loop or index it)", name, UnsupportedFeatureError)
        if sym.is_parameter:
            return sym.value
        low = sym.name.lower()
        if low in self.do_variables and low not in self.bindings:
            raise self.error(f"the value of loop variable '{name}' outside its loop is not "
                             "supported", name, UnsupportedFeatureError)
        return self.scalar_value(sym, name)

    def is_array_symbol(self, sym: Symbol) -> bool:
        b = self.bindings.get(sym.name.lower())
        if b is not None:
            return b.is_array
        return sym.is_array

    def scalar_value(self, sym: Symbol, name: str):
        """The IR expression a read of scalar *sym* becomes."""
        low = sym.name.lower()
        b = self.bindings.get(low)
        if b is not None:
            return b.expr
        if sym.is_initialized:
            return sym.value       # never assigned (checked where it is): a constant
        if self.parent is None:
            self.used.add(low)
            return p.Variable(sym.name)
        return p.Variable(self.local_name(sym))

    def scalar_target(self, sym: Symbol, name: str):
        """``(IR expression, dtype)`` of an assignment to scalar *sym*."""
        low = sym.name.lower()
        b = self.bindings.get(low)
        if b is not None:
            if not b.writable:
                raise self.error(f"'{name}' is assigned, but the actual argument passed for "
                                 f"it is {b.what}", name)
            return b.expr, sym.dtype
        self.check_not_initialized(sym, name)
        if self.parent is None:
            self.used.add(low)
            return p.Variable(sym.name), sym.dtype
        return p.Variable(self.local_name(sym)), sym.dtype

    def check_not_initialized(self, sym: Symbol, name: str):
        if sym.is_initialized:
            raise self.error(f"'{name}' has an initial value (data statement or "
                             "initialisation) and is assigned: Fortran keeps its value "
                             "between calls (implicit save), which a kernel cannot do",
                             name, UnsupportedFeatureError)

    def local_name(self, sym: Symbol) -> str:
        """IR name of a local variable of an inlined procedure (a fresh
        temporary of the kernel)."""
        low = sym.name.lower()
        name = self.renames.get(low)
        if name is None:
            shape, lbs = (), ()
            if sym.is_array:
                shape, lbs = self.constant_dims(sym)
            name = self.new_temporary(sym.name, sym.dtype, shape=shape, lower_bounds=lbs)
            self.renames[low] = name
        return name

    def constant_dims(self, sym: Symbol):
        shape, lbs = [], []
        for lo_node, hi_node in sym.dims:
            try:
                lo = 1 if lo_node is None else int(self.constant(lo_node))
                if hi_node in ("*", ":"):
                    raise NotConstant(hi_node)
                hi = int(self.constant(hi_node))
            except (FortranError, NotConstant):
                raise self.error(f"local array '{sym.name}' has a size that is not constant: "
                                 "automatic arrays are not supported in a called procedure "
                                 "(pass the work array as an argument)", sym.name,
                                 UnsupportedFeatureError) from None
            shape.append(max(0, hi - lo + 1))
            lbs.append(lo)
        return tuple(shape), tuple(lbs)

    def function_call(self, name, arg_nodes, node):
        sf = self.statement_functions.get(name.lower())
        if sf is not None:
            return self.statement_function_call(sf, arg_nodes)
        sym = self.symtab.get(name)
        if sym is not None and self.is_array_symbol(sym):
            return None
        proc = self.find_procedure(name)
        if proc is None:
            return None
        if proc.kind != "function":
            raise self.error(f"'{name}' is a subroutine; use 'call {name}(...)'", name)
        return self.inline_call(proc, arg_nodes, node)

    # }}}

    # {{{ statements

    def lower_body(self, nodes) -> None:
        """Lower the executable part of a procedure (opens its region for
        ``return``)."""
        nodes = [n for n in nodes if n is not None]
        region = Region("procedure", self, None, len(self.loops), len(self.instructions))
        if nodes and isinstance(nodes[-1], F.Return_Stmt):
            region.trailing = nodes[-1]
        if self.lines == (0, 0) and nodes:
            self.lines = statement_lines(nodes[0])
        if _has_early_return(nodes):
            region.flag = self.new_temporary("returned", BOOL)
            self.add_raw_assignment(region.flag, np.bool_(False), predicates=())
        self.st.regions.append(region)
        try:
            self.lower_block(nodes)
        finally:
            self.st.regions.pop()

    def lower_block(self, nodes) -> None:
        nodes = [n for n in nodes if n is not None]
        pushed = []
        try:
            for k, node in enumerate(nodes):
                before = [(r, r.count) for r in self.st.regions]
                self.lower_statement(node, is_last=(k == len(nodes) - 1))
                for r, count in before:
                    if r.count > count and r.flag is not None:
                        guard = p.LogicalNot(p.Variable(r.flag))
                        if guard not in self.predicates:
                            self.predicates.append(guard)
                            pushed.append(guard)
        finally:
            for _ in pushed:
                self.predicates.pop()

    def lower_statement(self, node, is_last=False) -> None:
        saved = self.lines
        lines = statement_lines(node)
        if lines != (0, 0):
            self.lines = lines
        try:
            try:
                self._lower_statement(node, is_last)
            except RecursionError:
                raise self.error("statement too deeply nested to translate") from None
        except FortranError as exc:
            self.record(exc)
        finally:
            self.lines = saved

    def _lower_statement(self, node, is_last) -> None:
        name = type(node).__name__
        method = getattr(self, "stmt_" + name, None)
        if method is not None:
            if name == "Return_Stmt":
                method(node, is_last)
            else:
                method(node)
            return
        message = _UNSUPPORTED_STATEMENTS.get(name)
        keyword = _keyword(node)
        if keyword == "go":           # 'goto' or 'go to' as written
            import re
            first, last = self.lines
            for ln in range(first, last + 1):
                text = self.src.lines[ln - 1] if 0 < ln <= len(self.src.lines) else ""
                m = re.search(r"\bgo\s*to\b", text, re.IGNORECASE)
                if m:
                    keyword = m.group(0)
                    break
        if message is None:
            message = f"'{keyword}' statements are not supported"
        raise self.error(message, keyword, UnsupportedFeatureError)

    def stmt_Continue_Stmt(self, node):
        pass

    def stmt_Data_Stmt(self, node):
        pass          # read with the declarations

    def stmt_Return_Stmt(self, node, is_last):
        region = next((r for r in reversed(self.st.regions)
                       if r.kind == "procedure" and r.owner is self), None)
        if region is None or region.flag is None or node is region.trailing:
            return            # the trailing return of the procedure (see lower_body)
        self.leave_region(region)

    def stmt_Cycle_Stmt(self, node):
        name = node.items[1]
        name = str(name).lower() if name is not None else None
        region = None
        for scope in reversed(self.loops):
            if scope.owner is not self:
                break
            if scope.region is None:
                continue
            if name is None or scope.region.name == name:
                region = scope.region
                break
        if region is None:
            if name is None:
                raise self.error("'cycle' outside a loop", "cycle")
            raise self.error(f"'cycle {name}': no enclosing loop is called '{name}'", name)
        if region.flag is None:
            raise self.error("internal error: no flag for 'cycle'", "cycle")
        self.leave_region(region)

    def leave_region(self, region: Region):
        """Set *region*'s flag; guard what the flag skips."""
        self.add_raw_assignment(region.flag, np.bool_(True))
        region.count += 1
        inner = self.loops[region.depth:]
        if inner:
            # later iterations of the loops in between run nothing at all
            guard = p.LogicalNot(p.Variable(region.flag))
            start = inner[0].body_start
            for k in range(start, len(self.instructions)):
                insn = self.instructions[k]
                if guard not in insn.predicates and insn.assignee_name != region.flag:
                    self.instructions[k] = insn.copy(predicates=insn.predicates + (guard,))

    def add_raw_assignment(self, name: str, value, predicates=None):
        insn = Assignment(
            id=self.fresh_id(name), assignee=p.Variable(name), expression=value,
            within_inames=self.current_inames(), tags=self.src.tags_at(self.lines[0]),
            predicates=tuple(self.predicates if predicates is None else predicates),
            span=self.statement_span())
        self.instructions.append(insn)
        return insn

    def stmt_Assignment_Stmt(self, node):
        lhs_node, _, rhs_node = node.items
        if self.is_array_assignment(lhs_node):
            self.array_assignment(lhs_node, rhs_node)
            return
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
            low = sym.name.lower()
            if low in self.do_variables and low not in self.bindings:
                raise self.error(f"assigning loop variable '{name}' outside its loop is not "
                                 "supported", name, UnsupportedFeatureError)
            return self.scalar_target(sym, name)
        if isinstance(lhs_node, F.Part_Ref):
            name = str(lhs_node.items[0])
            sym = self.symtab.get(name)
            if sym is None or not self.is_array_symbol(sym):
                if sym is None and self.symtab.implicit_type(name) is not None or \
                        sym is not None and not sym.is_array:
                    raise self.error(f"'{name}' is not an array (statement functions must "
                                     "come before the first executable statement)", name)
                raise self.error(f"'{name}' is not an array", name)
            if sym.is_parameter:
                raise self.error(f"cannot assign to parameter '{sym.name}'", name)
            self.check_not_initialized(sym, name)
            view = self.view(sym, name)
            if view.read_only:
                raise self.error(f"'{name}' is assigned, but the actual argument passed for "
                                 f"it is {view.what}", name)
            ref = self.array_ref(name, list(lhs_node.items[1].items), lhs_node)
            return ref, view.dtype
        raise self.error(f"unsupported assignment target '{lhs_node}'", str(lhs_node),
                         UnsupportedFeatureError)

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
            if is_integer(lhs_dtype) and is_integer(rhs_dtype):
                info = np.iinfo(lhs_dtype)
                if not info.min <= int(rhs) <= info.max:
                    raise self.error(f"the value {int(rhs)} does not fit in "
                                     f"{_type_name(lhs_dtype)}", needle)
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

    def stmt_Call_Stmt(self, node):
        name_node, args = node.items
        name = str(name_node)
        proc = self.find_procedure(name)
        if proc is None:
            raise self.error(f"subroutine '{name}' is not defined in this file (only "
                             "subroutines of the same file can be called; they are "
                             "inlined)", name, UnsupportedFeatureError)
        if proc.kind != "subroutine":
            raise self.error(f"'{name}' is a function, not a subroutine", name)
        self.inline_call(proc, list(args.items) if args is not None else [], node)

    # {{{ do loops

    def _after_leading(self, content, head_types) -> list:
        """*content* from its head statement on.  fparser attaches lines that
        precede a nested construct (an 'include') to that construct, before
        its head: they are lowered first, in order, as statements."""
        content = list(content)
        while content and not isinstance(content[0], head_types):
            self.lower_statement(content.pop(0))
        return content

    def stmt_Block_Nonlabel_Do_Construct(self, node):
        content = self._after_leading(node.content, F.Nonlabel_Do_Stmt)
        if content:
            self.lower_do(content[0], content[1:-1])

    def stmt_Block_Label_Do_Construct(self, node):
        content = self._after_leading(node.content, F.Label_Do_Stmt)
        if not content:
            return
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
        construct_name = getattr(do_stmt.item, "name", None) if hasattr(do_stmt, "item") \
            else None
        construct_name = construct_name.lower() if construct_name else None
        opened = []
        mask = None
        try:
            try:
                control = do_stmt.items[-1] if isinstance(do_stmt, F.Label_Do_Stmt) \
                    else do_stmt.items[1]
                if control is None:
                    raise self.error("'do' without a loop control (an endless loop) is not "
                                     "supported", "do", UnsupportedFeatureError)
                cond, var_bounds, _, concurrent = control.items
                if cond is not None:
                    raise self.error("'do while' loops are not supported (loop bounds must "
                                     "be known on entry)", "do while", UnsupportedFeatureError)
                if concurrent is not None:
                    headers, mask_node = self.concurrent_headers(concurrent)
                else:
                    var_node, bound_nodes = var_bounds
                    headers = [(str(var_node), *bound_nodes,
                                *([None] * (3 - len(bound_nodes))))]
                    mask_node = None
                for var, lo_node, hi_node, step_node in headers:
                    opened.append(self.open_loop(var, lo_node, hi_node, step_node))
                if mask_node is not None:
                    mask = self.condition(mask_node)
            except FortranError as exc:
                self.record(exc)
                # collecting mode: still check the body, in a loop of its own
                opened.append(self.placeholder_loop(do_stmt))
            self.lines = saved
            region = Region("loop", self, construct_name, len(self.loops),
                            len(self.instructions))
            for scope in opened:
                scope.body_start = len(self.instructions)
            opened[-1].region = region
            if _cycles_loop(body, construct_name):
                region.flag = self.new_temporary("cycled", BOOL)
                self.add_raw_assignment(region.flag, np.bool_(False))
                region.body_start = len(self.instructions)
            self.st.regions.append(region)
            try:
                if mask is None:
                    self.lower_block(body)
                else:
                    self.with_predicate(mask, lambda: self.lower_block(body))
            finally:
                self.st.regions.pop()
        finally:
            self.lines = saved
            for _ in opened:
                self.loops.pop()

    def placeholder_loop(self, do_stmt) -> LoopScope:
        """A loop scope with no domain, so that the body of a loop whose header
        failed can still be checked (collecting mode only)."""
        var = None
        try:
            control = do_stmt.items[-1] if isinstance(do_stmt, F.Label_Do_Stmt) \
                else do_stmt.items[1]
            if control is not None and control.items[1] is not None:
                var = str(control.items[1][0]).lower()
        except (AttributeError, IndexError, TypeError):
            var = None
        iname = self.fresh_name("unsupported_loop")
        scope = LoopScope(var, iname, p.Variable(iname), self)
        self.loops.append(scope)
        return scope

    def concurrent_headers(self, header):
        spec_list, mask = header.items[0], None
        if isinstance(header, F.Forall_Header):
            spec_list = header.items[0]
            mask = header.items[1]
        headers = []
        for spec in spec_list.items:
            var, lo, hi, step = spec.items
            headers.append((str(var), lo, hi, step))
        return headers, mask

    def open_loop(self, var: str, lo_node, hi_node, step_node) -> LoopScope:
        sym = self.symbol(var)
        low = sym.name.lower()
        if sym.is_array or sym.is_parameter or not is_integer(sym.dtype) or \
                low in self.bindings:
            what = "a dummy argument" if low in self.bindings else \
                "an integer scalar variable"
            raise self.error(f"loop variable '{var}' must be {what}"
                             if low not in self.bindings else
                             f"loop variable '{var}' must not be a dummy argument of an "
                             "inlined procedure", var)
        if self.loop_for(var) is not None:
            raise self.error(f"loop variable '{var}' is already the variable of an "
                             "enclosing loop", var)
        if self.parent is None and low in self.dummies:
            raise self.error(f"loop variable '{var}' is a dummy argument (its value after "
                             "the loop would go back to the caller); use a local variable",
                             var, UnsupportedFeatureError)
        lo, hi = self.expr(lo_node), self.expr(hi_node)
        step = 1
        if step_node is not None:
            try:
                step = int(evaluate_constant(self.expr(step_node)))
            except NotConstant:
                raise self.error("loop step must be a constant", str(step_node),
                                 UnsupportedFeatureError, last_occurrence=True) from None
            if step == 0:
                raise self.error("loop step is zero", str(step_node), last_occurrence=True)
        for bound, node in ((lo, lo_node), (hi, hi_node)):
            if not is_integer(self.checked_dtype(bound)):
                raise self.error("loop bounds must be integers", str(node),
                                 UnsupportedFeatureError)
        if step > 0:
            iname = self.claim_iname(sym.name)
            lo_p, hi_p = self.loop_bounds(iname, ("lbound", "ubound"), lo, hi, 1)
            self.domains.append(self.make_domain(iname, lo_p, hi_p, step))
            value = p.Variable(iname)
        else:
            # zero-based trip counter t: the variable is start + step*t
            iname = self.claim_iname(f"{sym.name}_t")
            start, end = self.loop_bounds(iname, ("start", "end"), lo, hi, -1)
            value = normalize_integer(p.Sum((start, p.Product((step, p.Variable(iname))))))
            names = sorted(variables_read(start) | variables_read(end))
            space = make_space([iname], names)
            t = pwaff_from_expr(p.Variable(iname), space)
            dom = t.ge_set(t.sub(t)) & pwaff_from_expr(value, space).ge_set(
                pwaff_from_expr(end, space))
            self.domains.append(dom.coalesce())
        scope = LoopScope(low, iname, value, self)
        self.loops.append(scope)
        return scope

    def claim_iname(self, base: str) -> str:
        if self.parent is None and base.lower() not in self.claimed_inames and \
                self.symtab.is_local(base):
            iname = base
            self.taken_names.add(base.lower())
        else:
            iname = self.fresh_name(base)
        self.claimed_inames.add(iname.lower())
        return iname

    def loop_bounds(self, iname: str, which, lo, hi, direction: int):
        """The first and last values *lo*, *hi* of loop *iname* (which runs
        up for *direction* 1, down for -1) as they enter its domain: each
        itself if it can (affine in invariant scalar arguments and enclosing
        inames), else a temporary assigned here.

        The domain does not know the conditions the loop is under (its body
        is predicated instead): where there are some, such temporaries first
        get values for which the loop is empty, so that it does not run, with
        bounds nobody computed, when the condition is false."""
        lo_p, hi_p = self.domain_bound(lo, iname), self.domain_bound(hi, iname)
        guarded = bool(self.predicates)
        if lo_p is None:
            empty = None
            if guarded:
                empty = 0 if hi_p is None else normalize_integer(p.Sum((hi_p, direction)))
            lo_p = self.bound_temporary(iname, which[0], lo, empty)
        if hi_p is None:
            empty = normalize_integer(p.Sum((lo_p, -direction))) if guarded else None
            hi_p = self.bound_temporary(iname, which[1], hi, empty)
        return lo_p, hi_p

    def domain_bound(self, expr, iname: str):
        """*expr* if it can be part of the domain of *iname*, else None."""
        names = variables_read(expr)
        outer = self.current_inames()
        if all(n in outer or self.is_invariant_param(n) for n in names):
            try:
                self.to_pwaff(expr, iname)
            except NonAffineError:
                return None
            for n in names:
                if n not in outer:
                    self.root.used.add(n.lower())
            return expr
        return None

    def bound_temporary(self, iname: str, which: str, expr, empty=None):
        """A temporary holding loop bound *expr*; given the value *empty* first
        (outside the current conditions) unless that is None."""
        tmp = self.new_temporary(f"{iname}_{which}", INT32)
        if empty is not None:
            self.add_assignment(p.Variable(tmp), INT32, empty, None, base_id=tmp,
                                predicates=())
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

    def open_counter_loop(self, base: str, lo, hi, step: int = 1) -> LoopScope:
        """A loop with no Fortran variable over ``lo, lo+step, ... <= hi`` (for
        array syntax): step 1 runs the iname over the values, other steps over
        a zero-based counter.  Returns the scope; its value is the index."""
        if step == 1:
            iname = self.claim_iname(base)
            lo_p, hi_p = self.loop_bounds(iname, ("lbound", "ubound"), lo, hi, 1)
            self.domains.append(self.make_domain(iname, lo_p, hi_p, 1))
            value = p.Variable(iname)
        else:
            iname = self.claim_iname(base)
            start, end = self.loop_bounds(iname, ("start", "end"), lo, hi,
                                          1 if step > 0 else -1)
            value = normalize_integer(p.Sum((start, p.Product((step, p.Variable(iname))))))
            names = sorted(variables_read(start) | variables_read(end))
            space = make_space([iname], names)
            t = pwaff_from_expr(p.Variable(iname), space)
            v, e = pwaff_from_expr(value, space), pwaff_from_expr(end, space)
            dom = t.ge_set(t.sub(t)) & (v.le_set(e) if step > 0 else v.ge_set(e))
            self.domains.append(dom.coalesce())
        scope = LoopScope(None, iname, value, self)
        scope.body_start = len(self.instructions)
        self.loops.append(scope)
        return scope

    # }}}

    # {{{ if and select case

    def stmt_If_Stmt(self, node):
        cond_node, action = node.items
        cond = self.condition(cond_node)
        start = len(self.instructions)
        self.with_predicate(cond, lambda: self.lower_statement(action))
        self.snapshot_conditions(start, [(cond, self.lines)])

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
        content = self._after_leading(node.content, F.If_Then_Stmt)
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
        # conditions first (each evaluated only when the earlier ones are false)
        conds = []
        taken = []
        for cond_node, body, lines in branches:
            if cond_node is None:
                conds.append(None)
                continue
            saved = self.lines
            self.lines = lines
            n_pred = len(self.predicates)
            self.predicates.extend(p.LogicalNot(c) for c in taken)
            try:
                cond = self.condition(cond_node)
            except FortranError as exc:
                self.record(exc)
                cond = np.bool_(True)
            finally:
                del self.predicates[n_pred:]
                self.lines = saved
            conds.append(cond)
            taken.append(cond)
        start = len(self.instructions)
        taken = []
        for (cond_node, body, lines), cond in zip(branches, conds):
            preds = [p.LogicalNot(c) for c in taken]
            if cond is not None:
                preds.append(cond)
            guard = _conjunction(fold_constants(x) for x in preds)
            if guard is None:
                self.lower_block(body)
            else:
                self.with_predicate(guard, lambda b=body: self.lower_block(b))
            if cond is not None:
                taken.append(cond)
        self.snapshot_conditions(start, [(c, ln) for c, (_, _, ln) in zip(conds, branches)
                                         if c is not None])

    def stmt_Case_Construct(self, node):
        content = self._after_leading(node.content, F.Select_Case_Stmt)
        if not content:
            return
        select = content[0]
        branches = []          # [case stmt, body]
        for ch in content[1:]:
            if isinstance(ch, F.Case_Stmt):
                branches.append([ch, []])
            elif isinstance(ch, F.End_Select_Stmt):
                pass
            elif branches:
                branches[-1][1].append(ch)
            else:
                # before the first 'case' (not Fortran; an 'include'): not dropped
                self.lower_statement(ch)
        saved = self.lines
        self.lines = statement_lines(select)
        try:
            selector = self.expr(select.items[0])
            dt = self.checked_dtype(selector)
            if not is_integer(dt):
                raise self.error("'select case' is only supported on integer expressions",
                                 str(select.items[0]), UnsupportedFeatureError)
            if not (isinstance(selector, p.Variable) or is_constant(selector)):
                tmp = self.new_temporary("selector", dt)
                self.add_assignment(p.Variable(tmp), dt, selector, None, base_id=tmp)
                selector = p.Variable(tmp)
        except FortranError as exc:
            self.record(exc)
            selector = None
        finally:
            self.lines = saved
        conds = []
        seen = []            # (lo, hi) of the values so far, for overlap checks
        default = None
        for k, (case_stmt, body) in enumerate(branches):
            self.lines = statement_lines(case_stmt)
            try:
                sel = case_stmt.items[0]
                if sel.items[0] is None:
                    if default is not None:
                        raise self.error("two 'case default' in one 'select case'", "default")
                    default = k
                    conds.append(None)
                    continue
                conds.append(self.case_condition(selector, sel.items[0], seen)
                             if selector is not None else np.bool_(True))
            except FortranError as exc:
                self.record(exc)
                conds.append(np.bool_(False))
            finally:
                self.lines = saved
        start = len(self.instructions)
        others = [c for c in conds if c is not None]
        for k, (case_stmt, body) in enumerate(branches):
            cond = conds[k]
            if cond is None:
                guard = _conjunction([fold_constants(p.LogicalNot(c)) for c in others])
            else:
                guard = cond
            if guard is None:
                self.lower_block(body)
            else:
                self.with_predicate(fold_constants(guard), lambda b=body: self.lower_block(b))
        self.snapshot_conditions(start, [(c, statement_lines(b[0]))
                                         for c, b in zip(conds, branches) if c is not None],
                                 chained=False)

    def case_condition(self, selector, ranges, seen):
        terms = []
        for item in ranges.items:
            if isinstance(item, F.Case_Value_Range):
                lo_node, hi_node = item.items
                lo = self.case_value(lo_node) if lo_node is not None else None
                hi = self.case_value(hi_node) if hi_node is not None else None
            else:
                lo = hi = self.case_value(item)
            self.check_case_overlap(lo, hi, seen, str(item))
            seen.append((lo, hi))
            if lo is not None and hi is not None and lo == hi:
                terms.append(p.Comparison(selector, "==", lo))
                continue
            parts = []
            if lo is not None:
                parts.append(p.Comparison(selector, ">=", lo))
            if hi is not None:
                parts.append(p.Comparison(selector, "<=", hi))
            if lo is not None and hi is not None and int(lo) > int(hi):
                terms.append(np.bool_(False))
                continue
            terms.append(_conjunction(parts))
        cond = terms[0] if len(terms) == 1 else p.LogicalOr(tuple(terms))
        return fold_constants(cond)

    def case_value(self, node):
        v = self.constant(node)
        if not is_integer(v.dtype):
            raise self.error("case values must be integer constants", str(node))
        return v

    def check_case_overlap(self, lo, hi, seen, text):
        big = 2**63
        a_lo = -big if lo is None else int(lo)
        a_hi = big if hi is None else int(hi)
        if a_lo > a_hi:
            return
        for s_lo, s_hi in seen:
            b_lo = -big if s_lo is None else int(s_lo)
            b_hi = big if s_hi is None else int(s_hi)
            if b_lo <= b_hi and a_lo <= b_hi and b_lo <= a_hi:
                raise self.error(f"case value '{text}' overlaps an earlier case", text)

    def snapshot_conditions(self, start: int, conds, chained: bool = True) -> None:
        """If statements from index *start* on write a variable that one of the
        *conds* reads, evaluate each condition once into a logical temporary
        before the construct (Fortran evaluates conditions on entry).

        *chained*: each condition is only evaluated when the earlier ones are
        false (``else if``: the guards of later branches include the negated
        earlier conditions); a ``select case`` guards each branch by its own
        condition alone, so every snapshot must be evaluated."""
        body = self.instructions[start:]
        if not _condition_may_change(body, conds, self.current_inames()):
            return
        replacements = {}
        snapshot_insns = []
        for k, (cond, lines) in enumerate(conds):
            if is_constant(cond) or cond in replacements:
                continue
            name = self.new_temporary("cond", BOOL)
            earlier = [p.LogicalNot(p.Variable(n)) for n in list(replacements.values())] \
                if chained else []
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

        # only the construct's own guard reads the snapshots: the predicates of
        # enclosing constructs come before it (an outer 'if (mask(1))' is not
        # the inner 'else if (mask(1))'), those of nested ones after it (they
        # are evaluated later, when the variables may have changed)
        own = len(self.predicates)

        def fix(preds):
            if len(preds) <= own:
                return preds
            return preds[:own] + (replace(preds[own]),) + preds[own + 1:]

        new_body = [insn.copy(predicates=fix(insn.predicates)) for insn in body]
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


def _condition_may_change(body, conds, outer_inames) -> bool:
    """Whether a guarded instruction of *body* could see a condition of
    *conds* changed by an earlier instruction of the construct (or by itself,
    in an earlier iteration of a loop inside the construct)."""
    reads = set()
    for c, _ in conds:
        reads |= variables_read(c)
    for k, insn in enumerate(body):
        if insn.assignee_name not in reads:
            continue
        if k < len(body) - 1 or set(insn.within_inames) - set(outer_inames):
            return True
    return False


def _has_nonfinite_constant(expr) -> bool:
    """Fortran has no infinite or NaN literals: one in a folded expression
    comes from an overflow (or 0.0/0.0) that the compiler would reject."""
    import dataclasses
    if isinstance(expr, (float, complex, np.floating, np.complexfloating)):
        return not np.isfinite(expr)
    if not dataclasses.is_dataclass(expr):
        return False
    return any(_has_nonfinite_constant(c) for c in
               _flatten(getattr(expr, f.name) for f in dataclasses.fields(expr)))


def _flatten(items):
    for x in items:
        if isinstance(x, tuple):
            yield from _flatten(x)
        else:
            yield x


def _type_name(dt) -> str:
    from f2loopy.frontend.inline import type_name
    return type_name(dt)


def _keyword(node) -> str:
    text = str(node).strip()
    if not text:
        return type(node).__name__
    return text.split("(")[0].split()[0].lower()


def _conjunction(preds):
    preds = [x for x in preds if not (is_constant(x) and bool(x))]
    if not preds:
        return None
    if any(is_constant(x) and not bool(x) for x in preds):
        return np.bool_(False)
    if len(preds) == 1:
        return preds[0]
    return p.LogicalAnd(tuple(preds))


def _children(node):
    if isinstance(node, _NestedLabelDo):
        return list(node.heads) + list(node.body)
    content = getattr(node, "content", None)
    if content:
        return list(content)
    return [c for c in (getattr(node, "items", None) or ())
            if hasattr(c, "items") or hasattr(c, "content")]


def _cycles_loop(body, construct_name) -> bool:
    """Whether a ``cycle`` in *body* leaves the loop whose body it is."""
    def visit(node, nested):
        if isinstance(node, F.Cycle_Stmt):
            target = node.items[1]
            if target is None:
                return not nested
            return construct_name is not None and str(target).lower() == construct_name
        inner = nested or isinstance(node, (*_DO_CONSTRUCTS, _NestedLabelDo))
        return any(visit(ch, inner) for ch in _children(node))
    return any(visit(n, False) for n in body if n is not None)


def _has_early_return(nodes) -> bool:
    """Whether a ``return`` other than a trailing one occurs in *nodes*."""
    def visit(node):
        if isinstance(node, F.Return_Stmt):
            return True
        return any(visit(ch) for ch in _children(node))
    nodes = [n for n in nodes if n is not None]
    if nodes and isinstance(nodes[-1], F.Return_Stmt):
        nodes = nodes[:-1]
    return any(visit(n) for n in nodes)
