"""Calls of subroutines and functions of the same file: inlined.

A ``call`` (or a function reference) is lowered by lowering the callee's body
into the caller's kernel, with the callee's names bound to what the caller
passes:

* a scalar dummy argument refers to the caller's variable or array element
  (by reference: assignments go there), or, for an expression, to its value
  (evaluated once, before the body, into a temporary unless it is trivial;
  assigning such a dummy is an error);
* an array dummy argument views the caller's array from the element passed
  (``a``, ``a(1, i)``, or a contiguous section such as ``a(:, i)``): when the
  leading extents agree the axes map one to one (``x(k, j)`` is ``q(k, j,
  e)``), otherwise by sequence association (column-major offsets);
* local variables become fresh temporaries of the kernel; a function's
  result is a temporary, which the reference evaluates to.

Statement functions (``f(x) = x**2`` before the first executable statement)
are expanded as expressions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.ir.types import is_integer, type_name
from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.ir.expressions import is_constant, variables_read
from f2loopy.ir.folding import normalize_integer
from f2loopy.frontend.array_functions import bind_array_result, has_array_result, result_element
from f2loopy.frontend.bindings import ArrayBinding, ArrayView, ScalarBinding
from f2loopy.frontend.optionals import optional_dummies

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_host import LoweringHost, LoweringHost as _Host
else:
    _Host = object


_MAX_INLINE_DEPTH = 32


class InliningMixin(_Host):
    """Calls and function references (mixed into UnitLowering)."""

    def search_path(self):
        """The search path for procedures of other files (None: this file only)."""
        return getattr(self.registry, "search", None)

    def find_procedure(self, name):
        if self.registry is None:
            return None
        return self.registry.find(name, self.symtab, self.module_info)

    def defined_elsewhere(self, name) -> bool:
        """Whether the file being translated does not define procedure
        *name*: none is found, or the one found is another file's (on the
        search path).  The BLAS's ``xerbla`` and ``lsame`` are then the
        library's, which f2loopy knows (an error site, a built-in compare)."""
        proc = self.find_procedure(name)
        return proc is None or getattr(proc, "src", None) not in (None, self.root.src)

    def statement_function_call(self, sf, arg_nodes):
        if len(arg_nodes) != len(sf.args):
            raise self.error(f"statement function '{sf.name}' takes {len(sf.args)} "
                             f"argument(s), got {len(arg_nodes)}", sf.name)
        values = {}
        conv = self.converter()
        for n, node, dt in zip(sf.args, arg_nodes, sf.arg_dtypes, strict=True):
            v = conv(node.items[1] if isinstance(node, F.Actual_Arg_Spec) else node)
            values[n.lower()] = self.convert_for_assignment(v, dt, sf.name)
        with self.names.scope(values):
            body = self.converter()(sf.body)
        return self.convert_for_assignment(body, sf.dtype, sf.name)

    def inline_call(self, proc, actual_nodes, node, result_into=None):
        """Lower *proc* (a subroutine or function of the file) into this
        kernel; return the result variable for a function.  A result of
        derived type goes to variable *result_into* (a name of that type:
        see :func:`f2loopy.frontend.derived_values.call_function`)."""
        stack = self.st.call_stack
        if proc.name.lower() in [s.lower() for s in stack] or \
                proc.name.lower() == self.root.unit_name.lower():
            raise self.error(f"recursive call of '{proc.name}' is not supported", proc.name,
                             UnsupportedFeatureError)
        if len(stack) >= _MAX_INLINE_DEPTH:
            raise self.error("calls nested too deeply", proc.name, UnsupportedFeatureError)
        callee = proc.prepare(self.src, self.registry)
        array_result = has_array_result(proc, callee)       # f2loopy.frontend.array_functions
        if self.elemental is not None and not array_result and any(
                has_array_operand(self, a) for a in actual_nodes):
            return self.elemental_call(proc, actual_nodes)      # f2loopy.frontend.elemental
        actuals = self.match_arguments(proc, callee.dummies, actual_nodes, optional={
            d.lower() for d in optional_dummies(callee.symtab, callee.dummies)})
        if callee.procedure_dummies:
            # inlined specialised to the actual procedures: its calls of a
            # dummy procedure are calls of the procedure passed
            from f2loopy.frontend.procedure_dummies import specialise_call
            proc = specialise_call(self, proc, callee, actuals)
            callee = proc.prepare(self.src, self.registry)
            actuals = [None if d in callee.procedure_dummies else a
                       for d, a in zip(callee.dummies, actuals, strict=True)]
        # derived-type arguments are bound component by component
        from f2loopy.frontend.derived_values import expand_derived_arguments
        rsym = callee.symtab.get(callee.result_name) if proc.kind == "function" else None
        formal = list(callee.dummies)
        if rsym is not None and rsym.derived is not None:
            if result_into is None:
                raise self.error(f"'{proc.name}' returns a value of type({rsym.derived.name}), "
                                 "which cannot be used here: assign it to a variable of the "
                                 "type, pass it as an argument or apply an operator to it",
                                 proc.name, UnsupportedFeatureError)
            formal.append(callee.result_name)       # (bound like an argument)
            actuals = [*actuals, result_into]
        dummies, actuals = expand_derived_arguments(self, proc, callee, actuals, formal)
        child = self.inlined_lowering(proc, callee, dummies, actuals)
        with self.array_expression(None):
            scalars = [(d, a) for d, a in zip(dummies, actuals, strict=True)
                       if a is not None and not callee.symtab.get(d).is_array]
            arrays = [(d, a) for d, a in zip(dummies, actuals, strict=True)
                      if a is not None and callee.symtab.get(d).is_array]
            for d, a in scalars:
                child.bindings[d.lower()] = self.bind_scalar(proc, callee, d, a)
            # before the arrays: a dummy's bounds may read the host's
            # variables (x(m, n) with m, n of the host)
            self.bind_host_variables(proc, callee, child)
            changed = self.snapshot_bindings(child, callee)
            for d, a in arrays:
                child.bindings[d.lower()] = self.bind_array(proc, callee, child, d, a,
                                                            changed)
            result = None
            if array_result:
                result = bind_array_result(self, child, proc, callee)
            elif proc.kind == "function" and result_into is None:
                assert rsym is not None
                if callee.result_name.lower() in callee.do_variables:
                    # the result is also a loop variable (LAPACK's iladlc runs
                    # 'do iladlc = n, 1, -1' and returns from inside): its
                    # value is the loop variable's temporary
                    result = child.loop_scalar(rsym)
                else:
                    tmp = self.new_temporary(proc.name, rsym.dtype)
                    result = p.Variable(tmp)
                    child.bindings[callee.result_name.lower()] = ScalarBinding(
                        result, True, "the function result")
            with self.inlining(proc.name):
                child.lower_body(callee.body)
        if array_result:
            return result_element(self, proc, result)
        return result

    def bind_host_variables(self, proc, callee, child) -> None:
        """Bind the host's variables that internal procedure *proc* uses
        (host association) to the host's own: scalars by reference, arrays
        as the host sees them."""
        if not callee.host_names:
            return
        host: LoweringHost | None = self
        while host is not None and host.unit_name.lower() != proc.host.name.lower():
            host = host.parent
        if host is None:
            raise self.error(f"internal procedure '{proc.name}' is called outside its host "
                             f"'{proc.host.name}'", proc.name)
        for name in callee.host_names:
            sym = host.symbol(name)
            if name in callee.written and (sym.intent == "in" or (
                    host.is_array_symbol(sym) and host.view(sym, name).read_only)):
                what = "an intent(in) argument" if sym.intent == "in" else \
                    host.view(sym, name).what
                raise self.error(f"internal procedure '{proc.name}' assigns '{name}' of its "
                                 f"host '{proc.host.name}', which is {what}", proc.name)
            if host.is_array_symbol(sym):
                child.bindings[name] = ArrayBinding(host.view(sym, name))
            else:
                child.bindings[name] = host.bind_scalar(proc, callee, name, F.Name(name))

    def match_arguments(self, proc, dummies, actual_nodes, optional=frozenset()):
        """The actual arguments of a call of *proc* in the order of its
        *dummies*; None for an optional one (lower-case names in *optional*)
        the call leaves out."""
        positional, by_name = [], {}
        for a in actual_nodes:
            if isinstance(a, F.Actual_Arg_Spec):
                key, val = a.items
                by_name[str(key).lower()] = val
            else:
                if by_name:
                    raise self.error("positional argument after a keyword argument",
                                     proc.name)
                positional.append(a)
        given = len(positional) + len(by_name)
        if (given != len(dummies) and not optional) or given > len(dummies) or \
                len(positional) > len(dummies):
            raise self.error(f"'{proc.name}' takes {len(dummies)} argument(s), got "
                             f"{len(positional) + len(by_name)}", proc.name)
        out = list(positional)
        for d in dummies[len(positional):]:
            if d.lower() not in by_name and d.lower() in optional:
                out.append(None)
                continue
            if d.lower() not in by_name:
                raise self.error(f"argument '{d}' of '{proc.name}' is missing", proc.name)
            out.append(by_name.pop(d.lower()))
        if by_name:
            raise self.error(f"'{proc.name}' has no argument '{next(iter(by_name))}'",
                             next(iter(by_name)))
        return out

    def _check_type(self, proc, dummy, have, want):
        if np.dtype(have) != np.dtype(want):
            raise self.error(f"argument '{dummy}' of '{proc.name}' is {type_name(want)}, but "
                             f"the actual argument is {type_name(have)}", proc.name)

    def bind_scalar(self, proc, callee, dummy, node):
        dsym = callee.symtab.get(dummy)
        from f2loopy.frontend.characters import is_character
        if is_character(dsym.dtype):
            if dummy.lower() in callee.written:
                from f2loopy.frontend.messages import bind_message
                message = bind_message(self, node)      # the kernel's message argument
                if message is not None:
                    return message
                raise self.error(f"character argument '{dummy}' of '{proc.name}' is "
                                 "assigned: only character arguments used as flags are "
                                 "supported", proc.name, UnsupportedFeatureError)
            return self.bind_character(proc, dsym, node)
        writes = dummy.lower() in callee.written
        if isinstance(node, F.Name):
            name = str(node)
            scope = self.loop_for(name)
            if scope is not None:
                self._check_type(proc, dummy, np.dtype(np.int32), dsym.dtype)
                return ScalarBinding(scope.value, False, "a loop variable")
            sym = self.symbol(name)
            if self.is_array_symbol(sym) and _without_interface(self, proc):
                # what compiled code does: the dummy is the array's first element
                view = self.view(sym, name)
                if writes and view.read_only:
                    raise self.error(f"'{proc.name}' assigns argument '{dummy}', but the "
                                     f"actual argument is {view.what}", name)
                self._check_type(proc, dummy, view.dtype, dsym.dtype)
                return ScalarBinding(view.element(view.lbounds), writes,
                                     "an array's first element")
            if self.is_array_symbol(sym):
                raise self.error(f"array '{name}' is passed for scalar argument '{dummy}' of "
                                 f"'{proc.name}' (an array needs an array dummy: declare "
                                 f"'{dummy}' with dimensions there, e.g. {dummy}(*), or pass "
                                 "one element)", name)
            if sym.is_parameter:
                self._check_type(proc, dummy, sym.dtype, dsym.dtype)
                return ScalarBinding(sym.value, False, "a constant")
            if writes:
                expr, dt = self.scalar_target(sym, name)
                self._check_type(proc, dummy, dt, dsym.dtype)
                return ScalarBinding(expr, True, "a variable")
            expr = self.resolve_name(name, node)
            self._check_type(proc, dummy, self.checked_dtype(expr), dsym.dtype)
            if is_constant(expr):
                return ScalarBinding(expr, False, "a constant")
            return ScalarBinding(expr, False, "a variable")
        if isinstance(node, F.Part_Ref) and not any(
                isinstance(s, F.Subscript_Triplet) for s in node.items[1].items):
            name = str(node.items[0])
            element_of = self.symtab.get(name)
            if element_of is not None and self.is_array_symbol(element_of):
                view = self.view(element_of, name)
                if writes and view.read_only:
                    raise self.error(f"'{proc.name}' assigns argument '{dummy}', but the "
                                     f"actual argument is {view.what}", name)
                expr = self.array_ref(name, list(node.items[1].items), node)
                self._check_type(proc, dummy, view.dtype, dsym.dtype)
                return ScalarBinding(expr, writes, "an array element")
        if writes and isinstance(node, F.Data_Ref):
            # a component (p%x, pts(i)%w(k)): by reference like a variable
            target, dt = self.lower_assignee(node)
            self._check_type(proc, dummy, dt, dsym.dtype)
            return ScalarBinding(target, True, "a component")
        value = self.expr(node)
        if writes:
            raise self.error(f"'{proc.name}' assigns argument '{dummy}', but the actual "
                             "argument is an expression", str(node))
        self._check_type(proc, dummy, self.checked_dtype(value), dsym.dtype)
        if is_constant(value) or isinstance(value, p.Variable) or \
                _is_index_arithmetic(value, self):
            return ScalarBinding(value, False, "an expression")
        tmp = self.new_temporary(f"{dummy}_arg", dsym.dtype)
        self.add_assignment(p.Variable(tmp), dsym.dtype, value, str(node), base_id=tmp)
        return ScalarBinding(p.Variable(tmp), False, "an expression")

    def snapshot_bindings(self, child, callee) -> set:
        """Actual arguments are evaluated at the call: if the callee may change
        a variable that an expression argument or the subscripts of an element
        argument read, evaluate them first.  Returns the changed variables."""
        changed = set()
        for d, b in child.bindings.items():
            if isinstance(b, ScalarBinding) and b.writable and d in callee.written and \
                    isinstance(b.expr, p.Variable):
                changed.add(b.expr.name)
        if not changed:
            return changed
        for d, b in list(child.bindings.items()):
            if not isinstance(b, ScalarBinding):      # (a host's array)
                continue
            e = b.expr
            if isinstance(e, p.Subscript) and b.writable:
                idx = e.index if isinstance(e.index, tuple) else (e.index,)
                new_idx = tuple(self.snapshot_index(i, changed, f"{d}_index{k + 1}")
                                for k, i in enumerate(idx))
                child.bindings[d] = ScalarBinding(
                    p.Subscript(e.aggregate, new_idx if len(new_idx) > 1 else new_idx[0]),
                    b.writable, b.what)
            elif not b.writable and not isinstance(e, p.Variable) and \
                    variables_read(e) & changed:
                dt = callee.symtab.get(d).dtype
                tmp = self.new_temporary(f"{d}_arg", dt)
                self.add_assignment(p.Variable(tmp), dt, e, None, base_id=tmp)
                child.bindings[d] = ScalarBinding(p.Variable(tmp), False, b.what)
        return changed

    def snapshot_index(self, expr, changed, base):
        if not (variables_read(expr) & changed):
            return expr
        tmp = self.new_temporary(base, np.int32)
        self.add_assignment(p.Variable(tmp), np.dtype(np.int32), expr, None, base_id=tmp)
        return p.Variable(tmp)

    def bind_array(self, proc, callee, child, dummy, node, changed=frozenset()):
        dsym = callee.symtab.get(dummy)
        writes = dummy.lower() in callee.written
        if dsym.path is not None and "allocatable" in dsym.attributes:
            return self.bind_allocatable_component(proc, dsym, node, writes)
        if isinstance(node, F.Data_Ref):     # q%w, p(i)%w: the flattened component
            from f2loopy.frontend.derived_types import array_designator
            node = array_designator(self, node) or node
        if any(hi == ":" for _, hi in dsym.dims):
            return self.bind_assumed_shape(proc, child, dsym, node, writes, changed)
        if isinstance(node, F.Name):
            sym = self.symtab.get(str(node))
            if sym is None or not self.is_array_symbol(sym):
                raise self.error(f"argument '{dummy}' of '{proc.name}' is an array, but "
                                 f"'{node}' is not", str(node))
            view = self.view(sym, str(node))
            start = list(view.lbounds)
        elif isinstance(node, F.Part_Ref):
            name = str(node.items[0])
            sym = self.symtab.get(name)
            if sym is None or not self.is_array_symbol(sym):
                raise self.error(f"argument '{dummy}' of '{proc.name}' is an array, but "
                                 f"'{name}' is not", name)
            view = self.view(sym, name)
            subs = list(node.items[1].items)
            if len(subs) != view.rank:
                raise self.error(f"'{sym.name}' has {view.rank} dimension(s) but "
                                 f"{len(subs)} subscript(s) are given", name)
            if not self.section_is_contiguous(view, subs):
                return self.bind_strided_section(proc, callee, child, dsym, view, subs, name,
                                                 writes, changed)
            start = self.section_start(view, subs, proc, name)
        elif isinstance(node, F.Array_Constructor):        # [s, t, u]: a temporary
            from f2loopy.frontend.constructor_actuals import constructor_view
            view = constructor_view(self, node, dummy, proc.name)
            start = list(view.lbounds)
        else:
            raise self.error(f"argument '{dummy}' of '{proc.name}' is an array: pass an array, "
                             "an array element or a contiguous section", str(node))
        self._check_type(proc, dummy, view.dtype, dsym.dtype)
        if writes and view.read_only:
            raise self.error(f"'{proc.name}' assigns argument '{dummy}', but the actual "
                             f"argument is {view.what}", str(node))
        start = [self.snapshot_index(x, changed, f"{dummy}_start{k + 1}")
                 for k, x in enumerate(start)]
        lbs, ubs = child.bounds_of(dsym)
        mapper = _association(view, start, lbs, ubs)
        if mapper is None:
            raise self.error(f"cannot pass '{node}' for argument '{dummy}' of '{proc.name}': "
                             "the leading extents of the dummy argument are not known",
                             str(node), UnsupportedFeatureError)
        return ArrayBinding(ArrayView(dsym.name, view.ir_name, view.dtype, lbs, ubs,
                                      mapper=mapper, read_only=view.read_only,
                                      what=view.what))

    def bind_allocatable_component(self, proc, dsym, node, writes):
        """Bind allocatable (or pointer) component *dsym* of a derived-type
        dummy to the same component of the actual argument: the very array,
        with its bounds (an allocatable is not re-based as an assumed-shape
        dummy is)."""
        sym = self.symtab.get(str(node)) if isinstance(node, F.Name) else None
        if sym is None or "allocatable" not in sym.attributes:
            raise self.error(f"argument '{'%'.join(dsym.path)}' of '{proc.name}' is "
                             f"allocatable, but '{node}' is not", str(node))
        view = self.view(sym, str(node))
        self._check_type(proc, dsym.name, view.dtype, dsym.dtype)
        if writes and view.read_only:
            raise self.error(f"'{proc.name}' assigns argument '{'%'.join(dsym.path)}', but "
                             f"the actual argument is {view.what}", str(node))
        return ArrayBinding(view)

    def bind_assumed_shape(self, proc, child, dsym, node, writes, changed):
        """Bind assumed-shape dummy *dsym* to a whole array or an array
        section (any strides): axis *k* of the dummy is the *k*-th section
        axis of the actual argument, and takes its extent."""
        dummy = dsym.name
        name = str(node.items[0]) if isinstance(node, F.Part_Ref) else str(node)
        sym = self.symtab.get(name) if isinstance(node, (F.Name, F.Part_Ref)) else None
        if sym is None or not self.is_array_symbol(sym):
            raise self.error(f"argument '{dummy}' of '{proc.name}' has an assumed shape: pass "
                             "an array or an array section", str(node))
        view = self.view(sym, name)
        if isinstance(node, F.Name):
            if view.ubounds[-1] is None:
                raise self.error(f"assumed-size array '{name}' cannot be passed for "
                                 f"assumed-shape argument '{dummy}' of '{proc.name}' (its "
                                 "size is unknown): pass a section", name)
            axes = [(view.lbounds[k], view.ubounds[k], 1) for k in range(view.rank)]
            fixed = [None] * view.rank
        else:
            subs = list(node.items[1].items)
            if len(subs) != view.rank:
                raise self.error(f"'{sym.name}' has {view.rank} dimension(s) but "
                                 f"{len(subs)} subscript(s) are given", name)
            axes, fixed = [], []
            for k, s in enumerate(subs):
                if isinstance(s, F.Subscript_Triplet):
                    lo, hi, st = self.triplet(view, k, s)
                    axes.append((self.snapshot_index(lo, changed, f"{dummy}_start{k + 1}"),
                                 self.snapshot_index(hi, changed, f"{dummy}_end{k + 1}"), st))
                    fixed.append(None)
                else:
                    fixed.append(self.snapshot_index(self.subscript(s, name), changed,
                                                     f"{dummy}_index{k + 1}"))
        if len(axes) != len(dsym.dims):
            raise self.error(f"argument '{dummy}' of '{proc.name}' has {len(dsym.dims)} "
                             f"dimension(s), but the actual argument has {len(axes)}", name)
        self._check_type(proc, dummy, view.dtype, dsym.dtype)
        if writes and view.read_only:
            raise self.error(f"'{proc.name}' assigns argument '{dummy}', but the actual "
                             f"argument is {view.what}", name)
        extents = []
        for lo, hi, st in axes:
            count = p.FloorDiv(p.Sum((hi, p.Product((-1, lo)), st)), st) if st != 1 else \
                p.Sum((hi, p.Product((-1, lo)), 1))
            extents.append(normalize_integer(p.Call(p.Variable("max"), (0, count))))
        lbs, ubs = child.bounds_of(dsym, extents)

        def mapper(idx):
            out, j = [], 0
            for f in fixed:
                if f is not None:
                    out.append(f)
                    continue
                lo, _, st = axes[j]
                offset = p.Sum((idx[j], p.Product((-1, lbs[j]))))
                out.append(normalize_integer(p.Sum((lo, p.Product((st, offset))))))
                j += 1
            return view.ir_indices(out)
        return ArrayBinding(ArrayView(dsym.name, view.ir_name, view.dtype, lbs, ubs,
                                      mapper=mapper, read_only=view.read_only,
                                      what=view.what))

    def section_is_contiguous(self, view, subs) -> bool:
        """Whether the section *subs* of *view* is one block of memory in
        Fortran order (leading full axes, then one unit-stride range, then
        single elements)."""
        axes = [isinstance(s, F.Subscript_Triplet) for s in subs]
        if not any(axes):
            return True
        m = axes.index(False) if False in axes else len(axes)
        if any(axes[m:]):
            return False
        for k in range(m):
            lo, hi, st = self.triplet(view, k, subs[k])
            full = normalize_integer(lo) == normalize_integer(view.lbounds[k]) and \
                view.ubounds[k] is not None and \
                normalize_integer(hi) == normalize_integer(view.ubounds[k])
            if st != 1 or (k < m - 1 and not full):
                return False
        return True

    def bind_strided_section(self, proc, callee, child, dsym, view, subs, name, writes,
                             changed):
        """Bind explicit-shape dummy *dsym* to a section that is not one block
        of memory (``a(i, 1:n)``, ``b(1:n:2)``).  Fortran passes such a section
        as a contiguous copy (copy-in/copy-out) whose elements the dummy sees
        in array element order; here the dummy's elements map onto the
        section's in that order instead, with its stride.  Sections with one
        range are translated; a section over several axes is refused."""
        dummy = dsym.name
        ranges = [k for k, s in enumerate(subs) if isinstance(s, F.Subscript_Triplet)]
        if len(ranges) != 1:
            raise self.error(f"the section '{name}(...)' passed to '{proc.name}' is not "
                             f"contiguous and spans {len(ranges)} axes; declare argument "
                             f"'{dummy}' with an assumed shape ({dummy}(:, ...)) to pass it",
                             name, UnsupportedFeatureError)
        self._check_type(proc, dummy, view.dtype, dsym.dtype)
        if writes and view.read_only:
            raise self.error(f"'{proc.name}' assigns argument '{dummy}', but the actual "
                             f"argument is {view.what}", name)
        axis = ranges[0]
        lo, _, st = self.triplet(view, axis, subs[axis])
        lo = self.snapshot_index(lo, changed, f"{dummy}_start{axis + 1}")
        fixed = [None if k == axis else
                 self.snapshot_index(self.subscript(s, name), changed, f"{dummy}_index{k + 1}")
                 for k, s in enumerate(subs)]
        lbs, ubs = child.bounds_of(dsym)
        rd = len(lbs)
        d_ext = [None if ubs[k] is None else normalize_integer(
            p.Sum((ubs[k], p.Product((-1, lbs[k])), 1))) for k in range(rd)]
        if any(e is None for e in d_ext[:-1]):
            raise self.error(f"cannot pass '{name}(...)' for argument '{dummy}' of "
                             f"'{proc.name}': the leading extents of the dummy argument are "
                             "not known", name, UnsupportedFeatureError)

        def mapper(idx):
            # the element's position in the dummy (array element order) is
            # its position in the section
            offset, stride = 0, 1
            for k in range(rd):
                rel = p.Sum((idx[k], p.Product((-1, lbs[k]))))
                offset = p.Sum((offset, p.Product((stride, rel))))
                if k < rd - 1:
                    stride = p.Product((stride, d_ext[k]))
            out = list(fixed)
            out[axis] = normalize_integer(p.Sum((lo, p.Product((st, offset)))))
            return view.ir_indices(out)
        return ArrayBinding(ArrayView(dsym.name, view.ir_name, view.dtype, lbs, ubs,
                                      mapper=mapper, read_only=view.read_only,
                                      what=view.what))

    def section_start(self, view, subs, proc, name):
        """First element of an element or contiguous-section actual argument."""
        start = []
        axes = [isinstance(s, F.Subscript_Triplet) for s in subs]
        if any(axes):
            m = axes.index(False) if False in axes else len(axes)
            if any(axes[m:]):
                raise self.error(f"the section '{name}(...)' passed to '{proc.name}' is not "
                                 "contiguous (only leading ':' dimensions are)", name,
                                 UnsupportedFeatureError)
            for k, s in enumerate(subs):
                if axes[k]:
                    lo, hi, st = self.triplet(view, k, s)
                    full = normalize_integer(lo) == normalize_integer(view.lbounds[k]) and \
                        view.ubounds[k] is not None and \
                        normalize_integer(hi) == normalize_integer(view.ubounds[k])
                    if st != 1 or (k < m - 1 and not full):
                        raise self.error(f"the section '{name}(...)' passed to '{proc.name}' "
                                         "is not contiguous", name, UnsupportedFeatureError)
                    start.append(lo)
                else:
                    start.append(self.subscript(s, name))
            return start
        return [self.subscript(s, name) for s in subs]


