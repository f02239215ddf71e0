"""The body of ``f2loopy check`` (the click command in :mod:`f2loopy.cli` only
declares the options)."""

from __future__ import annotations

import click

from f2loopy.diagnostics import F2LoopyError
from f2loopy.escape import terminal


def run_check(file, *, defines: dict, transform, sizes, ranges, kernel, seed, rtol, atol,
              ulps, checkpoints: bool, debug: bool, report_error, include_dirs=(), fc=None,
              fflags=None, fixed_form: bool | None = None, bindings=(),
              cpp: bool | None = None, default_real_kind: int = 4) -> int:
    """Run the check of *file* and print its report; returns the exit status
    (0 every output matches, 1 a mismatch or an error).  Option syntax
    errors raise :class:`click.UsageError` (exit status 2)."""
    from f2loopy.pipeline.options import TranslateOptions
    from f2loopy.verify.check import check_file
    from f2loopy.verify.options import (
        CheckOptions, parse_assignments, parse_range, parse_size, parse_tolerances)
    from f2loopy.verify.honesty import CheckUsageError
    import os
    import shlex
    flags: dict = {}          # check's own flags unless --fflags gives some
    if fflags is not None:
        try:
            flags["fortran_flags"] = tuple(shlex.split(fflags))
        except ValueError as exc:
            raise click.UsageError(f"--fflags: {exc}") from None
        # gfortran's kind options there change what the translation must read
        from f2loopy.kind_flags import KIND_FLAGS, check_kind_flags
        given = [f for f in flags["fortran_flags"] if f in KIND_FLAGS]
        if given:
            try:
                if check_kind_flags(given) == 8:
                    default_real_kind = 8       # the translation reads it the same way
            except ValueError as exc:
                raise click.UsageError(f"--fflags: {exc}") from None
    if fc is not None:
        import shutil
        if not shutil.which(fc):
            raise click.UsageError(f"--fc: the Fortran compiler {ascii(fc)} was not found")
        os.environ["F2LOOPY_FC"] = fc     # also for the forked children that build
    try:
        size_values = parse_assignments(sizes, "--size", parse_size)
        range_values = parse_assignments(ranges, "--range", parse_range)
        tolerances = parse_tolerances(rtol, atol, ulps)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    options = CheckOptions(
        translation=TranslateOptions(defines=defines, transform=transform,
                                     include_dirs=include_dirs, checkpoints=checkpoints,
                                     fixed_form=fixed_form, cpp=cpp, bindings=bindings,
                                     default_real_kind=default_real_kind),
        kernel=kernel, sizes=size_values, ranges=range_values, seed=seed,
        tolerances=tolerances, coverage=True, **flags)
    import numpy as np
    try:
        # (an infinity or NaN the subroutines compute is a value the report
        # shows, not a numpy warning on stderr)
        with np.errstate(all="ignore"):
            report = check_file(file, options)
    except CheckUsageError as exc:
        raise click.UsageError(str(exc)) from None
    except F2LoopyError as exc:
        report_error(exc, debug)
        return 1
    except Exception as exc:  # noqa: BLE001 - reported as an internal error
        report_error(exc, debug)
        return 1
    click.echo(terminal(report.format()))
    return 0 if report.passed else 1
