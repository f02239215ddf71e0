"""The original of a main program's internal procedures, callable by the
check harness (a main program without any is left out): the program as a
module of the same name (its variables module variables, its executable
statements blanked, the line numbers kept
for coverage), so that the harness's shims can ``use`` the procedures and
set the program's variables as module data."""

from __future__ import annotations

import re

_END_PROGRAM = re.compile(r"(\s*)end(\s*program\b.*)?\s*$", re.IGNORECASE)


_OPENER = re.compile(r"\s*(?:(?:recursive|pure|elemental|impure|module|integer|real|"
                     r"logical|complex|double\s*precision|character)\b[^!']*?)?"
                     r"(?:subroutine|function|module|block\s*data)\s+\w", re.IGNORECASE)
_UNIT_END = re.compile(r"\s*(?:\d+\s+)?end\s*(?:(?:subroutine|function|module|program|"
                       r"block\s*data)\b.*)?$", re.IGNORECASE)
_PROGRAM = re.compile(r"\s*program\s+\w", re.IGNORECASE)


def may_have_main_program(text: str) -> bool:
    """Whether *text* may hold a main program (a ``program`` statement, or
    more unit ends than unit beginnings: one without the statement); a cheap
    test, true where unsure, before :func:`program_as_module` parses."""
    lines = [ln for ln in text.split("\n") if ln.strip() and ln[:1] not in "cC*!"
             and not ln.lstrip().startswith("!")]
    if any(_PROGRAM.match(ln) for ln in lines):
        return True
    openers = sum(1 for ln in lines if _OPENER.match(ln) and
                  not re.match(r"\s*module\s+procedure\b", ln, re.IGNORECASE))
    ends = sum(1 for ln in lines if _UNIT_END.match(ln))
    return ends > openers


def program_as_module(text: str, filename: str, fixed_form: bool) -> str:
    """*text* with each main program that has internal procedures turned into
    a module (the rest of the file as it is)."""
    from fparser.two import Fortran2003 as F

    from f2loopy.frontend.reader import parse_units
    from f2loopy.frontend.source import SourceFile, statement_lines
    from f2loopy.frontend.includes import include_name
    lines = text.split("\n")
    # (include lines stay for the compiler; the parse that finds the units
    # does without them, their lines blank)
    src = SourceFile(filename, "\n".join("" if include_name(ln) is not None else ln
                                         for ln in lines), fixed_form=fixed_form)
    for unit in parse_units(src, jobs=1):
        if isinstance(unit, (F.Main_Program0, F.Main_Program)) and not any(
                isinstance(ch, F.Internal_Subprogram_Part) for ch in unit.children):
            # a driver (no internal procedures): not part of the original the
            # harness links (it has its own main program), nor of its coverage
            first, last = _lines(unit)
            for no in range(first, last + 1):
                lines[no - 1] = ""
            continue
        if not isinstance(unit, F.Main_Program):
            continue
        name = str(unit.children[0].items[1])
        first, _ = statement_lines(unit.children[0])
        last, _ = statement_lines(unit.children[-1])
        indent = "      " if fixed_form else ""
        lines[first - 1] = f"{indent}module {name}"
        m = _END_PROGRAM.match(lines[last - 1])
        lines[last - 1] = f"{indent}end module {name}" if m else lines[last - 1]
        for ch in unit.children:
            if isinstance(ch, F.Specification_Part):
                # its use of f2loopy's glue module of the file's own kernels
                # ('foo_cl_mod', which exists only after the translation)
                for use in ch.children:
                    if isinstance(use, F.Use_Stmt) and \
                            str(use.items[2]).lower().endswith("_cl_mod"):
                        ua, ub = statement_lines(use)
                        for no in range(ua, ub + 1):
                            lines[no - 1] = ""
            if isinstance(ch, F.Execution_Part):
                a, _ = statement_lines(ch.children[0])
                # (to the line before 'contains': the last statement may be a
                # construct, whose own span is its first line)
                inner = [c for c in unit.children if isinstance(c, F.Internal_Subprogram_Part)]
                b = statement_lines(inner[0])[0] - 1 if inner else last - 1
                for no in range(a, b + 1):
                    lines[no - 1] = ""
    return "\n".join(lines)


def _lines(unit) -> tuple[int, int]:
    """First and last line of program *unit*'s statements."""
    from fparser.two.utils import walk
    spans = [n.item.span for n in walk(unit) if getattr(getattr(n, "item", None), "span", None)]
    return min(a for a, _ in spans), max(b for _, b in spans)
