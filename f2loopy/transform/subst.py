"""Substitution rules as transformations: assignment_to_subst, extract_subst,
expand_subst."""

from __future__ import annotations

import islpy as isl

import pymbolic.primitives as p

from f2loopy.diagnostics import TransformError
from f2loopy.ir.expressions import index_tuple, substitute, variables_read
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.kernel import Assignment, Kernel, SubstitutionRule
from f2loopy.transform.rules import (
    RuleAwareRewriter, map_instruction_expressions, canonicalize_rules, expand_rules, find_one_rule_matching,
    rule_calls, used_rules)
from f2loopy.transform.util import for_each_kernel, resolve_variable


def _transitive_deps(kernel) -> dict:
    by_id = kernel.id_to_insn
    memo: dict = {}

    def deps(i):
        if i in memo:
            return memo[i]
        memo[i] = set()
        out = set()
        for d in by_id[i].depends_on:
            if d in by_id:
                out.add(d)
                out |= deps(d)
        memo[i] = out
        return out
    return {i: deps(i) for i in by_id}


def _replace_reads(kernel, name, make_call, insn_ids=None):
    """Replace reads of variable *name* (``name`` or ``name(idx)``) by
    ``make_call(indices)`` in instructions and rule bodies."""
    def leaf(expr, bound):
        return _replace_reads_expr(expr, name, make_call)
    rw = RuleAwareRewriter(kernel.substitutions, leaf)
    # only instructions that read the variable, directly or through rules
    rules = kernel.substitutions
    reading_rules = {n for n, r in rules.items() if name in variables_read(r.expression)}
    changed = True
    while changed:
        changed = False
        for n, r in rules.items():
            if n not in reading_rules and {c.function.name for c in
                                           rule_calls(r.expression, rules)} & reading_rules:
                reading_rules.add(n)
                changed = True
    insns = []
    for insn in kernel.instructions:
        exprs = insn.read_expressions()
        touches = name in variables_read(*exprs) or any(
            c.function.name in reading_rules for e in exprs for c in rule_calls(e, rules))
        if touches and (insn_ids is None or insn.id in insn_ids):
            if isinstance(insn, Assignment):
                insn = insn.copy(expression=rw(insn.expression),
                                 predicates=tuple(rw(x) for x in insn.predicates),
                                 assignee=_replace_in_assignee_indices(insn.assignee, rw))
            else:
                insn = insn.copy(predicates=tuple(rw(x) for x in insn.predicates))
        insns.append(insn)
    return kernel.copy(instructions=tuple(insns), substitutions=FrozenMap(rw.rules))


def _replace_in_assignee_indices(assignee, rw):
    if isinstance(assignee, p.Subscript):
        idx = tuple(rw(i) for i in index_tuple(assignee))
        return p.Subscript(assignee.aggregate, idx if len(idx) != 1 else idx[0])
    return assignee


def _replace_reads_expr(expr, name, make_call):
    from f2loopy.ir.expressions import Rewriter

    class _R(Rewriter):
        def map_variable(self, e, *a, **k):
            return make_call(()) if e.name == name else e

        def map_subscript(self, e, *a, **k):
            idx = tuple(self.rec(i) for i in index_tuple(e))
            if e.aggregate.name == name:
                return make_call(idx)
            if all(x is y for x, y in zip(idx, index_tuple(e))):
                return e
            return p.Subscript(e.aggregate, idx if len(idx) != 1 else idx[0])

        def map_call(self, e, *a, **k):
            params = tuple(self.rec(x) for x in e.parameters)
            if all(x is y for x, y in zip(params, e.parameters)):
                return e
            return p.Call(e.function, params)
    return _R()(expr)


