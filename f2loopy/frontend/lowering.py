"""Lowering the executable statements of one subroutine to the kernel IR.

Statements become :class:`~f2loopy.ir.kernel.Assignment` s in program order.
Dependencies are added afterwards from program order
(:mod:`f2loopy.analysis.dependences`).  :class:`UnitLowering` is assembled
from one mixin per part of the language:

* ``do`` loops become loop domains with fresh inames
  (:mod:`f2loopy.frontend.loops`);
* ``if`` and ``select case`` become predicates on the instructions inside
  (:mod:`f2loopy.frontend.conditionals`); ``where`` masks the element
  assignments of array syntax (:mod:`f2loopy.frontend.where`);
* array syntax (:mod:`f2loopy.frontend.arrays`) and array intrinsics
  (:mod:`f2loopy.frontend.array_intrinsics`) become loops over temporaries;
* calls of subroutines and functions of the same file are inlined
  (:mod:`f2loopy.frontend.inline`).
* ``cycle`` and an early ``return`` set a logical flag; the statements after
  them (and, for a flag of an outer loop or of the subroutine, every
  statement of the loops in between) are guarded by ``.not. flag``;
  ``exit``, forward ``goto``, ``do while`` and run-time steps build on that
  (:mod:`f2loopy.frontend.control`);
* character flags become integer codes (:mod:`f2loopy.frontend.characters`);
  ``stop``, ``error stop`` and ``call xerbla`` become error sites
  (:mod:`f2loopy.frontend.errors`); elemental functions applied to arrays
  are expanded as expressions (:mod:`f2loopy.frontend.elemental`).

In collecting mode (``LoweringState(collect=True)``) a statement that fails is
recorded and lowering goes on with the next one, so that every unsupported
statement of a file can be listed at once.
"""

from __future__ import annotations

import functools

from typing import TYPE_CHECKING

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.ir.types import type_name
from f2loopy.ir.types import (
    BOOL, INT32, FortranTypeError, infer_type, is_complex, is_integer, is_logical)
from f2loopy.diagnostics import FortranError, SourceSpan, UnsupportedFeatureError
from f2loopy.frontend.allocatables import ALLOCATE_MESSAGE
from f2loopy.frontend.derived_types import default_initialize, type_bound_call_error
from f2loopy.frontend.derived_values import drop_scratch, lower_derived_assignment, operation_value
from f2loopy.frontend.array_intrinsics import ArrayIntrinsicsMixin
from f2loopy.frontend.arrays import ArraySyntaxMixin
from f2loopy.frontend.characters import CharacterMixin, is_character
from f2loopy.frontend.strings import StringsMixin
from f2loopy.frontend.associate import AssociateMixin
from f2loopy.frontend.bindings import scalar_binding
from f2loopy.frontend.conditionals import ConditionalsMixin
from f2loopy.frontend.control import ControlFlowMixin, backward_goto_loops, statement_label
from f2loopy.frontend.elemental import ElementalMixin
from f2loopy.frontend.errors import ErrorPathsMixin, file_may_stop, is_blas_xerbla
from f2loopy.frontend.generics import GenericsMixin
from f2loopy.frontend.declarations import statement_lines
from f2loopy.frontend.expressions import (
    ConversionContext, ExpressionConverter, is_intrinsic_name)
from f2loopy.frontend.inline import InliningMixin, assigned_once
from f2loopy.frontend.local_allocatables import WorkArraysMixin, prepare_work_arrays
from f2loopy.frontend.loops import (
    LoopScope, LoopsMixin, Region, _children, _has_early_return)
from f2loopy.frontend.symbols import StatementFunction, Symbol, SymbolTable
from f2loopy.frontend.lowering_state import LoweringState, NameTable
from f2loopy.frontend.optionals import optional_actuals
from f2loopy.frontend.scopes import ScopesMixin
from f2loopy.frontend.where import WhereMixin
from f2loopy.ir.expressions import is_constant, variables_read
from f2loopy.ir.folding import NotConstant, cast_value, evaluate_constant, fold_constants
from f2loopy.ir.kernel import Assignment, Temporary

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_host import (
        CalledProcedure, LoweringHost, ModuleScope, Node, PreparedCallee, ProcedureRegistry)
    from f2loopy.frontend.source import SourceFile

