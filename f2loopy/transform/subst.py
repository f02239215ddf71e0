"""Substitution rules as transformations: assignment_to_subst, extract_subst,
expand_subst."""

from __future__ import annotations

from collections.abc import Sequence

import islpy as isl
import pymbolic.primitives as p

from f2loopy.diagnostics import TransformError, UnsupportedArgumentError
from f2loopy.ir.expressions import Rewriter, index_tuple, substitute, variables_read
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.kernel import Assignment, Kernel, SubstitutionRule
from f2loopy.transform.rules import (
    RuleAwareRewriter, map_instruction_expressions, canonicalize_rules, expand_rules, find_one_rule_matching,
    rule_calls, used_rules)
from f2loopy.transform.util import NameNotFoundError, Names, for_each_kernel, resolve_variable


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


class _ReadReplacer(Rewriter):
    """Reads of *name* replaced by ``make_call(indices)``."""

    def __init__(self, name, make_call):
        self.name, self.make_call = name, make_call

    def map_variable(self, e, *a, **k):
        return self.make_call(()) if e.name == self.name else e

    def map_subscript(self, e, *a, **k):
        idx = tuple(self.rec(i) for i in index_tuple(e))
        if e.aggregate.name == self.name:
            return self.make_call(idx)
        if all(x is y for x, y in zip(idx, index_tuple(e), strict=True)):
            return e
        return p.Subscript(e.aggregate, idx if len(idx) != 1 else idx[0])

    def map_call(self, e, *a, **k):
        params = tuple(self.rec(x) for x in e.parameters)
        if all(x is y for x, y in zip(params, e.parameters, strict=True)):
            return e
        return p.Call(e.function, params)


def _replace_reads_expr(expr, name, make_call):
    return _ReadReplacer(name, make_call)(expr)


@for_each_kernel
def assignment_to_subst(kernel: Kernel, lhs_name: str,
                        extra_arguments: str | Sequence[str] = (), within: None = None,
                        force_retain_argument: bool = False) -> Kernel:
    """Replace the temporary *lhs_name* by substitution rules.

    Each instruction assigning it is removed; every read becomes a call of
    the rule of the assignment whose value it reads, which stands for the
    assigned expression (for an array temporary assigned as
    ``t(i, j) = ...`` the rule takes the subscripts as arguments).  With one
    assignment the rule is ``<name>_subst``; a scalar assigned several times
    in straight-line code gets ``<name>_subst_1``, ``<name>_subst_2``, ... in
    program order (a read sees the last assignment before it; an assignment
    that reads the variable calls the previous rule).

    Refused where that would change results: every read must see the value
    of the current iteration of its assignment's loops, nothing the
    expression reads may be written in between, and assignments must not be
    conditional.

    :arg extra_arguments: loop indices (a name, ``"i, j"`` or a list) that
        become further arguments of the rules (``a_subst(i) := inp[i]``);
        every call passes the reader's value of them.  Each must be a loop of
        every assignment.
    :arg within: loopy's selection of the reads to replace; refused (every
        read is replaced).
    :arg force_retain_argument: loopy's option to keep an argument that
        becomes a rule; arguments never become rules here (only temporaries
        do), so there is nothing to keep either way.
    """
    name = resolve_variable(kernel, lhs_name)
    if within is not None:
        raise UnsupportedArgumentError(
            "assignment_to_subst", "within", within,
            f"the rules replace every read of '{name}'")
    extra = _names_list(extra_arguments)
    if name not in kernel.temporaries:
        raise TransformError(f"assignment_to_subst: '{name}' is an argument; only temporaries "
                             "can become substitution rules")
    writers = [i for i in kernel.instructions if name in i.assignee_names()]
    if not writers:
        raise TransformError(f"assignment_to_subst: '{name}' is never assigned")
    rule_names = _check_writers(kernel, name, writers, extra)
    several = len(writers) > 1
    tdeps = _transitive_deps(kernel)
    pos = {i.id: k for k, i in enumerate(kernel.instructions)}
    readers = [i for i in kernel.instructions
               if name in i.read_dependency_names() or     # (cached per instruction)
               name in _rule_reads_of(kernel, i)]
    reaching = _reaching_writers(name, writers, readers, pos)

    rules = dict(kernel.substitutions)
    calls: dict = {}        # writer id -> function making the call of its rule
    for w, rule_name in zip(writers, rule_names, strict=True):
        args, body, make_call = _rule_of(kernel, name, w, rule_name, extra,
                                         reaching.get(w.id), calls)
        calls[w.id] = make_call
        inputs = variables_read(expand_rules(body, rules)) - set(kernel.all_inames())
        if several:
            inputs = inputs | {name}
        _check_readers(kernel, name, w, [r for r in readers if reaching.get(r.id) is w],
                       body, args, inputs, rules, tdeps, pos)
        rules[rule_name] = SubstitutionRule(rule_name, tuple(args), body, w.span)
    kernel = kernel.copy(substitutions=FrozenMap(rules))
    if not several:
        kernel = _replace_reads(kernel, name, calls[writers[0].id])
    else:
        for w in writers:
            ids = {r.id for r in readers if reaching.get(r.id) is w and
                   r.id not in calls}
            kernel = _replace_reads(kernel, name, calls[w.id], insn_ids=ids)
    insns = _without_writers(kernel, writers)
    temps = kernel.temporaries
    still_used = any(name in variables_read(*i.read_expressions()) or
                     name in i.assignee_names() for i in insns)
    if not still_used:
        temps = temps.remove(name)
    return canonicalize_rules(kernel.copy(instructions=tuple(insns), temporaries=temps))


