"""Shapes of code seen in real projects (issue 27): a fixed-form main program
without a ``program`` statement among the file's subroutines, and loop
variables that are dummy arguments or module variables."""

from __future__ import annotations

import pytest

from f2loopy.frontend import parse_fortran
from f2loopy.ir.kernel import Assignment
from shared_kernels import LOOP_VARIABLES, UNNAMED_MAIN

def test_units_around_an_unnamed_main_program_are_kernels():
    # fparser alone returns only the main program and drops both subroutines
    tu = parse_fortran(UNNAMED_MAIN, "lb.f", fixed_form=True)
    assert sorted(k.name for k in tu) == ["relax", "shift"]
    assert tu["shift"].instructions[0].span.line == 31    # the line in the file


def test_two_unnamed_main_programs_are_an_error():
    text = "      x = 1\n      end\n      subroutine s\n      end\n      y = 2\n      end\n"
    with pytest.raises(Exception) as e:
        parse_fortran(text, "two.f", fixed_form=True)
    assert "main program" in str(e.value) or "syntax" in str(e.value)


def test_a_loop_variable_that_is_an_argument_gets_its_final_value_back():
    tu = parse_fortran(LOOP_VARIABLES, "lv.f90")
    k = tu["count_to"]
    assert {a.name: a.intent for a in k.args}["i"] == "inout"
    last = k.instructions[-1]
    assert isinstance(last, Assignment) and str(last.assignee) == "i" \
        and not last.predicates and not last.within_inames
    # the module variable: an argument of the kernel too, written
    smooth = tu["smooth"]
    assert "j" in {a.name for a in smooth.args}
    assert str(smooth.instructions[-1].assignee) == "j"
