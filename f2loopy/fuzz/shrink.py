"""Shrinking a failing random program: smaller candidates (fewer statements,
simpler expressions, fewer transformations) are tried while the program
still fails the same way."""

from __future__ import annotations

import copy

from f2loopy.fuzz.program import Assign, Expr, If, OneLineIf, Program, _children

def _stmt_lists(program: Program):
    """Every statement list of the body (the body itself and nested ones)."""
    out = [program.body]
    stack = list(program.body)
    while stack:
        s = stack.pop()
        for b in _children(s):
            out.append(b)
            stack.extend(b)
    return out


def shrink_candidates(program: Program):
    """Smaller variants of *program*, most aggressive first."""
    # drop transformations
    for k in range(len(program.transforms)):
        p = program.copy()
        del p.transforms[k]
        yield p
    # delete statements, unwrap loops and ifs
    n_lists = len(_stmt_lists(program))
    for li in range(n_lists):
        lst = _stmt_lists(program)[li]
        for si in range(len(lst)):
            p = program.copy()
            target = _stmt_lists(p)[li]
            del target[si]
            yield p
            s = lst[si]
            if isinstance(s, If):
                for bi in range(len(_children(s))):
                    p = program.copy()
                    target = _stmt_lists(p)[li]
                    kids = _children(target[si])
                    target[si:si + 1] = kids[bi]
                    yield p
                if s.else_body is not None or len(s.branches) > 1:
                    p = program.copy()
                    t = _stmt_lists(p)[li][si]
                    t.else_body = None
                    t.branches = t.branches[:1]
                    yield p
            if isinstance(s, OneLineIf):
                p = program.copy()
                target = _stmt_lists(p)[li]
                target[si] = target[si].stmt
                yield p
    # simplify expressions: replace an assigned value by one of its parts
    for li in range(n_lists):
        lst = _stmt_lists(program)[li]
        for si, s in enumerate(lst):
            if not isinstance(s, Assign):
                continue
            for sub in _sub_candidates(s.value, s.target.kind):
                p = program.copy()
                _stmt_lists(p)[li][si].value = sub
                yield p


def _sub_candidates(e: Expr, kind: str):
    """Parts of *e* that can replace it as the value assigned to a *kind*
    variable (integers only take integer parts: a conversion of a real could
    be discontinuous)."""
    seen = set()
    for sub in e.walk():
        if sub is e or sub.op == "paren":
            continue
        ok = sub.kind == kind or (kind in ("r4", "r8") and sub.kind in ("r4", "r8", "i4"))
        if kind in ("r4", "r8") and sub.op == "lit" and sub.kind == "i4":
            ok = False      # array subscripts are integer literals too
        key = sub.render()
        if ok and key not in seen:
            seen.add(key)
            yield copy.deepcopy(sub)


def shrink(program: Program, still_fails, *, max_steps: int = 400, log=None) -> Program:
    """Greedy shrinking: apply the first candidate that still fails, repeat."""
    steps = 0
    improved = True
    while improved and steps < max_steps:
        improved = False
        for cand in shrink_candidates(program):
            steps += 1
            if steps >= max_steps:
                break
            if len(cand.render()) >= len(program.render()) and \
                    len(cand.transforms) == len(program.transforms):
                continue
            if still_fails(cand):
                program = cand
                improved = True
                if log:
                    log(f"shrunk to {len(program.render())} characters")
                break
    return program

# }}}
