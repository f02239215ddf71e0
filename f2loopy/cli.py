"""The ``f2loopy`` command line.

Exit status: 0 success, 1 translation error (a located diagnostic is
printed), 2 usage error.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import click

from f2loopy.diagnostics import F2LoopyError
from f2loopy.version import __version__


def _parse_defines(values) -> dict:
    out = {}
    for item in values:
        if "=" not in item:
            raise click.BadParameter(f"expected NAME=VALUE, got {item!r}", param_hint="-D")
        name, value = item.split("=", 1)
        name = name.strip()
        if not name.isidentifier():
            raise click.BadParameter(f"{name!r} is not a valid name", param_hint="-D")
        out[name] = _parse_value(value.strip())
    return out


def _parse_value(text: str):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


class _Failure(Exception):
    pass


def _report(exc: BaseException, debug: bool) -> None:
    if isinstance(exc, F2LoopyError):
        click.echo(exc.format(), err=True)
    else:
        click.echo(f"f2loopy: internal error: {type(exc).__name__}: {exc}", err=True)
        if not debug:
            click.echo("f2loopy: run again with --debug for the traceback, and please report "
                       "it", err=True)
    if debug:
        traceback.print_exception(exc)


defines_option = click.option("-D", "--define", "defines", multiple=True, metavar="NAME=VALUE",
                              help="Value visible to the transformation script as NAME "
                                   "(repeatable), e.g. -D Nq=8.")
debug_option = click.option("--debug", is_flag=True,
                            help="Show Python tracebacks for errors.")
transform_option = click.option("--transform", metavar="NAME_OR_FILE", default=None,
                                help="Apply a transformation recipe from transforms/ or a "
                                     "Python file.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="f2loopy")
def main():
    """f2loopy: translate annotated Fortran subroutines to OpenCL kernels and host glue."""


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output-dir", type=click.Path(file_okay=False), default=None,
              help="Directory for the outputs (default: next to each input).")
@click.option("--depfile", type=click.Path(dir_okay=False), default=None,
              help="Write the files each output depends on (the Fortran file, recipes, "
                   "scripts) as Make rules, like gcc -MD.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=1, show_default=True,
              help="Translate up to N files at once (0: one per CPU).")
@click.option("-I", "include_dirs", multiple=True, metavar="DIR",
              type=click.Path(exists=True, file_okay=False),
              help="Look for the modules and procedures a file uses in the Fortran "
                   "sources under DIR (repeatable); the files named are searched first.")
@click.option("--progress/--no-progress", default=None,
              help="Show a progress bar on stderr (default: when stderr is a terminal).")
@defines_option
@transform_option
@debug_option
def translate(files, output_dir, depfile, jobs, progress, include_dirs, defines, transform,
              debug):
    """Translate Fortran FILES: writes NAME.cl, NAME_cl.py (Python glue), NAME_cl.f90 and
    NAME_cl.c (Fortran glue) for each.

    Nothing is written for a file that has an error; the errors of every file are reported.
    """
    from f2loopy.build import Progress, depfile_text, translate_files
    values = _parse_defines(defines)
    if progress is None:
        progress = sys.stderr.isatty()
    outcomes = translate_files(files, jobs=jobs, progress=Progress(len(files), progress),
                               output_dir=output_dir, defines=values, transform=transform,
                               debug=debug, include_dirs=include_dirs,
                               search_files=tuple(files) if len(files) > 1 else ())
    failed = 0
    for o in outcomes:
        if o.script_output:                 # what print() in the file's script wrote
            click.echo(o.script_output, nl=False)
        if o.skipped:
            click.echo(f"f2loopy: note: skipping {o.path}: {o.skipped}", err=True)
        elif o.error is not None:
            click.echo(o.error, err=True)
            failed += 1
    if depfile is not None and not failed:
        from f2loopy.pipeline import write_outputs
        try:
            write_outputs({Path(depfile): depfile_text(outcomes)})
        except Exception as exc:  # noqa: BLE001
            _report(exc, debug)
            failed += 1
    sys.exit(1 if failed else 0)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--kernel", "kernel_name", default=None, help="Only this subroutine.")
@click.option("--ir/--no-ir", default=True, help="Print the kernel IR.")
@click.option("--code/--no-code", default=True, help="Print the generated OpenCL.")
@click.option("-I", "include_dirs", multiple=True, metavar="DIR",
              type=click.Path(exists=True, file_okay=False),
              help="Look for used modules and called procedures under DIR (repeatable).")
@defines_option
@transform_option
@debug_option
def show(file, kernel_name, ir, code, include_dirs, defines, transform, debug):
    """Print the IR and the generated OpenCL of FILE (writes nothing).

    For a file that cannot be translated, lists every statement that cannot be.
    """
    from f2loopy.pipeline import translate_file
    try:
        result = translate_file(file, defines=_parse_defines(defines), transform=transform,
                                debug=debug, collect_errors=True, include_dirs=include_dirs)
    except Exception as exc:  # noqa: BLE001
        click.echo(getattr(exc, "script_output", ""), nl=False)
        _report(exc, debug)
        sys.exit(1)
    click.echo(result.script_output, nl=False)
    shown = 0
    for knl, gk in zip(result.kernels, result.generated):
        if kernel_name is not None and knl.name.lower() != kernel_name.lower():
            continue
        shown += 1
        if ir:
            click.echo(str(knl))
        if code:
            click.echo(gk.source)
    if kernel_name is not None and not shown:
        click.echo(f"f2loopy: error: no subroutine named '{kernel_name}' in {file}", err=True)
        sys.exit(1)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--size", "sizes", multiple=True, metavar="NAME=VALUE",
              help="Value of a scalar argument, e.g. a size (repeatable); others are chosen "
                   "to fit the declarations and the kernel's assumptions.")
@click.option("--range", "ranges", multiple=True, metavar="NAME=LO:HI",
              help="Range of the random values of an argument (repeatable).")
@click.option("--kernel", "kernel_name", default=None,
              help="Only this kernel (or the kernels that compute this subroutine).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the inputs.")
@click.option("--rtol", multiple=True, metavar="[TYPE=]VALUE",
              help="Relative tolerance, for all floating types or one (float32=1e-4).")
@click.option("--atol", multiple=True, metavar="[TYPE=]VALUE",
              help="Absolute tolerance (default: rtol times the largest expected value).")
@click.option("--ulps", multiple=True, metavar="[TYPE=]N",
              help="Accept results this many units in the last place apart.")
@click.option("--checkpoints/--no-checkpoints", default=True, show_default=True,
              help="Also check every checkpoint(...) of the transformation script.")
@click.option("-I", "include_dirs", multiple=True, metavar="DIR",
              type=click.Path(exists=True, file_okay=False),
              help="Look for used modules and called procedures under DIR (repeatable); "
                   "gfortran builds the files used with the original.")
@defines_option
@transform_option
@debug_option
def check(file, sizes, ranges, kernel_name, seed, rtol, atol, ulps, checkpoints, include_dirs,
          defines, transform, debug):
    """Check that the kernels of FILE compute what the original Fortran computes.

    Builds the subroutines with gfortran, runs them and the generated OpenCL on the same
    random inputs, and compares every array and scalar they write. Exit status 1 on a
    mismatch.
    """
    from f2loopy.verify.command import run_check
    sys.exit(run_check(file, defines=_parse_defines(defines), transform=transform, sizes=sizes,
                       ranges=ranges, kernel=kernel_name, seed=seed, rtol=rtol, atol=atol,
                       ulps=ulps, checkpoints=checkpoints, debug=debug, report_error=_report,
                       include_dirs=include_dirs))


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@defines_option
@click.option("--size", "sizes", multiple=True, metavar="NAME=VALUE",
              help="Value of a size argument of the kernel (repeatable), e.g. --size Ne=6910.")
@click.option("--min-time", type=float, default=0.3, show_default=True,
              help="Seconds of timed launches per level.")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV instead of a table.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write a PNG plot of the time per level (needs matplotlib).")
@click.option("--no-fortran", is_flag=True,
              help="Do not build the original with gfortran (check against the first level).")
@click.option("--bandwidth", default=None, metavar="GB/s|measure",
              help="Memory bandwidth of the device, to report the fraction of the limit "
                   "reached; 'measure' times a copy kernel in the same run.")
@debug_option
def bench(file, defines, sizes, min_time, as_csv, as_json, plot, no_fortran, bandwidth,
          debug):
    """Build, check and time every checkpoint of FILE's transformation script.

    Prints the Loo.py paper's Table 1 for this machine: per level the wall
    time, the speed-up over the first level, GFLOP/s and GB/s from the static
    counts, and whether the results match the original Fortran.
    """
    from f2loopy.bench import run_bench
    try:
        report = run_bench(file, defines=_parse_defines(defines),
                           sizes={k: int(v) for k, v in _parse_defines(sizes).items()},
                           min_time=min_time, fortran=not no_fortran,
                           bandwidth_gbs=_bandwidth(bandwidth),
                           progress=lambda label: click.echo(f"bench: {label}", err=True))
    except Exception as exc:  # noqa: BLE001
        _report(exc, debug)
        sys.exit(1)
    if as_json:
        click.echo(report.to_json())
    elif as_csv:
        click.echo(report.to_csv(), nl=False)
    else:
        click.echo(report.to_text(), nl=False)
    if plot:
        from f2loopy.bench_plot import plot_report
        plot_report(report, plot)
    if any(r.ok is False for r in report.rows):
        sys.exit(1)


def _bandwidth(text):
    if text is None or text == "measure":
        return text
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise click.BadParameter(f"expected GB/s or 'measure', got {text!r}",
                                 param_hint="--bandwidth")
    return value


def entry():
    """The ``f2loopy`` console script.

    Translations must be byte-identical from run to run (build systems
    compare them), but a transformation script may iterate over a set of
    names (the paper's does), whose order Python randomises per process; so
    the command runs with a fixed hash seed, re-executing itself once if the
    environment did not set one.
    """
    import os
    if os.environ.get("PYTHONHASHSEED") is None:
        env = dict(os.environ, PYTHONHASHSEED="0")
        try:
            os.execve(sys.executable, [sys.executable, "-m", "f2loopy.cli", *sys.argv[1:]], env)
        except OSError:
            pass                # run as we are: only the reproducibility suffers
    main(prog_name="f2loopy")


if __name__ == "__main__":  # pragma: no cover
    main(prog_name="f2loopy")
