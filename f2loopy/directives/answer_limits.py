"""Caps on the size of what a transformation script returns.

The parent decodes the child's kernels (parsing their isl sets) and then
lowers them; a script controls how big they are.  Before any of that, the raw
answer is measured against these caps, and a script over one is refused with
what and how much, at its ``!$loopy begin`` line::

    t.f90:9:2: error: the transformation script returned kernel 'k' with 25000
    instructions (at most 10000)

The caps are far above what a real kernel needs (the paper's biggest kernel
has a few dozen instructions and domains) and low enough that decoding and
lowering stay fast; lowering runs under the sandbox limits anyway
(:mod:`~f2loopy.directives.child_codegen`).
"""

from __future__ import annotations

import re

#: kernels in the answer (results and checkpoints together)
MAX_KERNELS = 200
#: ``checkpoint(...)`` calls
MAX_CHECKPOINTS = 100
#: per kernel
MAX_INSTRUCTIONS = 10_000
MAX_DOMAINS = 200
MAX_ARGUMENTS = 500
MAX_TEMPORARIES = 1_000
MAX_SUBSTITUTIONS = 1_000
#: entries of all constant tables (temporaries with initializers) of a kernel
MAX_TABLE_ENTRIES = 100_000
#: characters of one isl set (a domain or the assumptions)
MAX_ISL_CHARS = 20_000
#: disjunctions (``or``) and quasi-affine terms (``mod``, ``floor``,
#: ``exists``) in one isl set: each multiplies what isl operations cost
MAX_ISL_DISJUNCTS = 64
MAX_ISL_QUASI = 64
#: characters of a kernel, argument, temporary, iname or instruction name
MAX_NAME = 128
#: instructions over the whole answer
MAX_TOTAL_INSTRUCTIONS = 50_000

_OR_RE = re.compile(r"\bor\b|\|")
_QUASI_RE = re.compile(r"\b(?:mod|floor|ceil|exists)\b|//|%")


class AnswerTooLarge(Exception):
    """What exceeds which cap (the message names both)."""


def _len(value) -> int:
    return len(value) if isinstance(value, (list, dict, str)) else 0


def _kernel_name(d) -> str:
    name = d.get("name") if isinstance(d, dict) else None
    if not isinstance(name, str):
        return "?"
    return name[:40] + ("..." if len(name) > 40 else "")


def _check_isl(text, what, name):
    if not isinstance(text, str):
        return
    if len(text) > MAX_ISL_CHARS:
        raise AnswerTooLarge(f"kernel '{name}' with a {what} of {len(text)} characters "
                             f"(at most {MAX_ISL_CHARS})")
    ors = len(_OR_RE.findall(text))
    if ors > MAX_ISL_DISJUNCTS:
        raise AnswerTooLarge(f"kernel '{name}' with a {what} of {ors} disjunctions "
                             f"(at most {MAX_ISL_DISJUNCTS})")
    quasi = len(_QUASI_RE.findall(text))
    if quasi > MAX_ISL_QUASI:
        raise AnswerTooLarge(f"kernel '{name}' with a {what} of {quasi} mod/floor/exists "
                             f"terms (at most {MAX_ISL_QUASI})")


def _check_names(items, key, what, name):
    for item in items if isinstance(items, list) else ():
        n = item.get(key) if isinstance(item, dict) else None
        if isinstance(n, str) and len(n) > MAX_NAME:
            raise AnswerTooLarge(f"kernel '{name}' with a {what} name of {len(n)} characters "
                                 f"(at most {MAX_NAME})")


def check_kernel(d) -> int:
    """Raise :class:`AnswerTooLarge` if kernel data *d* exceeds a cap; returns
    its number of instructions."""
    if not isinstance(d, dict):
        return 0
    name = _kernel_name(d)
    raw_name = d.get("name")
    if isinstance(raw_name, str) and len(raw_name) > MAX_NAME:
        raise AnswerTooLarge(f"a kernel name of {len(raw_name)} characters (at most "
                             f"{MAX_NAME})")
    for key, cap, what in (("instructions", MAX_INSTRUCTIONS, "instructions"),
                           ("domains", MAX_DOMAINS, "domains"),
                           ("args", MAX_ARGUMENTS, "arguments"),
                           ("temporaries", MAX_TEMPORARIES, "temporaries"),
                           ("substitutions", MAX_SUBSTITUTIONS, "substitution rules"),
                           ("iname_tags", MAX_DOMAINS * 8, "tagged inames")):
        n = _len(d.get(key))
        if n > cap:
            raise AnswerTooLarge(f"kernel '{name}' with {n} {what} (at most {cap})")
    for dom in d.get("domains") or ():
        _check_isl(dom, "domain", name)
    _check_isl(d.get("assumptions"), "set of assumptions", name)
    _check_names(d.get("instructions"), "id", "instruction", name)
    _check_names(d.get("args"), "name", "argument", name)
    _check_names(d.get("temporaries"), "name", "temporary", name)
    tags = d.get("iname_tags")
    for iname in tags if isinstance(tags, dict) else ():
        if isinstance(iname, str) and len(iname) > MAX_NAME:
            raise AnswerTooLarge(f"kernel '{name}' with an iname of {len(iname)} characters "
                                 f"(at most {MAX_NAME})")
    entries = 0
    for t in d.get("temporaries") or ():
        init = t.get("initializer") if isinstance(t, dict) else None
        if isinstance(init, dict):
            entries += _len(init.get("data"))
    if entries > MAX_TABLE_ENTRIES:
        raise AnswerTooLarge(f"kernel '{name}' with constant tables of {entries} entries "
                             f"(at most {MAX_TABLE_ENTRIES})")
    return _len(d.get("instructions"))


def check_answer(data: dict) -> None:
    """Raise :class:`AnswerTooLarge` if the child's answer exceeds a cap."""
    table = data.get("table")
    n = _len(table) if isinstance(table, list) else 0
    if n > MAX_KERNELS:
        raise AnswerTooLarge(f"{n} distinct kernels (results and checkpoints; at most "
                             f"{MAX_KERNELS})")
    cps = data.get("checkpoints")
    if isinstance(cps, list) and len(cps) > MAX_CHECKPOINTS:
        raise AnswerTooLarge(f"{len(cps)} checkpoints (at most {MAX_CHECKPOINTS})")
    total = 0
    for d in table or ():
        total += check_kernel(d)
    if total > MAX_TOTAL_INSTRUCTIONS:
        raise AnswerTooLarge(f"kernels with {total} instructions in all (at most "
                             f"{MAX_TOTAL_INSTRUCTIONS})")
