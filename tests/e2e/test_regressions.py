"""Programs the fuzzers found bugs with (tests/regressions/*.f90), each with
the check options it failed with (``! f2loopy-check:`` line) and, where the
right answer is a diagnostic, the error expected (``! f2loopy-expect: error:``;
``! f2loopy-expect: no traceback`` for hostile inputs: success or any located
diagnostic).  ``! f2loopy-xfail: REASON`` marks a bug found but not fixed: the
test must keep failing until it is (strict xfail).

Without an expected error, every output must match gfortran's."""

from __future__ import annotations

from pathlib import Path

import pytest

from f2loopy.diagnostics import F2LoopyError
from f2loopy.verify.check import check_source
from f2loopy.verify.options import CheckOptions, parse_tolerances
from f2loopy.fuzz.fuzz import NO_TRACEBACK, read_regression
from util import needs_gfortran

REGRESSIONS = sorted((Path(__file__).resolve().parents[1] / "regressions").glob("*.f90"))


def test_regressions_exist():
    assert REGRESSIONS


@needs_gfortran
@pytest.mark.parametrize("path", REGRESSIONS, ids=lambda p: p.name)
def test_regression(path, cl_queue, request):
    text, options, expect = read_regression(path)
    if options.get("xfail"):
        # a known bug not fixed yet (the reason says which): must still fail
        request.applymarker(pytest.mark.xfail(reason=options["xfail"], strict=True))
    kwargs = dict(options=CheckOptions(
        sizes=options["sizes"], ranges=options["ranges"], seed=options["seed"],
        tolerances=parse_tolerances(rtol=options.get("rtol", ()))), queue=cl_queue)
    if expect == NO_TRACEBACK:
        try:
            report = check_source(text, path, **kwargs)
        except F2LoopyError as exc:
            assert exc.span is not None and "internal error" not in exc.format()
        else:
            assert report.passed, report.format()
        return
    if expect is not None:
        with pytest.raises(F2LoopyError) as info:
            check_source(text, path, **kwargs)
        assert expect in info.value.format()
        assert "internal error" not in info.value.format()
        return
    report = check_source(text, path, **kwargs)
    assert report.passed, report.format()