_UNSUPPORTED_STATEMENTS = {
    "Read_Stmt": "'read' statements are not supported (kernels cannot do I/O)",
    "Open_Stmt": "'open' statements are not supported (kernels cannot do I/O)",
    "Close_Stmt": "'close' statements are not supported (kernels cannot do I/O)",
    "Allocate_Stmt": ALLOCATE_MESSAGE.format(stmt="allocate"),
    "Deallocate_Stmt": ALLOCATE_MESSAGE.format(stmt="deallocate"),
    "Pointer_Assignment_Stmt": "pointer assignment is not supported",
    "Forall_Construct": "'forall' constructs are not supported (use 'do concurrent')",
    "Forall_Stmt": "'forall' statements are not supported (use 'do concurrent')",
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


class UnitLowering(ScopesMixin, LoopsMixin, ControlFlowMixin, ConditionalsMixin,
                   WhereMixin, ArrayIntrinsicsMixin, ArraySyntaxMixin, InliningMixin,
                   CharacterMixin, StringsMixin, ErrorPathsMixin, ElementalMixin, AssociateMixin,
                   GenericsMixin, WorkArraysMixin):
    """Build the instructions, domains and temporaries of one subroutine.

    Its fields are declared (with their types and kinds) in
    :class:`~f2loopy.frontend.lowering_host.LoweringHost`, and assigned
    here only; no two mixins define the same method (the order of the base
    classes means nothing).

    :arg written: lower-case names assigned anywhere in the unit, including
        through calls (so that a scalar argument nobody writes can serve as a
        loop-bound parameter).
    :arg registry: the procedures and modules of the file (for calls).
    :arg parent: the lowering of the caller, for a procedure being inlined.
    :arg module_info: the module the unit is in (its procedures are found).
    :arg callees_may_stop: a procedure the unit calls, of another file, may
        stop (the kernel's subroutine only).
    :arg single_assignments: inlined: the local scalars the body assigns
        exactly once and passes to no call (see :meth:`note_constant`).
    :arg optional_actuals: inlined: what the call passes for each optional
        dummy (lower-case name; None: left out), for ``present()``.
    """

    def __init__(self, src: SourceFile, symtab: SymbolTable, dummy_names: list[str],
                 written: set[str], do_variables: set[str], *,
                 state: LoweringState | None = None, registry: ProcedureRegistry | None = None,
                 parent: LoweringHost | None = None, unit_name: str = "",
                 statement_functions: dict[str, StatementFunction] | None = None,
                 module_info: ModuleScope | None = None, callees_may_stop: bool = False,
                 single_assignments: frozenset[str] = frozenset(),
                 optional_actuals: dict[str, Node | None] | None = None) -> None:
        # set once (see LoweringHost)
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
        self.statement_functions = statement_functions or {}
        self.module_info = module_info
        self.callees_may_stop = callees_may_stop
        self.single_assignments = single_assignments
        self.optional_actuals = optional_actuals or {}
        #: how many conditions held where the procedure was called (those it
        #: adds itself make an assignment conditional)
        self.entry_predicates = len(self.st.predicates)
        # accumulated
        self.used = set()
        if parent is None:
            self.st.taken_names.update(s.name.lower() for s in symtab.symbols())
        self.bindings = {}
        self.renames = {}
        self.views = {}
        self.known_constants = {}
        self.labels_seen = set()
        #: label -> text of the procedure's ``format`` statements (f2loopy.frontend.prints)
        self.formats: dict[str, str] = {}
        self.block_rest = None
        # scoped (f2loopy.frontend.scopes)
        self.lines = (0, 0)
        self.elemental = None
        self.names = NameTable()
        self.where_guards = []
        self.where_assigning = False

    def inlined_lowering(self, proc: CalledProcedure, callee: PreparedCallee,
                         dummies: list[str], actuals: list[Node | None]
                         ) -> LoweringHost:
        """The lowering of *proc* (prepared as *callee*, its dummy
        arguments *dummies*, bound to *actuals*: None for an optional one
        left out) inlined here: of this lowering's own class; a procedure of
        another file has its own source and registry."""
        return type(self)(
            proc.src or self.src, callee.symtab, list(dummies) + list(callee.host_names),
            callee.written, callee.do_variables, state=self.st,
            registry=proc.registry or self.registry, parent=self, unit_name=proc.name,
            statement_functions=callee.statement_functions, module_info=proc.module,
            single_assignments=frozenset() if callee.symtab.internals
            else assigned_once(callee.body),
            optional_actuals=optional_actuals(callee, dummies, actuals))

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
        """*base*, else ``base_K`` for the smallest K not taken."""
        key = base.lower()
        k = self.st.next_name_suffix.get(key, 0)
        name = base if k == 0 else f"{base}_{k}"
        while name.lower() in self.taken_names:
            k += 1
            name = f"{base}_{k}"
        self.st.next_name_suffix[key] = k + 1
        self.taken_names.add(name.lower())
        return name

    def fresh_id(self, base: str) -> str:
        """Like :meth:`fresh_name`, for instruction ids."""
        k = self.st.next_id_suffix.get(base, 0)
        name = base if k == 0 else f"{base}_{k}"
        while name in self.st.insn_ids:
            k += 1
            name = f"{base}_{k}"
        self.st.next_id_suffix[base] = k + 1
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
        if name in self.st.storage_by_name:
            return self.st.storage_by_name[name].dtype
        if name.lower() in self.claimed_inames or name in self.st.assumed_extents.values() \
                or name in self.st.dope_names:
            return INT32
        dtype = self.root.symbol(name).dtype
        assert dtype is not None        # symbol() types every symbol or raises
        return dtype

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
        """A scalar dummy argument of the kernel that the kernel never writes,
        or the extent or lower bound of an assumed-shape dummy or of an
        allocatable module array (a kernel cannot allocate, so those stay)."""
        root = self.root
        low = name.lower()
        if name in self.st.assumed_extents.values() or name in self.st.dope_names:
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
            array_constructor=self.array_constructor, char_comparison=self.char_comparison,
            component_ref=self.component_ref)
        ctx.defined_operation = functools.partial(operation_value, self)
        return ExpressionConverter(ctx)

    def component_ref(self, node):
        """The value of ``a%b%c(i)`` (a flattened component)."""
        from f2loopy.frontend.derived_types import component_value
        return component_value(self, node)

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
        found, value = self.names.lookup(name)
        if found:
            return value          # a name standing for a value (NameTable)
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
        if is_character(sym.dtype):
            self.refuse_character(sym, name)
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
            return scalar_binding(b).expr
        known = self.known_constants.get(low)
        if known is not None:
            return known
        if sym.is_initialized:
            return sym.value       # never assigned (checked where it is): a constant
        if low in self.do_variables:
            return self.loop_scalar(sym)
        if self.parent is None:
            self.used.add(low)
            return p.Variable(sym.name)
        return p.Variable(self.local_name(sym))

    def scalar_target(self, sym: Symbol, name: str):
        """``(IR expression, dtype)`` of an assignment to scalar *sym*."""
        low = sym.name.lower()
        binding = self.bindings.get(low)
        if binding is not None:
            b = scalar_binding(binding)
            if not b.writable:
                raise self.error(f"'{name}' is assigned, but the actual argument passed for "
                                 f"it is {b.what}", name)
            return b.expr, sym.dtype
        self.check_not_initialized(sym, name)
        if low in self.do_variables:
            return self.loop_scalar(sym), sym.dtype
        if self.parent is None:
            self.used.add(low)
            return p.Variable(sym.name), sym.dtype
        return p.Variable(self.local_name(sym)), sym.dtype

    def loop_scalar(self, sym: Symbol) -> p.Variable:
        """The temporary that holds loop variable *sym* outside its loops
        (inside, the variable is its loop's iname): assigned where the
        Fortran assigns it, and after each of its loops the value Fortran
        leaves there (the first value past the last iteration).  Unread ones
        are removed when the subroutine is done (:meth:`prune_loop_scalars`)."""
        key = (id(self), sym.name.lower())
        name = self.st.loop_scalars.get(key)
        if name is None:
            # (not 'i_1': that is the name the next loop over i gets)
            name = self.new_temporary(f"{sym.name}_value", sym.dtype)
            self.st.loop_scalars[key] = name
        return p.Variable(name)

    def prune_loop_scalars(self) -> None:
        """Remove the assignments to loop-variable temporaries that nothing
        reads (most loops' final values), and the temporaries."""
        names = set(self.st.loop_scalars.values())
        read = set()
        for insn in self.instructions:
            read |= variables_read(*insn.read_expressions()) & names
        unread = names - read
        if not unread:
            return
        self.instructions[:] = [i for i in self.instructions
                                if getattr(i, "assignee_name", None) not in unread]
        for n in unread:
            del self.extra_temporaries[n]

    def check_not_initialized(self, sym: Symbol, name: str):
        if sym.is_initialized:
            raise self.error(f"'{name}' has an initial value (data statement or "
                             "initialisation) and is assigned in a way f2loopy does not "
                             "follow (an assignment, a call or a do loop makes it a saved "
                             "local, as Fortran's implicit save does): declare it with "
                             "'save'", name, UnsupportedFeatureError)

    def local_name(self, sym: Symbol) -> str:
        """IR name of a local variable of an inlined procedure (a fresh
        temporary of the kernel); a module variable is the kernel's argument."""
        if sym.storage is not None:
            from f2loopy.frontend.module_data import storage_name
            return storage_name(self, sym)
        if "associate_value" in sym.attributes:
            return sym.name           # the temporary an associate name holds
        low = sym.name.lower()
        name = self.renames.get(low)
        if name is None:
            shape, lbs, space = (), (), None
            if sym.is_array:
                from f2loopy.frontend.work_arrays import local_array_dims
                shape, lbs, space = local_array_dims(self, sym)
            name = self.new_temporary(sym.name, sym.dtype, shape=shape, lower_bounds=lbs,
                                      address_space=space)
            self.renames[low] = name
        return name

    def function_call(self, name, arg_nodes, node):
        chars = self.char_function(name, arg_nodes, node)
        if chars is not None:
            return chars
        sf = self.statement_functions.get(name.lower())
        if sf is not None:
            return self.statement_function_call(sf, arg_nodes)
        sym = self.symtab.get(name)
        if sym is not None and self.is_array_symbol(sym):
            return None
        proc = self.find_procedure(name)
        if proc is None:
            if sym is not None and sym.dtype is not None and not sym.is_dummy and \
                    not sym.is_parameter and not is_intrinsic_name(name):
                from f2loopy.frontend.search_path import not_found_message
                raise self.error(not_found_message("function", name, self.search_path()),
                                 name, UnsupportedFeatureError)
            refused = self.symtab.library_error(name) if sym is None else None
            if refused is not None:
                raise refused
            return None
        proc = self.resolve_generic(proc, arg_nodes, name, intrinsic=is_intrinsic_name(name))
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
        prepare_work_arrays(self, nodes)
        from f2loopy.frontend.prints import format_statements
        self.formats = format_statements(nodes)
        region = Region("procedure", self, None, len(self.loops), len(self.instructions))
        if nodes and isinstance(nodes[-1], F.Return_Stmt):
            region.trailing = nodes[-1]
        if self.lines == (0, 0) and nodes:
            self.lines = statement_lines(nodes[0])
        if _has_early_return(nodes) or self.parent is None and (
                self.callees_may_stop or file_may_stop(self.src.text)):
            region.flag = self.new_temporary("returned", BOOL)
            self.add_raw_assignment(region.flag, np.bool_(False), predicates=())
        # a loop variable that is a dummy argument or a module variable lives
        # in its loop temporary (loop_scalar) in the kernel: copied in first,
        # and back out at the end, where the caller sees the value Fortran
        # leaves (past any 'return': after the procedure's region)
        carried = [] if self.parent is not None else \
            [self.symbol(d) for d in self.dummies if d in self.do_variables]
        for sym in carried:
            if sym.intent != "out":
                self.used.add(sym.name.lower())
                self.add_assignment(self.loop_scalar(sym), sym.dtype, p.Variable(sym.name),
                                    None, predicates=())
        default_initialize(self)        # (derived-type locals and intent(out) dummies)
        with self.region(region):
            self.lower_block(nodes)
        for sym in carried:
            self.used.add(sym.name.lower())
            self.add_assignment(p.Variable(sym.name), sym.dtype, self.loop_scalar(sym), None,
                                predicates=())

    def lower_block(self, nodes, *, skip_labels=frozenset()) -> None:
        nodes = backward_goto_loops([n for n in nodes if n is not None], _children,
                                    skip_labels)
        with self.goto_regions(nodes, _children) as labels, \
                self.block_guards() as guards:
            for k, node in enumerate(nodes):
                self.block_rest = (node, nodes[k + 1:])
                self.arrive_at_label(node, labels, guards)
                label = statement_label(node)
                if label is not None:
                    self.labels_seen.add(label)
                before = [(r, r.count) for r in self.st.regions]
                self.lower_statement(node, is_last=(k == len(nodes) - 1))
                for r, count in before:
                    if r.count > count and r.flag is not None:
                        # the rest of the block runs only if the flag is not set
                        guard = p.LogicalNot(p.Variable(r.flag))
                        if guard not in self.predicates:
                            self.predicates.append(guard)
                            guards.append(guard)

    def lower_statement(self, node, is_last=False) -> None:
        with self.at_statement(node):
            try:
                try:
                    self._lower_statement(node, is_last)
                except RecursionError:
                    raise self.error("statement too deeply nested to translate") from None
            except FortranError as exc:
                self.record(exc)
            finally:
                drop_scratch(self)

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
        if lower_derived_assignment(self, node):
            return
        if self.is_array_assignment(lhs_node):
            self.array_assignment(lhs_node, rhs_node)
            return
        if self.char_assignment(lhs_node, rhs_node):
            return
        assignee, lhs_dtype = self.lower_assignee(lhs_node)
        rhs = self.expr(rhs_node)
        self.note_constant(lhs_node, lhs_dtype, rhs)
        self.add_assignment(assignee, lhs_dtype, rhs, str(lhs_node))

    def note_constant(self, lhs_node, lhs_dtype, rhs) -> None:
        """In an inlined procedure: a local scalar assigned once, outside any
        condition or loop of the procedure, a value that is constant here
        (``nota = lsame(transa, 'N')`` where the caller passed 'N') is read
        as that constant, so the branches it decides fold away and are not
        lowered (Reference BLAS inlined into LAPACK: most of dgemm's and
        dtrmm's eight variants)."""
        if self.parent is None or not isinstance(lhs_node, F.Name) or \
                len(self.predicates) > self.entry_predicates or \
                any(scope.owner is self for scope in self.loops):
            return
        low = str(lhs_node).lower()
        if low not in self.single_assignments or low in self.bindings:
            return
        try:
            value = fold_constants(self.convert_for_assignment(rhs, lhs_dtype, low))
        except FortranError:
            return
        if is_constant(value):
            self.known_constants[low] = value

    def lower_assignee(self, lhs_node):
        if isinstance(lhs_node, F.Name):
            name = str(lhs_node)
            if self.loop_for(name) is not None:
                raise self.error(f"loop variable '{name}' cannot be assigned inside its "
                                 "loop", name)
            sym = self.symbol(name)
            if sym.is_parameter:
                raise self.error(f"cannot assign to parameter '{sym.name}'", name)
            return self.scalar_target(sym, name)
        if isinstance(lhs_node, F.Part_Ref):
            name = str(lhs_node.items[0])
            found = self.symtab.get(name)
            if found is not None and not found.is_array and is_character(found.dtype):
                raise self.error(f"assigning a substring of character variable '{name}' is "
                                 "not supported (a kernel only knows a character's first "
                                 "character, as a flag)", name, UnsupportedFeatureError)
            if found is None or not self.is_array_symbol(found):
                if found is None and self.symtab.implicit_type(name) is not None or \
                        found is not None and not found.is_array:
                    raise self.error(f"'{name}' is not an array (statement functions must "
                                     "come before the first executable statement)", name)
                raise self.error(f"'{name}' is not an array", name)
            sym = found
            if sym.is_parameter:
                raise self.error(f"cannot assign to parameter '{sym.name}'", name)
            self.check_not_initialized(sym, name)
            view = self.view(sym, name)
            if view.read_only:
                raise self.error(f"'{name}' is assigned, but the actual argument passed for "
                                 f"it is {view.what}", name)
            ref = self.array_ref(name, list(lhs_node.items[1].items), lhs_node)
            return ref, view.dtype
        if isinstance(lhs_node, F.Data_Ref):
            from f2loopy.frontend.derived_types import component_access
            leaf, index = component_access(self, lhs_node)
            if index is None:
                return self.lower_assignee(F.Name(leaf.name))
            sym = leaf
            view = self.view(sym, sym.name)
            if view.read_only:
                raise self.error(f"'{lhs_node}' is assigned, but the actual argument passed "
                                 f"for it is {view.what}", sym.path[-1])
            ref = self.array_ref(sym.name, index, lhs_node)
            if ref is None:
                raise self.error(f"component '{'%'.join(sym.path)}' is not an array",
                                 sym.path[-1])
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
                                     f"{type_name(lhs_dtype)}", needle)
            return cast_value(rhs, lhs_dtype)
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
        if isinstance(name_node, F.Procedure_Designator):
            raise type_bound_call_error(self, name_node)
        if is_blas_xerbla(self, name):
            self.xerbla_call(node, args)
            return
        proc = self.find_procedure(name)
        if proc is None:
            refused = self.symtab.library_error(name)
            if refused is not None:
                raise refused
            from f2loopy.frontend.search_path import not_found_message
            raise self.error(not_found_message("subroutine", name, self.search_path()), name,
                             UnsupportedFeatureError)
        arg_nodes = list(args.items) if args is not None else []
        proc = self.resolve_generic(proc, arg_nodes, name)
        if proc.kind != "subroutine":
            raise self.error(f"'{name}' is a function, not a subroutine", name)
        self.inline_call(proc, arg_nodes, node)

    # }}}


def _has_nonfinite_constant(expr) -> bool:
    """Fortran has no infinite or NaN literals: one in a folded expression
    comes from an overflow (or 0.0/0.0) that the compiler would reject."""
    import dataclasses
    if isinstance(expr, (float, complex, np.floating, np.complexfloating)):
        return not np.isfinite(expr)
    if not dataclasses.is_dataclass(expr):
        return False
    return any(_nonfinite_in_field(getattr(expr, f.name)) for f in dataclasses.fields(expr))


def _nonfinite_in_field(value) -> bool:
    """:func:`_has_nonfinite_constant` of a field's value, or of any item of
    a (nested) tuple of them."""
    if isinstance(value, tuple):
        return any(_nonfinite_in_field(x) for x in value)
    return _has_nonfinite_constant(value)


def _keyword(node) -> str:
    text = str(node).strip()
    if not text:
        return type(node).__name__
    return text.split("(")[0].split()[0].lower()
