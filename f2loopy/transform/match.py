"""The match language: selecting instructions by id, tag, variables and loops.

Strings such as ``"tag:compute_fluxes and writes:rhsq"`` or
``"id:U1* or (reads:q and not iname:k)"`` are parsed into match objects; the
objects can also be built directly: ``Reads("q")``, ``Tagged("t")``,
``And(Writes("x"), Not(Id("a*")))``.  Names are glob patterns (``*``, ``?``,
``[..]``).  A bare word means ``id:word``.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from collections.abc import Sequence
from typing import Union

from f2loopy.diagnostics import TransformError
from f2loopy.ir.kernel import Kernel, TranslationUnit


class Match:
    """Base class: ``match(kernel, insn) -> bool``."""

    def __call__(self, kernel, insn) -> bool:
        return self.match(kernel, insn)

    def match(self, kernel, insn) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def __and__(self, other):
        return And(self, parse_match(other))

    def __or__(self, other):
        return Or(self, parse_match(other))

    def __invert__(self):
        return Not(self)


def _glob(pattern: str, names) -> bool:
    return any(fnmatch.fnmatchcase(n, pattern) for n in names)


@dataclass(frozen=True)
class All(Match):
    def match(self, kernel, insn):
        return True

    def __str__(self):
        return "all"


@dataclass(frozen=True)
class Nothing(Match):
    def match(self, kernel, insn):
        return False

    def __str__(self):
        return "nothing"


@dataclass(frozen=True)
class Id(Match):
    pattern: str

    def match(self, kernel, insn):
        return fnmatch.fnmatchcase(insn.id, self.pattern)

    def __str__(self):
        return f"id:{self.pattern}"


@dataclass(frozen=True)
class Tagged(Match):
    pattern: str

    def match(self, kernel, insn):
        return _glob(self.pattern, insn.tags)

    def __str__(self):
        return f"tag:{self.pattern}"


@dataclass(frozen=True)
class Writes(Match):
    pattern: str

    def match(self, kernel, insn):
        return _glob(self.pattern, insn.assignee_names())

    def __str__(self):
        return f"writes:{self.pattern}"


@dataclass(frozen=True)
class Reads(Match):
    pattern: str

    def match(self, kernel, insn):
        from f2loopy.ir.expressions import variables_read
        names = variables_read(*insn.read_expressions())
        names |= _rule_reads(kernel, insn)
        return _glob(self.pattern, names)

    def __str__(self):
        return f"reads:{self.pattern}"


def _rule_reads(kernel, insn) -> frozenset:
    """Variables read through substitution rules used by *insn* (as if the
    rules were expanded)."""
    if not kernel.substitutions:
        return frozenset()
    key = (id(kernel.substitutions), id(insn))
    hit = _RULE_READS.get(key)
    if hit is not None and hit[0] is kernel.substitutions and hit[1] is insn:
        return hit[2]
    out = _rule_reads_uncached(kernel, insn)
    if len(_RULE_READS) > 4096:
        _RULE_READS.clear()
    _RULE_READS[key] = (kernel.substitutions, insn, out)
    return out


#: (rules, instruction) -> variables read through the rules (both immutable)
_RULE_READS: dict = {}


def _rule_reads_uncached(kernel, insn) -> frozenset:
    from f2loopy.ir.expressions import called_functions, variables_read
    out, seen = set(), set()
    stack = []
    for e in insn.read_expressions():
        stack.extend(called_functions(e))
    while stack:
        name = stack.pop()
        if name in seen or name not in kernel.substitutions:
            continue
        seen.add(name)
        body = kernel.substitutions[name].expression
        out |= variables_read(body)
        stack.extend(called_functions(body))
    return frozenset(out)


@dataclass(frozen=True)
class Iname(Match):
    pattern: str

    def match(self, kernel, insn):
        return _glob(self.pattern, insn.within_inames)

    def __str__(self):
        return f"iname:{self.pattern}"


@dataclass(frozen=True)
class And(Match):
    children: tuple

    def __init__(self, *children):
        if len(children) == 1 and isinstance(children[0], (list, tuple)):
            children = tuple(children[0])
        object.__setattr__(self, "children", tuple(parse_match(c) for c in children))

    def match(self, kernel, insn):
        return all(c.match(kernel, insn) for c in self.children)

    def __str__(self):
        return "(" + " and ".join(map(str, self.children)) + ")"


@dataclass(frozen=True)
class Or(Match):
    children: tuple

    def __init__(self, *children):
        if len(children) == 1 and isinstance(children[0], (list, tuple)):
            children = tuple(children[0])
        object.__setattr__(self, "children", tuple(parse_match(c) for c in children))

    def match(self, kernel, insn):
        return any(c.match(kernel, insn) for c in self.children)

    def __str__(self):
        return "(" + " or ".join(map(str, self.children)) + ")"


@dataclass(frozen=True)
class Not(Match):
    child: Match

    def __init__(self, child):
        object.__setattr__(self, "child", parse_match(child))

    def match(self, kernel, insn):
        return not self.child.match(kernel, insn)

    def __str__(self):
        return f"not {self.child}"


#: alias
Tag = Tagged


_TOKEN_RE = re.compile(r"\s*(?:(\()|(\))|(and\b)|(or\b)|(not\b)|([^\s()]+))")
_KINDS = {"id": Id, "tag": Tagged, "tags": Tagged, "writes": Writes, "reads": Reads,
          "iname": Iname, "inames": Iname}


def _tokenize(text: str):
    pos = 0
    out = []
    text = text.strip()
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if not m or m.end() == pos:
            raise TransformError(f"cannot parse match expression {text!r} at position {pos}")
        pos = m.end()
        for kind, val in zip(("(", ")", "and", "or", "not", "word"), m.groups(), strict=True):
            if val is not None:
                out.append((kind, val))
                break
    return out


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0

    def peek(self):
        return self.tokens[self.pos][0] if self.pos < len(self.tokens) else None

    def take(self):
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def parse(self) -> Match:
        result = self.parse_or()
        if self.peek() is not None:
            raise TransformError(f"unexpected {self.tokens[self.pos][1]!r} in match "
                                 f"expression {self.text!r}")
        return result

    def parse_or(self):
        items = [self.parse_and()]
        while self.peek() == "or":
            self.take()
            items.append(self.parse_and())
        return items[0] if len(items) == 1 else Or(*items)

    def parse_and(self):
        items = [self.parse_not()]
        while self.peek() == "and":
            self.take()
            items.append(self.parse_not())
        return items[0] if len(items) == 1 else And(*items)

    def parse_not(self):
        if self.peek() == "not":
            self.take()
            return Not(self.parse_not())
        return self.parse_atom()

    def parse_atom(self):
        kind = self.peek()
        if kind == "(":
            self.take()
            inner = self.parse_or()
            if self.peek() != ")":
                raise TransformError(f"missing ')' in match expression {self.text!r}")
            self.take()
            return inner
        if kind == "word":
            _, word = self.take()
            if word in ("*", "all"):
                return All()
            if ":" in word:
                key, pattern = word.split(":", 1)
                cls = _KINDS.get(key.lower())
                if cls is None:
                    raise TransformError(f"unknown match kind '{key}:' in {self.text!r} "
                                         "(use id:, tag:, writes:, reads:, iname:)")
                if not pattern:
                    raise TransformError(f"empty pattern after '{key}:' in {self.text!r}")
                return cls(pattern)
            return Id(word)
        raise TransformError(f"match expression {self.text!r} ends too early")


def parse_match(spec: MatchSpec) -> Match:
    """A :class:`Match` from a string, a Match, None (everything) or a list
    of instruction ids."""
    if spec is None:
        return All()
    if isinstance(spec, Match):
        return spec
    if isinstance(spec, str):
        return _Parser(spec).parse()
    if isinstance(spec, (list, tuple, set, frozenset)):
        return Or(*[Id(s) if isinstance(s, str) and ":" not in s else parse_match(s)
                    for s in spec]) if spec else Nothing()
    raise TransformError(f"cannot use {spec!r} as a match expression")


#: what a ``within=``/``insn_match`` argument may be: a match expression
#: string, a :class:`Match`, a list of instruction ids, or None (everything)
MatchSpec = Union[str, Match, Sequence[str], None]


def kernels_of(what: Kernel | TranslationUnit | Sequence[Kernel], who: str) -> list[Kernel]:
    """The kernels of *what*: a kernel, a translation unit, or a list or tuple
    of kernels (the forms loopy's query functions take)."""
    if isinstance(what, Kernel):
        return [what]
    if isinstance(what, TranslationUnit):
        return list(what.kernels)
    if isinstance(what, (list, tuple)) and all(isinstance(k, Kernel) for k in what):
        return list(what)
    raise TransformError(f"{who}: expected a kernel or a translation unit, got "
                         f"{type(what).__name__}")


def find_instructions(kernel: Kernel | TranslationUnit | list[Kernel],
                      insn_match: MatchSpec) -> list:
    """Instructions that *insn_match* selects, in program order.

    :arg kernel: a kernel, or a translation unit (or list) whose kernels are
        searched in order, as loopy's function of the same name does.
    :arg insn_match: a match expression (``"tag:x and writes:y"``), a
        :class:`Match`, a list of instruction ids, or None (all).
    """
    m = parse_match(insn_match)
    return [insn for k in kernels_of(kernel, "find_instructions")
            for insn in k.instructions if m.match(k, insn)]
