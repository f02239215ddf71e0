"""What the differential fuzzer's grammar covers (issue 26): the value of a
loop variable after every way out of its loop, every ``goto`` form, and
constants of every kind.  These tests only generate and parse programs (no
compilers): a feature the generator stopped making fails here, not silently
in a campaign that then tests less."""

from __future__ import annotations

import re

import pytest

from f2loopy.frontend import parse_fortran
from f2loopy.fuzz.progen import generate_program

SEEDS = range(700000, 700300)

#: feature -> a pattern of the rendered (lower-cased) program
FEATURES = {
    # ways out of loops, and reads of loop variables after them
    "exit": r"\bexit\b", "named exit": r"\bexit l\d+", "cycle": r"\bcycle\b",
    "return": r"\breturn\b", "goto": r"\bgoto \d+", "go to": r"\bgo to \d+",
    "computed goto": r"\bgo ?to \(\d+(, \d+)*\)", "arithmetic if": r"\bif \(.*\) \d+, \d+, \d+",
    "backward goto": r"\bng = \(ng \+ 1\)", "labelled do": r"\bdo \d+ i\d+ =",
    "run-time step": r"\bdo i\d+ = .*, (\(1 \+ mod\(abs\(kk\)|\(-1 - mod|sign\()",
    "negative step": r"\bdo i\d+ = [^\n]*, -\d\b",
    "loop variable read": r"\b\w+ = i\d+\s*$",
    # constants
    "boz hex": r"int\(z['\"]", "boz binary": r"int\(b'", "boz octal": r"int\(o'",
    "complex part": r"\b(real|aimag)\(\(", "logical literal": r"\.(true|false)\.",
    "parameter statement": r"^\s*parameter \(", "real parameter expression": r"c1 = ",
    "double parameter": r"ck = ", "integer parameter expression": r"k1 = ",
    "logical parameter": r"lp = ", "kind parameter": r"kind\(|selected_(real|int)_kind",
    "kind suffix": r"\d_(4|8|sp|dp|ik)\b", "real without leading digit": r"[^\w.]\.\d",
    "real without fraction": r"\d\.[^\d\w]", "d exponent": r"\dd[+-]?\d",
    "upper-case exponent": r"\d[ED][+-]?\d",
}


@pytest.fixture(scope="module")
def programs():
    return {s: generate_program(s).render() for s in SEEDS}


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_the_grammar_makes(feature, programs):
    pattern = re.compile(FEATURES[feature], re.MULTILINE | (
        0 if feature == "upper-case exponent" else re.IGNORECASE))
    texts = [t if feature == "upper-case exponent" else t.lower() for t in programs.values()]
    hits = sum(1 for t in texts if pattern.search(t))
    assert hits >= 2, f"{feature}: in {hits} of {len(texts)} programs"


def test_programs_with_new_constants_parse(programs):
    """The programs that use the rarer constants are accepted by the frontend
    (a refusal would make the campaign skip them as 'rejected')."""
    marks = ("int(z", "int(b'", "int(o'", "real((", "aimag((", "parameter (", "c1 =",
             "ck =", "k1 =", "lp =")
    chosen = [s for s, t in programs.items() if any(m in t.lower() for m in marks)][:6]
    assert len(chosen) == 6
    for s in chosen:
        program = generate_program(s)
        kernel = parse_fortran(program.render(), program.filename)[program.name]
        assert kernel.name.lower() == program.name.lower()
