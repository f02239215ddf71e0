"""``f2loopy check``'s options as one frozen object (:class:`CheckOptions`):
what it copies and refuses, and how the coverage rounds pass it along."""

from __future__ import annotations

import dataclasses
import types

import pytest

from f2loopy.pipeline.options import TranslateOptions
from f2loopy.verify.check import CheckError, CheckOptions, CheckReport, check_source
from f2loopy.verify.coverage import check_covering

SCALE = """subroutine scale(n, a, x)
  implicit none
  integer n, i
  real a, x(n)
  do i = 1, n
    x(i) = a * x(i)
  end do
end subroutine
"""


def test_options_are_frozen_copies():
    sizes, ranges = {"n": 5}, {"a": [0, 1]}
    tolerances = {"float32": {"rtol": 1e-4}}
    options = CheckOptions(sizes=sizes, ranges=ranges, tolerances=tolerances,
                           fortran_flags=["-O1"], char_exclude={"c": {"N"}})
    sizes["n"], ranges["b"], tolerances["float32"]["rtol"] = 6, (1, 2), 0.5
    assert dict(options.sizes) == {"n": 5} and dict(options.ranges) == {"a": (0, 1)}
    assert options.tolerances["float32"]["rtol"] == 1e-4
    assert options.fortran_flags == ("-O1",) and options.char_exclude["c"] == frozenset({"N"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.seed = 3        # type: ignore[misc]
    with pytest.raises(TypeError):
        options.sizes["n"] = 7  # type: ignore[index]
    with pytest.raises(TypeError):
        options.tolerances["float32"]["rtol"] = 1.0  # type: ignore[index]
    again = options.replace(seed=3)
    assert (again.seed, options.seed, again.sizes) == (3, 0, options.sizes)


@pytest.mark.parametrize("field, value", [("undefines", ("X",)), ("search_files", ("b.f90",)),
                                          ("output_dir", "out"), ("kernels", ("scale",))])
def test_translation_options_the_check_does_not_follow_are_refused(field, value):
    with pytest.raises(TypeError, match=f"does not follow the translation's {field}"):
        CheckOptions(translation=TranslateOptions(**{field: value}))


def test_translation_must_be_translate_options():
    with pytest.raises(TypeError, match="translation must be a TranslateOptions, not dict"):
        CheckOptions(translation={"defines": {}})   # type: ignore[arg-type]


def test_the_kernel_chooses_what_is_translated(tmp_path):
    # (refused by the translation, before gfortran is needed)
    with pytest.raises(CheckError, match="no kernel or subroutine named 'nope' in "):
        check_source(SCALE, tmp_path / "s.f90", CheckOptions(kernel="nope"))


def test_coverage_rounds_start_from_the_options_given(tmp_path):
    seen = []

    def check(text, path, options, **context):
        seen.append((options, context))
        return CheckReport(str(path), options.seed)     # coverage not measured: one round

    given = CheckOptions(translation=TranslateOptions(defines={"k": 2}), seed=4,
                         sizes={"n": 3}, char_round=5)
    report = check_covering(SCALE, tmp_path / "s.f90", given, check=check, queue="q")
    ((first, context),) = seen
    # (the rounds share the compiled references: f2loopy.verify.fortran.ReferenceBuilds)
    from f2loopy.verify.fortran import ReferenceBuilds
    assert report.seed == 4 and set(context) == {"queue", "reference_builds"}
    assert context["queue"] == "q" and isinstance(context["reference_builds"], ReferenceBuilds)
    assert first == given.replace(assumed_size_fallback=True, char_round=0)


def test_value_styles_draw_only_the_free_data():
    """``signed``/``wide`` change the values nothing bounds; sizes, fixed
    values and ranges (user or subscript) stay as planned."""
    import numpy as np

    from f2loopy.verify.input_plan import ArgSpec, InputPlan, ValueRange
    args = {"n": ArgSpec("n", np.dtype(np.int32), False),
            "idx": ArgSpec("idx", np.dtype(np.int32), True, (400,)),
            "k": ArgSpec("k", np.dtype(np.int32), True, (400,)),
            "x": ArgSpec("x", np.dtype(np.float64), True, (400,)),
            "a": ArgSpec("a", np.dtype(np.float64), False)}
    plan = InputPlan(args, {"n": 7}, {"idx": (400,), "k": (400,), "x": (400,)},
                     {}, {"idx": ValueRange(1, 7), "a": ValueRange(2.0, 3.0)})
    for style in ("default", "signed", "wide"):
        v = plan.generate(3, style=style)
        assert v["n"] == 7 and 1 <= v["idx"].min() and v["idx"].max() <= 7
        assert 2.0 <= v["a"] <= 3.0
        if style == "default":
            assert v["x"].min() >= 0.5 and v["k"].min() >= 1
            continue
        assert v["x"].min() < 0 < v["x"].max() and v["k"].min() < 0 < v["k"].max()
        assert 0 not in v["k"] and v["x"].dtype == np.float64 and v["x"].flags.f_contiguous
    assert np.abs(plan.generate(3, style="wide")["x"]).max() > 10
    assert np.abs(plan.generate(3, style="signed")["x"]).max() <= 1.5
    with pytest.raises(ValueError, match="unknown value style 'odd'"):
        plan.generate(0, style="odd")
    with pytest.raises(TypeError, match="value_style must be one of default, signed, wide"):
        CheckOptions(value_style="odd")


def test_signed_rounds_follow_the_default_rounds(tmp_path):
    """A statement left by the default rounds gets rounds of signed data;
    each is a round of the report, named by how its data were drawn."""
    from f2loopy.verify import coverage
    styles = []

    def check(text, path, options, **context):
        styles.append(options.value_style)
        r = CheckReport(str(path), options.seed)
        r.checks = [types.SimpleNamespace(note="", kernel="scale")]   # (read for notes only)
        r.coverage = {} if options.value_style == "wide" else {6: "x(i) = a * x(i)"}
        return r

    report = check_covering(SCALE, tmp_path / "s.f90", CheckOptions(), check=check)
    n = coverage.ROUNDS
    half = coverage.SIGNED_ROUNDS // 2
    assert styles == ["default"] * (n + 1) + ["signed"] * half + ["wide"]
    assert report.coverage == {}
    assert [w for w, _ in report.rounds][n:] == [
        f"seed {n + 1 + k}, signed values" for k in range(half)] + [
        f"seed {n + 1 + half}, signed values of mixed magnitudes"]
    assert report.notes == [f"covered with signed values of mixed magnitudes (seed {n + 1 + half})"
                            ": 1 statement(s), line(s) 6"]


def test_signed_rounds_try_the_constants_flags_are_compared_with():
    from f2loopy.frontend import parse_fortran
    from f2loopy.verify.coverage import compared_values
    src = """subroutine edges(n, south, mode, x)
  integer n, south, mode, i
  real x(n)
  if (south == -1) x(1) = 0
  if (mode .eq. 2) then
    do i = 1, n
      x(i) = 2 * x(i)
    end do
  end if
  if (n > 100) x(n) = 1
end subroutine
"""
    kernels = parse_fortran(src, "edges.f90").kernels
    seen = [compared_values(src, kernels, r, 0, set()) for r in range(40)]
    assert {v.get("south") for v in seen} == {-1, None}
    assert {v.get("mode") for v in seen} == {2, None}
    assert all("n" not in v for v in seen)          # a size: the planner's
    assert all("mode" not in compared_values(src, kernels, r, 0, {"mode"}) for r in range(9))