def assigned_once(body) -> frozenset:
    """Lower-case names that exactly one assignment statement of *body*
    assigns and that are no loop or forall variable, and appear in no call's
    or function reference's arguments (a callee might assign them) and no
    ``associate`` (an associate name might)."""
    from fparser.two.utils import walk
    count: dict = {}
    excluded = set()
    for root in body:
        for node in walk(root, (F.Assignment_Stmt, F.Loop_Control, F.Call_Stmt,
                                F.Function_Reference, F.Part_Ref, F.Association,
                                F.Forall_Triplet_Spec)):
            if isinstance(node, F.Assignment_Stmt):
                lhs = node.items[0]
                name = str(lhs.items[0] if isinstance(lhs, F.Part_Ref) else lhs).lower()
                count[name] = count.get(name, 0) + 1
            elif isinstance(node, F.Loop_Control):
                if node.items[1] is not None:
                    excluded.add(str(node.items[1][0]).lower())
            elif isinstance(node, (F.Association, F.Forall_Triplet_Spec)):
                # an associate name may write its selector; a forall index
                excluded.update(str(n).lower() for n in walk(node, F.Name))
            elif node.items[1] is not None:
                excluded.update(str(n).lower() for n in walk(node.items[1], F.Name))
    return frozenset(n for n, c in count.items() if c == 1 and n not in excluded)


