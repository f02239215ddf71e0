"""Substitution rule machinery: calls, expansion, rule-aware rewriting.

A rule ``name(a0, a1) := body`` is invoked in expressions as the call
``name(x, y)``.  Its body may also mention inames directly (rules made from
scalar assignments do): those bind to the inames of the place of use.

Transformations treat rules *as if they were expanded* (section 3 of the
Loo.py paper): rewriting an instruction that uses a rule rewrites what the
rule stands for at that use.  :class:`RuleAwareRewriter` does this by
rewriting rule bodies too and keeping one version of a rule per distinct
result, named ``<rule>_<k>``; rules with identical bodies are merged and
unused rules dropped (:func:`canonicalize_rules`).
"""

from __future__ import annotations

import fnmatch

import pymbolic.primitives as p

from f2loopy.diagnostics import TransformError
from f2loopy.ir.expressions import Rewriter, substitute
from f2loopy.ir.frozen import FrozenMap, identity_memo
from f2loopy.ir.kernel import Assignment, Kernel, SubstitutionRule, TranslationUnit


class _Expander(Rewriter):
    def __init__(self, rules, only=None, depth=0):
        self.rules = rules
        self.only = only
        self.depth = depth

    def map_call(self, expr, *args, **kwargs):
        params = tuple(self.rec(a) for a in expr.parameters)
        name = expr.function.name
        rule = self.rules.get(name)
        if rule is None or (self.only is not None and name not in self.only):
            if all(a is b for a, b in zip(params, expr.parameters, strict=True)):
                return expr
            return p.Call(expr.function, params)
        if len(params) != len(rule.arguments):
            raise TransformError(f"rule '{name}' takes {len(rule.arguments)} arguments, "
                                 f"used with {len(params)}")
        if self.depth > 100:
            raise TransformError(f"substitution rule '{name}' expands recursively")
        body = substitute(rule.expression, dict(zip(rule.arguments, params, strict=True)))
        return _Expander(self.rules, self.only, self.depth + 1)(body)


def expand_rules(expr, rules, only=None):
    """*expr* with rule calls replaced by the rule bodies (recursively);
    *only*: a set of rule names to expand (default: all)."""
    if not rules:
        return expr
    return _Expander(rules, only)(expr)


@identity_memo(maxsize=65536)
def _all_calls(expr) -> tuple:
    """Every call node in *expr*, outermost first (cached: IR is immutable)."""
    out = []
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, p.Call):
            out.append(e)
            stack.extend(reversed(e.parameters))
        elif isinstance(e, p.ExpressionNode):
            stack.extend(reversed([c for c in _children(e)]))
    return tuple(out)


def _children(e):
    if isinstance(e, (p.Sum, p.Product, p.LogicalAnd, p.LogicalOr, p.Min, p.Max)):
        return e.children
    if isinstance(e, p.Subscript):
        return e.index if isinstance(e.index, tuple) else (e.index,)
    if isinstance(e, (p.Quotient, p.FloorDiv, p.Remainder)):
        return (e.numerator, e.denominator)
    if isinstance(e, p.Power):
        return (e.base, e.exponent)
    if isinstance(e, p.Comparison):
        return (e.left, e.right)
    if isinstance(e, p.LogicalNot):
        return (e.child,)
    if isinstance(e, p.If):
        return (e.condition, e.then, e.else_)
    if hasattr(e, "expr"):          # Reduction
        return (e.expr,)
    return ()


def rule_calls(expr, rules) -> list:
    """Every call of a rule of *rules* in *expr* (outermost first; a call inside
    another call's arguments is listed too, rule bodies are not entered)."""
    return [c for c in _all_calls(expr) if c.function.name in rules]


def used_rules(kernel: Kernel) -> set:
    """Rules reachable from the instructions."""
    rules = kernel.substitutions
    seen = set()
    stack: list = []
    for insn in kernel.instructions:
        for e in insn.read_expressions():
            stack.extend(c.function.name for c in rule_calls(e, rules))
    while stack:
        name = stack.pop()
        if name in seen or name not in rules:
            continue
        seen.add(name)
        stack.extend(c.function.name for c in rule_calls(rules[name].expression, rules))
    return seen


@identity_memo(maxsize=65536)
def _normalized_body(rule: SubstitutionRule):
    mapping = {a: p.Variable(f"__arg{k}") for k, a in enumerate(rule.arguments)}
    return (len(rule.arguments), substitute(rule.expression, mapping))


class _RuleCallRewriter(Rewriter):
    """The calls of *rewriter*'s rules renamed to their rewritten versions
    (a class of its own, not one made per call: a class costs as much to
    make as rewriting a small expression)."""

    def __init__(self, rewriter):
        self.rewriter = rewriter

    def map_call(self, e, *a, **k):
        rewriter = self.rewriter
        params = tuple(self.rec(x) for x in e.parameters)
        name = e.function.name
        if rewriter.call_hook is not None:
            replaced = rewriter.call_hook(name, params)
            if replaced is not None:
                return replaced
        if name in rewriter.rules:
            new_name = rewriter.rewrite_rule(name)
            if new_name == name and all(x is y for x, y in zip(params, e.parameters, strict=True)):
                return e
            return p.Call(p.Variable(new_name), params)
        if all(x is y for x, y in zip(params, e.parameters, strict=True)):
            return e
        return p.Call(e.function, params)