def _check_writers(kernel, name, writers, extra) -> list[str]:
    """Refuse the assignments to *name* that no rule can stand for; the
    names of the rules (one per writer), checked free."""
    ended = [i for i, ex in kernel.loop_exits.items() if name in ex.flags]
    if ended:
        # the loop's own condition reads it, which no rule can stand for
        raise TransformError(f"assignment_to_subst: '{name}' ends loop '{ended[0]}' early (an "
                             "'exit' or 'do while' flag, read by the loop's condition); it "
                             "cannot become a substitution rule", writers[0].span)
    several = len(writers) > 1
    if several and not kernel.temporaries[name].is_scalar:
        raise TransformError(f"assignment_to_subst: '{name}' is assigned by {len(writers)} "
                             "instructions; an array temporary needs exactly one")
    if several and any(name in variables_read(r.expression)
                       for r in kernel.substitutions.values()):
        raise TransformError(f"assignment_to_subst: '{name}' is assigned by {len(writers)} "
                             "instructions and read by a substitution rule; which assignment "
                             "a rule reads depends on where it is called")
    for w in writers:
        if not isinstance(w, Assignment):
            raise TransformError(f"assignment_to_subst: '{name}' is not assigned by an "
                                 "assignment")
        if w.predicates:
            raise TransformError(f"assignment_to_subst: the assignment to '{name}' is "
                                 f"conditional ({', '.join(map(str, w.predicates))}); its "
                                 "value is not defined everywhere", w.span)
        missing = [e for e in extra if e not in w.within_inames]
        if missing:
            raise TransformError(f"assignment_to_subst: extra argument '{missing[0]}' is not a "
                                 f"loop of the assignment to '{name}'", w.span)
    rule_names = [f"{name}_subst"] if not several else \
        [f"{name}_subst_{k}" for k in range(1, len(writers) + 1)]
    for rule_name in rule_names:
        if rule_name in kernel.substitutions or kernel.has_variable(rule_name):
            raise TransformError(f"assignment_to_subst: the name '{rule_name}' is taken")
    if any(name in d.get_var_names(isl.dim_type.param) for d in kernel.domains):
        # a data-dependent loop bound: domains cannot call rules
        raise TransformError(f"assignment_to_subst: '{name}' is a loop bound (a domain "
                             "parameter); it cannot become a substitution rule", writers[0].span)
    return rule_names


def _reaching_writers(name, writers, readers, pos) -> dict:
    """Reader id -> the assignment whose value it reads (the last one before
    it in program order, *pos*; the only one if there is one)."""
    reaching: dict = {}
    for r in readers:
        if len(writers) == 1:
            if r.id != writers[0].id:
                reaching[r.id] = writers[0]
            continue
        before = [w for w in writers if pos[w.id] < pos[r.id]]
        if not before:
            raise TransformError(f"assignment_to_subst: instruction '{r.id}' reads '{name}' "
                                 "before its first assignment (it may read an older value)",
                                 r.span)
        reaching[r.id] = before[-1]
    return reaching