@for_each_kernel
def assignment_to_subst(kernel: Kernel, lhs_name: str, extra_arguments=(), within=None,
                        force_retain_argument: bool = False) -> Kernel:
    """Replace the temporary *lhs_name* by a substitution rule ``<name>_subst``.

    The one instruction assigning it is removed; every read becomes a call of
    the rule, which stands for the assigned expression (for an array
    temporary assigned as ``t(i, j) = ...`` the rule takes the subscripts as
    arguments).  Refused where that would change results: the variable must
    have exactly one writer, every read must see the value of the current
    iteration of the writer's loops, and nothing the expression reads may be
    written in between.  loopy's *within* and *extra_arguments* are refused
    (every read is replaced; the arguments are the assignment's subscripts).
    """
    name = resolve_variable(kernel, lhs_name)
    if within is not None or extra_arguments:
        given = "within=" if within is not None else "extra_arguments="
        raise TransformError(f"assignment_to_subst: {given} is not supported: the rule "
                             f"replaces every read of '{name}' and takes the subscripts of its "
                             "assignment as arguments")
    if name not in kernel.temporaries:
        raise TransformError(f"assignment_to_subst: '{name}' is an argument; only temporaries "
                             "can become substitution rules")
    writers = [i for i in kernel.instructions if name in i.assignee_names()]
    if len(writers) != 1:
        raise TransformError(f"assignment_to_subst: '{name}' is assigned by {len(writers)} "
                             "instructions; it needs exactly one")
    w = writers[0]
    if not isinstance(w, Assignment):
        raise TransformError(f"assignment_to_subst: '{name}' is not assigned by an assignment")
    if w.predicates:
        raise TransformError(f"assignment_to_subst: the assignment to '{name}' is conditional "
                             f"({', '.join(map(str, w.predicates))}); its value is not defined "
                             "everywhere", w.span)
    rule_name = f"{name}_subst"
    if rule_name in kernel.substitutions or kernel.has_variable(rule_name):
        raise TransformError(f"assignment_to_subst: the name '{rule_name}' is taken")
    if any(name in d.get_var_names(isl.dim_type.param) for d in kernel.domains):
        # a data-dependent loop bound: domains cannot call rules
        raise TransformError(f"assignment_to_subst: '{name}' is a loop bound (a domain "
                             "parameter); it cannot become a substitution rule", w.span)

    # arguments: the subscripts of an array temporary must be distinct inames
    args = []
    body = w.expression
    if isinstance(w.assignee, p.Subscript):
        idx = index_tuple(w.assignee)
        if not all(isinstance(i, p.Variable) and i.name in w.within_inames for i in idx) or \
                len({i.name for i in idx}) != len(idx):
            raise TransformError(f"assignment_to_subst: '{name}' is assigned at subscripts "
                                 f"{', '.join(map(str, idx))}; they must be distinct loop "
                                 "indices", w.span)
        args = [f"{name}_arg{k}" for k in range(len(idx))]
        body = substitute(body, {i.name: p.Variable(a) for i, a in zip(idx, args)})
    from f2loopy.transform.iname import reduction_inames
    expanded = expand_rules(body, kernel.substitutions)
    body_inames = variables_read(expanded) & set(kernel.all_inames())
    # the inames a reduction in the value runs over are its own, not the
    # loops the readers must share
    body_inames -= {a for a in args} | reduction_inames(w.copy(expression=expanded,
                                                                predicates=()))

    # every reader must use the value of the same iteration, after the writer
    tdeps = _transitive_deps(kernel)
    pos = {i.id: k for k, i in enumerate(kernel.instructions)}
    readers = [i for i in kernel.instructions if i.id != w.id and
               (name in variables_read(*i.read_expressions()) or
                name in _rule_reads_of(kernel, i))]
    inputs = variables_read(expand_rules(w.expression, kernel.substitutions)) - \
        set(kernel.all_inames())
    for r in readers:
        if w.id not in tdeps[r.id]:
            raise TransformError(f"assignment_to_subst: instruction '{r.id}' reads '{name}' "
                                 "without depending on its assignment (it may read an older "
                                 "value)", r.span)
        missing = body_inames - set(r.within_inames)
        if missing:
            raise TransformError(f"assignment_to_subst: instruction '{r.id}' reads '{name}' "
                                 f"outside loop(s) {', '.join(sorted(missing))} of its "
                                 "assignment (it needs the last value)", r.span)
        # what may run after the assignment and before (an execution of) the
        # reader: an instruction that depends on the assignment and precedes
        # the reader, one between them in program order (dependencies only
        # join conflicting accesses, so a write of an input the reader does
        # not touch is not ordered against it), and the reader itself or a
        # later instruction inside a loop around the reader that does not
        # contain the assignment (its next iteration reads the changed input)
        repeat = set(r.within_inames) - set(w.within_inames)
        for mid in kernel.instructions:
            if mid.id == w.id or not set(mid.assignee_names()) & inputs:
                continue
            k = pos[mid.id]
            between = mid.id != r.id and (
                (w.id in tdeps[mid.id] and mid.id in tdeps[r.id])
                or pos[w.id] < k < pos[r.id])
            repeated = k >= pos[r.id] and set(mid.within_inames) & repeat
            if between or repeated:
                raise TransformError(
                    f"assignment_to_subst: '{mid.id}' changes "
                    f"{', '.join(sorted(set(mid.assignee_names()) & inputs))} between the "
                    f"assignment to '{name}' and its use in '{r.id}'", mid.span)

    rules = dict(kernel.substitutions)
    rules[rule_name] = SubstitutionRule(rule_name, tuple(args), body, w.span)
    kernel = kernel.copy(substitutions=FrozenMap(rules))
    kernel = _replace_reads(kernel, name,
                            lambda idx: p.Call(p.Variable(rule_name), tuple(idx)))
    # the writer goes; whoever waited for it waits for what it waited for
    insns = []
    for i in kernel.instructions:
        if i.id == w.id:
            continue
        if w.id in i.depends_on:
            i = i.copy(depends_on=(i.depends_on - {w.id}) | w.depends_on)
        insns.append(i)
    temps = kernel.temporaries
    still_used = any(name in variables_read(*i.read_expressions()) or
                     name in i.assignee_names() for i in insns)
    if not still_used:
        temps = temps.remove(name)
    return canonicalize_rules(kernel.copy(instructions=tuple(insns), temporaries=temps))