class RuleAwareRewriter:
    """Rewrite expressions with *leaf* (an expression -> expression function
    applied to every node that is not a rule call), descending into the rules
    called, as if they were expanded.  New rule versions accumulate in
    :attr:`rules`."""

    def __init__(self, rules, leaf, call_hook=None):
        self.rules = dict(rules)
        self.leaf = leaf
        self.call_hook = call_hook
        self._bodies = {_normalized_body(r): n for n, r in self.rules.items()}
        self._memo = {}

    def __call__(self, expr, bound=frozenset()):
        tree = _RuleCallRewriter(self)(expr)
        return self.leaf(tree, bound)

    def rewrite_rule(self, name: str) -> str:
        """Name of the version of rule *name* whose body is rewritten."""
        if name in self._memo:
            return self._memo[name]
        self._memo[name] = name          # guards recursion
        rule = self.rules[name]
        body = self(rule.expression, frozenset(rule.arguments))
        if body == rule.expression:
            return name
        new_rule = SubstitutionRule(name, rule.arguments, body, rule.span)
        key = _normalized_body(new_rule)
        existing = self._bodies.get(key)
        if existing is not None:
            self._memo[name] = existing
            return existing
        import re
        base = re.sub(r"(_\d+)+$", "", name)
        k = 0
        while f"{base}_{k}" in self.rules:
            k += 1
        new_name = f"{base}_{k}"
        self.rules[new_name] = SubstitutionRule(new_name, rule.arguments, body, rule.span)
        self._bodies[key] = new_name
        self._memo[name] = new_name
        return new_name


def map_instruction_expressions(insn, func):
    preds = tuple(func(x) for x in insn.predicates)
    if isinstance(insn, Assignment):
        return insn.copy(assignee=func(insn.assignee), expression=func(insn.expression),
                         predicates=preds)
    return insn.copy(predicates=preds)


def canonicalize_rules(kernel: Kernel) -> Kernel:
    """Merge rules with identical bodies and drop rules nothing uses."""
    rules = dict(kernel.substitutions)
    if not rules:
        return kernel
    rename = {}
    by_body: dict = {}
    for name, r in rules.items():
        key = _normalized_body(r)
        if key in by_body:
            rename[name] = by_body[key]
        else:
            by_body[key] = name
    if rename:
        from f2loopy.ir.expressions import rename_functions
        insns = tuple(map_instruction_expressions(i, lambda e: rename_functions(e, rename))
                      for i in kernel.instructions)
        rules = {n: SubstitutionRule(n, r.arguments, rename_functions(r.expression, rename),
                                     r.span)
                 for n, r in rules.items() if n not in rename}
        kernel = kernel.copy(instructions=insns, substitutions=FrozenMap(rules))
        return canonicalize_rules(kernel)
    live = used_rules(kernel)
    if set(rules) - live:
        kernel = kernel.copy(substitutions=FrozenMap((n, r) for n, r in rules.items()
                                                     if n in live))
    return kernel


def keep_rule_names(before: Kernel, after: Kernel) -> Kernel:
    """*after* with rule versions renamed back to the rule they replace.

    A transformation that rewrites every use of rule ``r`` leaves one version
    ``r_<k>`` and drops ``r``: that version takes the name ``r`` again, as in
    loopy, so that a script can go on calling the rule by the name it gave
    it (``split_iname`` then ``precompute(knl, "f_subst")``).  Only rules
    *after* has and *before* had not are renamed, each to a rule of *before*
    that is gone, and only where that rule left a single version.
    """
    import re
    old, new = before.substitutions, after.substitutions
    if not old or not new:
        return after
    versions: dict = {}
    for name in new:
        if name in old:
            continue
        base = re.sub(r"(_\d+)+$", "", name)
        if base != name and base in old and base not in new:
            versions.setdefault(base, []).append(name)
    rename = {vs[0]: base for base, vs in versions.items()
              if len(vs) == 1 and not after.has_variable(base)}
    if not rename:
        return after
    from f2loopy.ir.expressions import rename_functions
    insns = tuple(map_instruction_expressions(i, lambda e: rename_functions(e, rename))
                  for i in after.instructions)
    rules = FrozenMap(
        (rename.get(n, n), SubstitutionRule(rename.get(n, n), r.arguments,
                                            rename_functions(r.expression, rename), r.span))
        for n, r in new.items())
    return after.copy(instructions=insns, substitutions=rules)


def find_rules_matching(kernel: Kernel | TranslationUnit, pattern: str) -> list[str]:
    """Names of the substitution rules matching glob *pattern*, sorted (of
    every kernel of a translation unit)."""
    from f2loopy.transform.match import kernels_of
    return sorted({n for k in kernels_of(kernel, "find_rules_matching")
                   for n in k.substitutions if fnmatch.fnmatchcase(n, pattern)})


def find_one_rule_matching(kernel: Kernel | TranslationUnit, pattern: str) -> str:
    """The name of the only substitution rule matching glob *pattern* (of the
    kernel, or of all kernels of a translation unit)."""
    from f2loopy.transform.match import kernels_of
    names = find_rules_matching(kernel, pattern)
    if len(names) != 1:
        have = ", ".join(sorted({n for k in kernels_of(kernel, "find_one_rule_matching")
                                 for n in k.substitutions})) or "none"
        raise TransformError(f"find_one_rule_matching: {len(names)} rules match {pattern!r} "
                             f"(rules: {have})")
    return names[0]