def has_array_operand(lowering, node) -> bool:
    """Whether actual argument *node* has an array section or a whole array."""
    if isinstance(node, F.Actual_Arg_Spec):
        node = node.items[1]
    if isinstance(node, F.Subscript_Triplet):
        return True
    if isinstance(node, F.Name):
        sym = lowering.symtab.get(str(node))
        return sym is not None and lowering.is_array_symbol(sym)
    if isinstance(node, F.Intrinsic_Function_Reference):
        fname = str(node.items[0]).lower()
        args = list(node.items[1].items) if node.items[1] is not None else []
        if fname in ("dot_product", "size", "lbound", "ubound"):
            return False           # scalar results
        if fname in ("sum", "product", "maxval", "minval", "count", "any", "all"):
            # scalar results unless reduced along one dimension
            return any(isinstance(a, F.Actual_Arg_Spec) and str(a.items[0]).lower() == "dim"
                       for a in args) or (
                len(args) >= 2 and not isinstance(args[1], F.Actual_Arg_Spec) and
                not has_array_operand(lowering, args[1]))
    items = list(getattr(node, "items", ()) or ())
    if isinstance(node, (F.Part_Ref, F.Function_Reference, F.Intrinsic_Function_Reference,
                         F.Structure_Constructor)):
        items = items[1:]          # the name itself
    return any(has_array_operand(lowering, ch) for ch in items if hasattr(ch, "items"))