def _rule_reads_of(kernel, insn) -> frozenset:
    from f2loopy.transform.match import _rule_reads
    return _rule_reads(kernel, insn)


@for_each_kernel
def expand_subst(kernel: Kernel, within=None) -> Kernel:
    """Expand substitution rules (those matching glob *within*, default all)
    at every use."""
    import fnmatch
    only = None if within is None else {n for n in kernel.substitutions
                                        if fnmatch.fnmatchcase(n, within)}
    insns = tuple(map_instruction_expressions(i, lambda e: expand_rules(e, kernel.substitutions, only))
                  for i in kernel.instructions)
    return canonicalize_rules(kernel.copy(instructions=insns))


@for_each_kernel
def extract_subst(kernel: Kernel, subst_name: str, template, parameters=()) -> Kernel:
    """Create rule *subst_name* from *template* (a string such as
    ``"a[i]*b[i]"`` or an expression) with *parameters*, and replace every
    occurrence of the template (with any values of the parameters) by a call."""
    from f2loopy.transform.patterns import match_template, parse_expression
    if isinstance(parameters, str):
        parameters = [s.strip() for s in parameters.split(",") if s.strip()]
    params = tuple(parameters)
    tmpl = parse_expression(template) if isinstance(template, str) else template
    if subst_name in kernel.substitutions or kernel.has_variable(subst_name):
        raise TransformError(f"extract_subst: the name '{subst_name}' is taken")
    found = []

    def leaf(expr, bound):
        from f2loopy.ir.expressions import Rewriter

        class _R(Rewriter):
            def rec(self, e, *a, **k):
                binding = match_template(tmpl, e, params)
                if binding is not None:
                    found.append(e)
                    return p.Call(p.Variable(subst_name), tuple(binding[x] for x in params))
                return super().rec(e, *a, **k)
        binding = match_template(tmpl, expr, params)
        if binding is not None:
            found.append(expr)
            return p.Call(p.Variable(subst_name), tuple(binding[x] for x in params))
        return _R()(expr)

    rules = dict(kernel.substitutions)
    rules[subst_name] = SubstitutionRule(subst_name, params, tmpl)
    rw = RuleAwareRewriter(kernel.substitutions, leaf)
    insns = tuple(map_instruction_expressions(i, rw) for i in kernel.instructions)
    if not found:
        raise TransformError(f"extract_subst: {template!r} does not occur in kernel "
                             f"'{kernel.name}'")
    rules.update(rw.rules)
    return canonicalize_rules(kernel.copy(instructions=insns, substitutions=FrozenMap(rules)))


__all__ = ["assignment_to_subst", "expand_subst", "extract_subst", "find_one_rule_matching",
           "used_rules"]
