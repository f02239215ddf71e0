"""Hostile inputs for the translator: valid files, mutated.

:func:`corpus` collects valid sources (the samples, the loopy ``.floopy``
files, generated programs with transformation scripts, and the sandbox's
hostile scripts wrapped in ``!$loopy`` blocks).  :func:`mutate` applies one
to a few random mutations, chosen from

* bytes: flips, insertions (control characters, NUL, non-ASCII, quotes),
  deletions, truncation at a random point;
* lines: deletion, duplication, swaps, lines from other files, comment-outs;
* tokens: a name, number or operator replaced by another token, huge or odd
  numbers (``99999999999999999999``, ``1e999``, ``0``, ``-2147483649``),
  keywords, or deleted;
* directives: garbage, unbalanced or nested ``!$loopy`` blocks and tagged
  regions, Python that loops, recurses, allocates or raises, scripts cut off;
* structure: deep nesting of loops, ifs or parentheses, very long
  expressions and lines, many declarations or subroutines.

Everything is deterministic in the ``random.Random`` given.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

_TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|\d+\.\d*(?:[eEdD][+-]?\d+)?|\d+|\.[a-zA-Z]+\.|"
                       r"\*\*|//|==|/=|<=|>=|::|=>|[-+*/=(),:<>%&;!$'\"\[\]]")

_TOKENS = [
    "do", "end", "if", "then", "else", "endif", "enddo", "subroutine", "function", "call",
    "integer", "real", "double", "precision", "logical", "complex", "character", "parameter",
    "dimension", "intent", "in", "out", "inout", "implicit", "none", "module", "contains",
    "use", "select", "case", "default", "cycle", "exit", "return", "stop", "goto", "while",
    "concurrent", "data", "common", "equivalence", "pointer", "allocatable", "allocate",
    "where", "forall", "program", "interface", "recursive", "pure", "elemental", "result",
    "save", "external", "intrinsic", "entry", "format", "print", "write", "read", "open",
    "kind", "len", "size", "sum", "maxval", "huge", "tiny", "sqrt", "exp", "mod", "merge",
    "0", "1", "-1", "2147483647", "2147483648", "-2147483649", "9223372036854775808",
    "99999999999999999999999999", "1e999", "1d308", "1e-999", "0.0", "-0.0", "1.5e+38",
    "3.4e38", "1.0_8", "1.0_16", "1_1", "0x10", "b'101'", "z'ff'", "o'17'", ".5e", "1.e",
    "+", "-", "*", "/", "**", "//", "==", "/=", "<", ">", "(", ")", "(/", "/)", ",", ":",
    "::", "=", "=>", "%", ";", "&", "!", "'", '"', ".and.", ".or.", ".not.", ".eqv.",
    ".true.", ".false.", ".x.", "n", "i", "j", "k", "a", "x", "nq", "ne",
]

_GARBAGE_LINES = [
    "!$loopy begin", "!$loopy end", "!$loopy begin tagged: x", "!$loopy end tagged: x",
    "!$loopy begin tagged:", "!$loopy begin tagged: a b c", "!$loopy end tagged: y",
    "!$loopy begin transform", "!$loopy", "!$loopy bogus", "!$LOOPY BEGIN", "!$loopy begin!",
    "! RESULT = 5", "! RESULT = None", "! RESULT = [None]", "! RESULT = {1: 2}",
    "! RESULT = [k, k]", "! import os", "! from os import system", "! __import__('os')",
    "! while True: pass", "! def f(): return f()", "! f = lambda: f()",
    "! x = [0] * 10**10", "! raise SystemExit(3)", "! raise KeyboardInterrupt",
    "! k = split_iname(k, 'i', 0)", "! k = split_iname(k, 'nope', 4)",
    "! k = tag_inames(k, 'i:g.99')", "! k = fix_parameters(k, n=-1)",
    "! k = tag_inames(k, {'i': 'l.0'})", "! checkpoint(None)", "! checkpoint('x' * 10**6)",
    "! print('x' * 10**7)", "! import numpy as np; np.zeros(10**12)", "!   indented = (",
    "! 1/0", "! k = assume(k, 'n >')", "! k = assume(k, 'n mod 0 = 0')",
    "! exec('1')", "! getattr(k, '__class__')", "! k.__dict__", "! ''.join", "!\t\tx = 1",
    "! RESULT = parse_fortran(SOURCE * 50, FILENAME)", "! RESULT = parse_fortran('', '')",
    "\x00", "\x1b[2J", "\ufeff", "é", "\u202e", "\r", "\t", "\f", "\\", "'", '"', "&",
    "end", "end do", "end if", "contains", "end subroutine", "subroutine", "program p",
    "implicit none", "integer :: i", "real x(", "real x(:)", "real x(*)", "real, pointer :: p",
    "include 'x.h'", "#include <stdio.h>", "#define N 4", "goto 10", "10 continue",
    "stop", "print *, 'x'", "write(*,*) 1", "common /c/ a", "equivalence (a, b)",
    "do while (.true.)", "do", "exit", "where (a > 0) a = 0", "forall (i=1:n) a(i) = 0",
    "character(len=3) :: s", "type t", "end type", "allocate(a(10))", "x = 1 +",
    "x = ((((((((((((((((((((1))))))))))))))))))))", "a(1:n:0) = 0",
]


def _sources():
    """Valid Fortran sources (name, text) from the repository."""
    out = []
    for pattern in ("samples/**/*.f90", "samples/**/*.f", "tests/floopy/*.floopy",
                    "tests/regressions/*.f90"):
        for p in sorted(ROOT.glob(pattern)):
            if p.name.endswith("_cl.f90"):
                continue
            try:
                out.append((p.name, p.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError):
                continue
    return out


def _hostile_scripts():
    out = []
    for p in sorted((ROOT / "tests" / "hostile").glob("*.py")):
        try:
            lines = [ln for ln in p.read_text().splitlines() if not ln.startswith("# ")]
        except OSError:
            continue
        out.append(lines)
    return out


_SMALL = """\
subroutine s(n, a, b)
  implicit none
  integer n, i
  real a(n), b(n)
  do i = 1, n
    b(i) = a(i) * 2.0
  end do
