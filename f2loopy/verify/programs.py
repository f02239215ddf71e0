"""The original of a main program's internal procedures, callable by the
check harness: the program as a module of the same name (its variables
module variables, its executable statements blanked, the line numbers kept
for coverage), so that the harness's shims can ``use`` the procedures and
set the program's variables as module data."""

from __future__ import annotations

import re

_END_PROGRAM = re.compile(r"(\s*)end(\s*program\b.*)?\s*$", re.IGNORECASE)


def program_as_module(text: str, filename: str, fixed_form: bool) -> str:
    """*text* with each main program that has internal procedures turned into
    a module (the rest of the file as it is)."""
    from fparser.two import Fortran2003 as F

    from f2loopy.frontend.reader import parse_units
    from f2loopy.frontend.source import SourceFile, statement_lines
    lines = text.split("\n")
    src = SourceFile(filename, text, fixed_form=fixed_form)
    for unit in parse_units(src, jobs=1):
        if not isinstance(unit, F.Main_Program) or not any(
                isinstance(ch, F.Internal_Subprogram_Part) for ch in unit.children):
            continue
        name = str(unit.children[0].items[1])
        first, _ = statement_lines(unit.children[0])
        last, _ = statement_lines(unit.children[-1])
        indent = "      " if fixed_form else ""
        lines[first - 1] = f"{indent}module {name}"
        m = _END_PROGRAM.match(lines[last - 1])
        lines[last - 1] = f"{indent}end module {name}" if m else lines[last - 1]
        for ch in unit.children:
            if isinstance(ch, F.Execution_Part):
                a, _ = statement_lines(ch.children[0])
                _, b = statement_lines(ch.children[-1])
                for no in range(a, b + 1):
                    lines[no - 1] = ""
    return "\n".join(lines)