def _without_interface(lowering, proc) -> bool:
    """Whether a call of *proc* from *lowering* has no explicit interface, so
    that gfortran passes an array for a scalar dummy (the first element's
    address; serial stubs such as pyOM2's ``border_exchg_xy(is, ie, js, je,
    a)`` with ``real*8 :: a`` do so): an external procedure of another file.
    A module or internal procedure, one defined in the same file (which
    gfortran checks), or one an interface block of the caller describes, has
    one."""
    return proc.module is None and proc.host is None and proc.src is not None and \
        proc.src.filename != lowering.src.filename and \
        proc.name.lower() not in lowering.symtab.interfaces


def _is_index_arithmetic(expr, lowering) -> bool:
    """Integer arithmetic on variables and constants (cheap to repeat)."""
    if isinstance(expr, (p.Subscript, p.Call)):
        return False
    if not is_integer(lowering.checked_dtype(expr)):
        return False
    children = getattr(expr, "children", None)
    if children is None:
        return isinstance(expr, p.Variable) or is_constant(expr)
    return all(_is_index_arithmetic(c, lowering) for c in children)


def _same(a, b) -> bool:
    return normalize_integer(a) == normalize_integer(b)


def _association(view, start, lbs, ubs):
    """Map the dummy's subscripts to the actual view's (sequence association),
    or None if the dummy's leading extents are unknown.

    When the leading extents agree the axes map one to one; when the dummy
    may run past the end of the actual's axis it starts on (``x(*)`` passed
    ``a(1, j)``), the element is found from the memory offset, exactly."""
    rd, ra = len(lbs), view.rank
    d_ext = [None if ubs[k] is None else normalize_integer(
        p.Sum((ubs[k], p.Product((-1, lbs[k])), 1))) for k in range(rd)]
    a_ext = [view.extent(k) for k in range(ra)]
    alb = view.lbounds
    aligned = rd <= ra and all(
        d_ext[k] is not None and a_ext[k] is not None and _same(d_ext[k], a_ext[k])
        and _same(start[k], alb[k]) for k in range(rd - 1))
    if aligned:
        last = rd - 1
        fits = last == ra - 1 or (d_ext[last] is not None and a_ext[last] is not None and
                                  _provably_le(p.Sum((start[last], p.Product((-1, alb[last])),
                                                      d_ext[last])), a_ext[last]))
        if fits:
            def mapper(idx):
                out = []
                for k in range(rd):
                    base = alb[k] if k < rd - 1 else start[k]
                    out.append(normalize_integer(p.Sum((base, idx[k],
                                                        p.Product((-1, lbs[k]))))))
                out.extend(start[rd:])
                return view.ir_indices(out)
            return mapper
    if any(e is None for e in d_ext[:-1]):
        return None

    def dummy_offset(idx):
        offset, stride = 0, 1
        for k in range(rd):
            rel = p.Sum((idx[k], p.Product((-1, lbs[k]))))
            offset = p.Sum((offset, p.Product((stride, rel))))
            if k < rd - 1:
                stride = p.Product((stride, d_ext[k]))
        return offset

    if ra == 1:
        def linear(idx):
            return view.ir_indices([normalize_integer(p.Sum((start[0], dummy_offset(idx))))])
        return linear

    def exact(idx):
        # memory offset from the actual's first element, then back to subscripts
        strides, stride = [], 1
        for k in range(ra):
            strides.append(stride)
            if k < ra - 1:
                stride = normalize_integer(p.Product((stride, a_ext[k])))
        total = dummy_offset(idx)
        for k in range(ra):
            total = p.Sum((total, p.Product((strides[k], p.Sum((start[k],
                                                                p.Product((-1, alb[k]))))))))
        total = normalize_integer(total)
        out = []
        for k in range(ra):
            q = total if k == 0 else p.FloorDiv(total, strides[k])
            if k < ra - 1:
                q = p.Call(p.Variable("modulo"), (q, a_ext[k]))
            out.append(normalize_integer(p.Sum((alb[k], q))))
        return view.ir_indices(out)
    return exact


def _provably_le(a, b) -> bool:
    diff = normalize_integer(p.Sum((a, p.Product((-1, b)))))
    return isinstance(diff, (int, np.integer)) and int(diff) <= 0