def _without_writers(kernel, writers) -> list:
    """The instructions less *writers*; whoever waited for one waits for what
    it waited for."""
    removed = {w.id: w for w in writers}
    insns = []
    for i in kernel.instructions:
        if i.id in removed:
            continue
        deps = set(i.depends_on)
        while deps & set(removed):
            for d in deps & set(removed):
                deps = (deps - {d}) | set(removed[d].depends_on)
        insns.append(i.copy(depends_on=frozenset(deps)) if deps != i.depends_on else i)
    return insns


def _names_list(value) -> list[str]:
    if isinstance(value, str):
        return [s.strip() for s in value.split(",") if s.strip()]
    return [str(s) for s in value]


def _rule_of(kernel, name, w, rule_name, extra, previous, calls):
    """Arguments, body and call maker of the rule for assignment *w*."""
    args: list[str] = []
    idx: tuple = ()
    body = w.expression
    if previous is not None:
        # an assignment that reads the variable reads the previous one's rule
        body = _replace_reads_expr(body, name, calls[previous.id])
    if isinstance(w.assignee, p.Subscript):
        idx = index_tuple(w.assignee)
        if not all(isinstance(i, p.Variable) and i.name in w.within_inames for i in idx) or \
                len({i.name for i in idx}) != len(idx):
            raise TransformError(f"assignment_to_subst: '{name}' is assigned at subscripts "
                                 f"{', '.join(map(str, idx))}; they must be distinct loop "
                                 "indices", w.span)
        args = [f"{name}_arg{k}" for k in range(len(idx))]
    clash = [e for e in extra if any(e == i.name for i in idx)]
    if clash:
        raise TransformError(f"assignment_to_subst: extra argument '{clash[0]}' is already a "
                             f"subscript of '{name}'", w.span)
    extra_args = [f"{name}_{e}" for e in extra]
    mapping = {i.name: p.Variable(a) for i, a in zip(idx, args, strict=True)}
    mapping.update({e: p.Variable(a) for e, a in zip(extra, extra_args, strict=True)})
    if mapping:
        body = substitute(body, mapping)
    extra_values = tuple(p.Variable(e) for e in extra)

    def make_call(indices):
        return p.Call(p.Variable(rule_name), tuple(indices) + extra_values)
    return args + extra_args, body, make_call


def _check_readers(kernel, name, w, readers, body, args, inputs, rules, tdeps, pos):
    """Refuse if a read of *w*'s value could see another value than the rule
    computes at the reader."""
    from f2loopy.transform.iname import reduction_inames
    expanded = expand_rules(body, rules)
    body_inames = variables_read(expanded) & set(kernel.all_inames())
    # the inames a reduction in the value runs over are its own, not the
    # loops the readers must share
    body_inames -= set(args) | reduction_inames(w.copy(expression=expanded, predicates=()))
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


def _rule_reads_of(kernel, insn) -> frozenset:
    from f2loopy.transform.match import _rule_reads
    return _rule_reads(kernel, insn)


@for_each_kernel
def expand_subst(kernel: Kernel, within: str | None = None) -> Kernel:
    """Expand substitution rules (those matching glob *within*, default all)
    at every use."""
    import fnmatch
    only = None if within is None else {n for n in kernel.substitutions
                                        if fnmatch.fnmatchcase(n, within)}
    insns = tuple(map_instruction_expressions(i, lambda e: expand_rules(e, kernel.substitutions, only))
                  for i in kernel.instructions)
    return canonicalize_rules(kernel.copy(instructions=insns))


@for_each_kernel
def extract_subst(kernel: Kernel, subst_name: str, template: str | p.ExpressionNode,
                  parameters: Names = ()) -> Kernel:
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
        raise NameNotFoundError(f"extract_subst: {template!r} does not occur in kernel "
                             f"'{kernel.name}'")
    rules.update(rw.rules)
    return canonicalize_rules(kernel.copy(instructions=insns, substitutions=FrozenMap(rules)))


__all__ = ["assignment_to_subst", "expand_subst", "extract_subst", "find_one_rule_matching",
           "used_rules"]