end subroutine
"""


def corpus(n_generated: int = 40):
    """``[(filename, text), ...]``: valid inputs to mutate."""
    items = _sources()
    from f2loopy.fuzz.progen import generate_program
    for seed in range(n_generated):
        p = generate_program(50_000 + seed)
        if seed % 2 == 0:
            p.transforms = ['k = split_iname(k, "i1", 4)']
        items.append((p.filename, p.render()))
    for k, lines in enumerate(_hostile_scripts()):
        script = "\n".join("! " + ln for ln in lines)
        items.append((f"hostile{k}.f90", _SMALL + "!$loopy begin\n" + script +
                      "\n!$loopy end\n"))
    items.append(("small.f90", _SMALL))
    return items


# {{{ mutations

def _byte_mutation(rng: random.Random, text: str, corpus_items) -> str:
    if not text:
        return rng.choice(_GARBAGE_LINES)
    pos = rng.randrange(len(text) + 1)
    r = rng.random()
    if r < 0.3:
        ch = rng.choice(["\x00", "\x01", "\x7f", "\t", "\r", "\n", "\f", "\ufeff", "é", "ß",
                         "\u00a0", "'", '"', "&", "!", ";", "(", ")", "*", "$", "#", "\\",
                         chr(rng.randrange(32, 127)), chr(rng.randrange(0x80, 0x3000))])
        return text[:pos] + ch + text[pos:]
    if r < 0.55:
        end = min(len(text), pos + rng.randrange(1, 12))
        return text[:pos] + text[end:]
    if r < 0.8 and pos < len(text):
        ch = chr(ord(text[pos]) ^ (1 << rng.randrange(7)))
        return text[:pos] + ch + text[pos + 1:]
    return text[:pos]                                   # truncation


def _line_mutation(rng: random.Random, text: str, corpus_items) -> str:
    lines = text.split("\n")
    if not lines:
        return text
    i = rng.randrange(len(lines))
    r = rng.random()
    if r < 0.25:
        del lines[i]
    elif r < 0.45:
        lines.insert(i, lines[i])
    elif r < 0.6:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif r < 0.75:
        other = rng.choice(corpus_items)[1].split("\n")
        lines.insert(i, rng.choice(other))
    elif r < 0.85:
        lines.insert(i, rng.choice(_GARBAGE_LINES))
    elif r < 0.92:
        lines[i] = "! " + lines[i]
    else:
        lines = lines[:i]
    return "\n".join(lines)


def _token_mutation(rng: random.Random, text: str, corpus_items) -> str:
    spans = [m.span() for m in _TOKEN_RE.finditer(text)]
    if not spans:
        return text
    a, b = rng.choice(spans)
    r = rng.random()
    if r < 0.6:
        new = rng.choice(_TOKENS)
    elif r < 0.75:
        new = ""
    elif r < 0.9:
        new = text[a:b] + " " + text[a:b]
    else:
        new = str(rng.choice([0, -1, 2 ** 31, 2 ** 31 - 1, 2 ** 63, 10 ** 30, -10 ** 9, 7]))
    return text[:a] + new + text[b:]


def _directive_mutation(rng: random.Random, text: str, corpus_items) -> str:
    lines = text.split("\n")
    begins = [k for k, ln in enumerate(lines) if ln.strip().lower().startswith("!$loopy")]
    r = rng.random()
    if begins and r < 0.5:
        k = rng.choice(begins)
        # garbage inside or around a block
        where = min(len(lines), k + rng.randrange(0, 6))
        for _ in range(rng.randrange(1, 4)):
            lines.insert(where, rng.choice(_GARBAGE_LINES))
        return "\n".join(lines)
    if r < 0.7:
        # a script block with random API calls
        calls = ["k = parse_fortran(SOURCE, FILENAME)[0]",
                 "(k,) = parse_fortran(SOURCE, FILENAME)"]
        for _ in range(rng.randrange(1, 5)):
            calls.append(rng.choice([
                "k = split_iname(k, 'i', %d)" % rng.choice([0, 1, 3, -2, 10 ** 9]),
                "k = split_iname(k, 'i', 4, outer_tag='g.0', inner_tag='l.0')",
                "k = tag_inames(k, 'i:%s')" % rng.choice(["l.0", "g.0", "unr", "vec", "ilp",
                                                          "for", "l.5", "x", ""]),
                "k = fix_parameters(k, n=%d)" % rng.choice([0, 1, -5, 2 ** 40]),
                "k = assume(k, '%s')" % rng.choice(["n >= 1", "n mod 4 = 0", "n <", "1",
                                                    "m >= 0", "n > 10 and n < 5"]),
                "k = set_options(k, check_races=False)", "k = join_inames(k, 'i,j')",
                "k = rename_iname(k, 'i', 'j')", "k = add_prefetch(k, 'a')",
                "k = precompute(k, 'nothing')", "k = prioritize_loops(k, 'j,i')",
                "k = buffer_array(k, 'b', ())", "k = remove_instructions(k, {'b'})",
                "k = tag_array_axes(k, 'a', 'c')", "k = split_array_axis(k, 'a', 0, 2)",
                "k = assignment_to_subst(k, 'b')", "k = duplicate_inames(k, 'i')",
                "k = privatize_temporaries_with_inames(k, 'i')", "checkpoint('c')",
                "k = accumulation_to_reduction(k, 'writes:b')", "RESULT = k",
            ]))
        calls.append(rng.choice(["RESULT = [k]", "RESULT = k", "RESULT = []", ""]))
        block = ["!$loopy begin"] + ["! " + c for c in calls] + ["!$loopy end"]
        pos = rng.randrange(len(lines) + 1)
        lines[pos:pos] = block
        return "\n".join(lines)
    if r < 0.85:
        # an unbalanced or nested tagged region
        pos = rng.randrange(len(lines) + 1)
        name = rng.choice(["t", "x y", "", "t" * 300, "é", "a:b"])
        lines.insert(pos, rng.choice([f"!$loopy begin tagged: {name}",
                                      f"!$loopy end tagged: {name}"]))
        return "\n".join(lines)
    # cut a script short
    if begins:
        k = rng.choice(begins)
        return "\n".join(lines[:k + rng.randrange(1, 4)])
    return text


def _structure_mutation(rng: random.Random, text: str, corpus_items) -> str:
    depth = rng.choice([20, 60, 200, 600])
    r = rng.random()
    if r < 0.25:
        body = "  b(1) = a(1)\n"
        for k in range(depth):
            body = f"  do i{k} = 1, 2\n" + body + "  end do\n"
        decl = "  integer " + ", ".join(f"i{k}" for k in range(depth)) + "\n"
        return ("subroutine deep(n, a, b)\n  implicit none\n  integer n\n  real a(n), b(n)\n"
                + decl + body + "end subroutine\n")
    if r < 0.45:
        body = "  b(1) = a(1)\n"
        for k in range(depth):
            body = f"  if (a({1 + k % 3}) > {k}.0) then\n" + body + "  end if\n"
        return ("subroutine deep(n, a, b)\n  implicit none\n  integer n\n  real a(n), b(n)\n"
                + body + "end subroutine\n")
    if r < 0.6:
        expr = "(" * depth + "a(1)" + ")" * depth
        return _SMALL.replace("a(i) * 2.0", expr)
    if r < 0.75:
        expr = " + ".join(f"a({1 + k % 2}) * {k}.0" for k in range(depth * 5))
        return _SMALL.replace("a(i) * 2.0", expr)
    if r < 0.85:
        return "\n".join(_SMALL.replace("subroutine s", f"subroutine s{k}")
                         .replace("end subroutine", f"end subroutine s{k}")
                         for k in range(depth // 4))
    if r < 0.93:
        return _SMALL.replace("2.0", "2.0" + " " * (depth * 50) + "+ 1.0")
    return _SMALL.replace("real a(n), b(n)", "real a(" + ", ".join(["n"] * 20) + "), b(n)")


MUTATORS = [(_byte_mutation, 3), (_line_mutation, 3), (_token_mutation, 4),
            (_directive_mutation, 2), (_structure_mutation, 0.4)]


def mutate(rng: random.Random, text: str, corpus_items) -> str:
    """One to four random mutations of *text*."""
    funcs, weights = zip(*MUTATORS, strict=True)
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 4])):
        f = rng.choices(funcs, weights)[0]
        text = f(rng, text, corpus_items)
    return text

# }}}
