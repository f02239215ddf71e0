"""The ``f2loopy`` command line.

Exit status: 0 success, 1 translation error (a located diagnostic is
printed), 2 usage error.
"""

from __future__ import annotations

import keyword
import sys
import traceback
from pathlib import Path

import click

from f2loopy.cli_kinds import real_kind_option
from f2loopy.cli_tools import check_macro_names, cmake_dir_option, recipes, samples
from f2loopy.diagnostics import F2LoopyError
from f2loopy.escape import (
    UnrepresentablePath, is_identifier, make_path, terminal)
from f2loopy.version import __version__


def _echo(text="", **kwargs) -> None:
    """Print *text* (from a file, a script, a file name: never trusted) with
    every control sequence shown as an escape (:func:`f2loopy.escape.terminal`)."""
    click.echo(terminal(text), **kwargs)


def _parse_defines(values) -> dict:
    out = {}
    for item in values:
        if "=" not in item:
            raise click.BadParameter(f"expected NAME=VALUE, got {ascii(item)}", param_hint="-D")
        name, value = item.split("=", 1)
        name = name.strip(" ")
        # a macro name may start with underscores (-D_NX=100, as cpp takes it); such a
        # name is a macro only, not a variable of the transformation script
        if not is_identifier(name, 63) or keyword.iskeyword(name):
            raise click.BadParameter(
                f"{ascii(name)} is not a plain name (a letter or underscores, then letters, "
                "digits and underscores)", param_hint="-D")
        out[name] = _parse_value(value.strip())
    return out


def _parse_value(text: str):
    """A -D value: a Python literal (8, 1e-3, (8, 4), 'name', [1, 2]), true/false,
    or else the text itself."""
    from f2loopy.cli_tools import literal_value
    return literal_value(text)


def _report(exc: BaseException, debug: bool) -> None:
    if isinstance(exc, F2LoopyError):
        _echo(exc.format(), err=True)
    else:
        _echo(f"f2loopy: internal error: {type(exc).__name__}: {exc}", err=True)
        if not debug:
            _echo("f2loopy: run again with --debug for the traceback, and please report it",
                  err=True)
    if debug:
        _echo("".join(traceback.format_exception(exc)).rstrip("\n"), err=True)


def _check_defines(ctx, param, values):
    """-D NAME means NAME=1 (as for a compiler); a bad -D is a usage error."""
    values = tuple(v if "=" in v else f"{v}=1" for v in values)
    _parse_defines(values)
    return values


def _int_values(ctx, param, values) -> dict:
    """``NAME=INTEGER`` options (``--size Ne=6910``): a dict, or a usage error."""
    out = {}
    for item in values:
        name, eq, value = item.partition("=")
        if not eq or not name.strip().isidentifier():
            raise click.BadParameter(f"expected NAME=VALUE, got {ascii(item)}")
        try:
            out[name.strip()] = int(value.strip())
        except ValueError:
            raise click.BadParameter(f"{ascii(value)} is not an integer (for {name.strip()})") \
                from None
    return out


defines_option = click.option("-D", "--define", "defines", multiple=True, metavar="NAME[=VALUE]",
                              callback=_check_defines,
                              help="Value visible to the transformation script as NAME, and a "
                                   "macro of the C preprocessor for .F90/.F files, files "
                                   "with # lines and every file with -cpp (repeatable), e.g. -D Nq=8, -D tile=(8,4), "
                                   "-D USE_GPU.")
undefines_option = click.option("-U", "--undefine", "undefines", multiple=True, metavar="NAME",
                                callback=lambda ctx, param, values: check_macro_names(values),
                                help="Undefine a macro of the C preprocessor (repeatable).")
debug_option = click.option("--debug", is_flag=True,
                            help="Show Python tracebacks for errors.")
def _trust_scripts(ctx, param, value):
    if value:
        import os

        from f2loopy.directives.runner import TRUST_ENV
        os.environ[TRUST_ENV] = "1"         # also for the -j worker processes
        click.echo("f2loopy: warning: --trust-scripts: transformation scripts run WITHOUT the "
                   "sandbox; they can read, write and delete your files, start programs and "
                   "use the network (only the CPU, time and memory limits stay)", err=True)
    return value


trust_option = click.option("--trust-scripts", is_flag=True, expose_value=False,
                            callback=_trust_scripts,
                            help="Run the files' transformation scripts without the sandbox "
                                 "(needed where it is not available: other than Linux on "
                                 "x86-64 or with libseccomp). Only for files whose authors "
                                 "you trust.")


def source_form_option(f):
    """``-ffree-form``/``-ffixed-form``, as gfortran spells them: the source form
    of every file of the translation (default: from each file's name)."""
    f = click.option("-ffixed-form", "source_form", flag_value="fixed",
                     help="Read the files as fixed form, whatever their names.")(f)
    return click.option("-ffree-form", "source_form", flag_value="free",
                        help="Read the files as free form, whatever their names (a .F "
                             "file that the project compiles with -ffree-form).")(f)


def cpp_option(f):
    """``-cpp``/``-nocpp``, as gfortran spells them: preprocess every file of
    the translation, or none (default: by each file's name, .F90 yes and
    .f90 no, and a file with preprocessor lines); the last one given wins."""
    f = click.option("-nocpp", "cpp", flag_value="off",
                     help="Preprocess no file, whatever its name (.F90 included).")(f)
    return click.option("-cpp", "cpp", flag_value="on",
                        help="Preprocess every file with the C preprocessor, whatever its "
                             "name (a .f90 that the project compiles with -cpp -DN=128), "
                             "also the modules found through -I.")(f)


def _cpp(cpp: str | None) -> bool | None:
    """The pipeline's *cpp* for :func:`cpp_option`'s value."""
    return None if cpp is None else cpp == "on"


def _fixed_form(source_form: str | None) -> bool | None:
    """The pipeline's *fixed_form* for :func:`source_form_option`'s value."""
    return None if source_form is None else source_form == "fixed"


def _check_bindings(ctx, param, values):
    from f2loopy.frontend.procedure_dummies import parse_bindings
    try:
        return parse_bindings(values)
    except F2LoopyError as exc:
        raise click.BadParameter(exc.message) from None


bind_option = click.option("--bind", "bindings", multiple=True,
                           metavar="KERNEL:DUMMY=PROCEDURE", callback=_check_bindings,
                           help="The procedure a dummy procedure of KERNEL calls (a "
                                "subroutine or function of the file or of a module; "
                                "repeatable): the kernel is specialised to it and takes no "
                                "argument for the dummy.")

transform_option = click.option("--transform", metavar="NAME_OR_FILE", default=None,
                                help="Apply a transformation recipe from transforms/ or a "
                                     "Python file.")


ENVIRONMENT = """\b
Environment of the generated glue (Python and Fortran):
  F2LOOPY_DEVICE=gpu|cpu|accelerator   the devices of that type only
  F2LOOPY_DEVICE=NAME                  a platform, else a device, whose name has NAME
  F2LOOPY_DEVICE=P:D                   platform P, device D (indices or parts of names)
  F2LOOPY_VERBOSE=1                    print the device chosen
  F2LOOPY_PROFILE=1                    per kernel at exit: calls, kernel, transfer and
                                       glue time, bytes each way
Environment of the commands: F2LOOPY_CACHE_DIR, F2LOOPY_NO_CACHE=1,
F2LOOPY_SCRIPT_CPU_LIMIT, F2LOOPY_SCRIPT_WALL_LIMIT, F2LOOPY_SCRIPT_MEMORY_LIMIT.
"""


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=ENVIRONMENT)
@click.version_option(__version__, prog_name="f2loopy")
@cmake_dir_option
def main():
    """f2loopy: translate annotated Fortran subroutines to OpenCL kernels and host glue."""


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output-dir", type=click.Path(file_okay=False), default=None,
              help="Directory for the outputs (default: next to each input).")
@click.option("--depfile", type=click.Path(dir_okay=False), default=None,
              help="Write the files each output depends on (the Fortran file, recipes, "
                   "scripts) as Make rules, like gcc -MD.")
@click.option("--touch-outputs", is_flag=True,
              help="Give every output a new modification time, also those whose content "
                   "did not change (for Make rules: an edit of a comment then does not "
                   "make every later build translate again).")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=1, show_default=True,
              help="Translate up to N files at once (0: one per CPU).")
@click.option("-I", "include_dirs", multiple=True, metavar="DIR",
              type=click.Path(exists=True, file_okay=False),
              help="Look for the modules and procedures a file uses in the Fortran "
                   "sources under DIR (repeatable); the files named are searched first.")
@click.option("--progress/--no-progress", default=None,
              help="Show a progress bar on stderr (default: when stderr is a terminal).")
@click.option("--no-tuning", is_flag=True,
              help="Ignore FILE.tune.json (the tunable choices 'f2loopy tune' recorded).")
@click.option("--kernel", "kernel_names", multiple=True, metavar="NAME",
              help="Translate only this subroutine or function (repeatable; what it calls is "
                   "inlined as always): the file's other units do not matter.")
@click.option("--timings", is_flag=True,
              help="Print a table of the seconds each stage of each file took (start-up, "
                   "read, preprocess, parse, script, child codegen or codegen, glue, write) "
                   "to stderr.")
@bind_option
@defines_option
@undefines_option
@source_form_option
@cpp_option
@real_kind_option
@transform_option
@trust_option
@debug_option
def translate(files, output_dir, depfile, touch_outputs, jobs, progress, include_dirs, no_tuning,
              default_real_kind,
              kernel_names, timings, bindings, defines, undefines, source_form, cpp, transform,
              debug):
    """Translate Fortran FILES: writes NAME.cl, NAME_cl.py (Python glue), NAME_cl.f90 and
    NAME_cl.c (Fortran glue) for each.

    Nothing is written for a file that has an error; the errors of every file are reported.
    """
    import gc
    import time

    from f2loopy.build import (GENERATED_SKIP, Progress, check_output_collisions, depfile_text,
                               translate_files)
    from f2loopy.pipeline import TranslateOptions
    from f2loopy.pipeline.timings import cpu_seconds
    started, startup, startup_cpu = time.perf_counter(), _process_age(), cpu_seconds()
    # a short-lived process that builds many small IR objects: collect the
    # youngest generation less often (about 7% less CPU time for the paper's
    # file); the sandbox child inherits the setting
    gc.set_threshold(20000, 50, 50)
    if _OWN_PROCESS and len(files) == 1:
        # the command's process ends after this file without tearing down
        # (_exit_without_teardown): collecting cycles would only cost time
        # (27 ms of the paper's file, 0.34 s of a 10,000-line one) and save
        # memory nobody needs back; sandbox children collect as before
        gc.disable()
    values = _parse_defines(defines)
    kernels = None
    if kernel_names:
        from f2loopy.frontend.kernel_choice import check_kernel_names
        try:
            kernels = check_kernel_names(kernel_names)
        except F2LoopyError as exc:
            raise click.BadParameter(exc.message, param_hint="--kernel") from None
    if depfile is not None:     # before anything is written: a depfile must name them all
        for given, hint in [(f, "FILES") for f in files] + [(output_dir, "--output-dir"),
                                                            (transform, "--transform")]:
            try:
                make_path(given or "")
            except UnrepresentablePath as exc:
                raise click.BadParameter(str(exc), param_hint=hint) from None
    try:        # before anything is written: one file's outputs never replace another's
        check_output_collisions(files, output_dir)
    except F2LoopyError as exc:
        _report(exc, debug)
        sys.exit(1)
    if progress is None:
        progress = sys.stderr.isatty()
    options = TranslateOptions(output_dir=output_dir, defines=values, transform=transform,
                               debug=debug, include_dirs=include_dirs,
                               search_files=tuple(files) if len(files) > 1 else (),
                               undefines=undefines, tuning=not no_tuning,
                               fixed_form=_fixed_form(source_form), cpp=_cpp(cpp),
                               kernels=kernels, bindings=bindings,
                               default_real_kind=default_real_kind)
    outcomes = translate_files(files, jobs=jobs, progress=Progress(len(files), progress),
                               options=options, touch_outputs=touch_outputs,
                               for_depfile=depfile is not None)
    failed = 0
    generated = [o for o in outcomes if o.skipped == GENERATED_SKIP]
    for o in outcomes:
        if o.script_output:                 # what print() in the file's script wrote
            _echo(o.script_output, nl=False)
        for note in o.notes:
            _echo(f"f2loopy: note: {note}", err=True)
        for warning in o.warnings:
            _echo(warning, err=True)
        if o.skipped and o.skipped != GENERATED_SKIP:
            _echo(f"f2loopy: note: skipping {o.path}: {o.skipped}", err=True)
        elif o.error is not None:
            _echo(o.error, err=True)
            failed += 1
    if kernels and outcomes and all(o.skipped for o in outcomes):
        # (every file only modules: the units chosen are in none of them)
        _echo(f"f2loopy: error: --kernel {kernels[0]}: none of the files given has a "
              "subroutine or function of that name", err=True)
        failed += 1
    if len(generated) == 1:
        _echo(f"f2loopy: note: skipping {generated[0].path}: {GENERATED_SKIP}", err=True)
    elif generated:
        # `f2loopy translate *.f90` again: the glue the last run wrote is left alone
        _echo(f"f2loopy: note: skipping {len(generated)} files f2loopy generated "
              f"({generated[0].path}, ...)", err=True)
    if depfile is not None and not failed:
        from f2loopy.pipeline import write_outputs
        try:
            write_outputs({Path(depfile): depfile_text(outcomes)})
        except UnrepresentablePath as exc:
            _report(F2LoopyError(f"cannot write the depfile: {exc}"), debug)
            failed += 1
        except Exception as exc:  # noqa: BLE001
            _report(exc, debug)
            failed += 1
    if timings:
        _echo_timings(outcomes, startup, time.perf_counter() - started,
                      (startup_cpu, cpu_seconds() - startup_cpu))
    global _TRANSLATED
    _TRANSLATED = True
    sys.exit(1 if failed else 0)


def _process_age() -> float | None:
    """Seconds since this process started (its re-execution with a fixed
    hash seed included: it keeps the process), or None where /proc cannot
    tell (then ``--timings`` shows no start-up row)."""
    import os
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        # the fields after the command name (which may hold spaces and ')')
        ticks = int(stat[stat.rindex(")") + 2:].split()[19])
        return max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


def _echo_timings(outcomes, startup: float | None, command_s: float,
                  cpu: tuple[float, float]) -> None:
    """``--timings``: one table per file on stderr, then the command's total
    (*cpu*: the CPU seconds of the start-up, the re-execution included, and
    of the rest, children included)."""
    from f2loopy.pipeline.timings import timings_table
    for o in outcomes:
        if o.timings:
            _echo(timings_table(f"f2loopy: timings of {o.path} (seconds):", o.timings,
                                o.seconds or None, o.cpu), err=True)
    rows = ([("start-up", startup)] if startup is not None else []) + \
        [("translate command", command_s)]
    total = startup + command_s if startup is not None else None
    used = [("start-up", cpu[0]), ("translate command", cpu[1]), ("total", sum(cpu))]
    _echo(timings_table("f2loopy: timings of the command (seconds):", rows, total, used),
          err=True)


def _single_kernel(ctx, param, value):
    """``--kernel`` of a command that takes one: given twice is an error
    (click would keep the last one silently)."""
    if len(value) > 1:
        from f2loopy.escape import visible
        raise click.BadParameter(f"given {len(value)} times ({', '.join(map(visible, value))}); this "
                                 "command takes one kernel: run it once per kernel",
                                 ctx=ctx, param=param)
    return value[0] if value else None


@main.command()
@click.argument("file", type=click.Path())
@click.option("--kernel", "kernel_name", multiple=True, callback=_single_kernel,
              metavar="NAME", help="Only this subroutine.")
@click.option("--ir/--no-ir", default=True, help="Print the kernel IR.")
@click.option("--code/--no-code", default=True, help="Print the generated OpenCL.")
@click.option("-I", "include_dirs", multiple=True, metavar="DIR",
              type=click.Path(exists=True, file_okay=False),
              help="Look for used modules and called procedures under DIR (repeatable).")
@bind_option
@defines_option
@undefines_option
@source_form_option
@cpp_option
@real_kind_option
@transform_option
@trust_option
@debug_option
def show(file, kernel_name, ir, code, include_dirs, bindings, defines, undefines, source_form,
         cpp, transform, debug, default_real_kind):
    """Print the IR and the generated OpenCL of FILE (writes nothing).

    For a file that cannot be translated, lists every statement that cannot be.
    """
    from f2loopy.pipeline import translate_file
    try:
        result = translate_file(file, defines=_parse_defines(defines), transform=transform,
                                debug=debug, collect_errors=True, include_dirs=include_dirs,
                                undefines=undefines, checkpoints=False,
                                fixed_form=_fixed_form(source_form), cpp=_cpp(cpp),
                                bindings=bindings, default_real_kind=default_real_kind)
    except Exception as exc:  # noqa: BLE001
        _echo(getattr(exc, "script_output", ""), nl=False)
        _report(exc, debug)
        sys.exit(1)
    _echo(result.script_output, nl=False)
    shown = 0
    for knl, gk in zip(result.kernels, result.generated, strict=True):
        if kernel_name is not None and knl.name.lower() != kernel_name.lower():
            continue
        shown += 1
        if ir:
            _echo(str(knl))
        if code:
            _echo(gk.source)
    if kernel_name is not None and not shown:
        _echo(f"f2loopy: error: no subroutine named '{kernel_name}' in {file}", err=True)
        sys.exit(1)


@main.command()
@click.argument("file", type=click.Path())
@click.option("--size", "sizes", multiple=True, metavar="NAME=VALUE",
              help="Value of a scalar argument, e.g. a size, or the string of a CHARACTER "
                   "flag (trans=T) (repeatable); others are chosen to fit the declarations "
                   "and the kernel's assumptions.")
@click.option("--range", "ranges", multiple=True, metavar="NAME=LO:HI",
              help="Range of the random values of an argument (repeatable).")
@click.option("--kernel", "kernel_name", multiple=True, callback=_single_kernel, metavar="NAME",
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
@click.option("--fc", metavar="COMPILER", default=None,
              help="The project's Fortran compiler for the original (gfortran-compatible: "
                   "mpif90, a path; default $F2LOOPY_FC, else gfortran).")
@click.option("--fflags", metavar="FLAGS", default=None,
              help="The project's compiler flags for the original, one string "
                   "(--fflags '-O2 -fdefault-real-8'; default -O0).")
@bind_option
@defines_option
@source_form_option
@cpp_option
@real_kind_option
@transform_option
@trust_option
@debug_option
def check(file, sizes, ranges, kernel_name, seed, rtol, atol, ulps, checkpoints, include_dirs,
          fc, fflags, bindings, defines, source_form, cpp, transform, debug, default_real_kind):
    """Check that the kernels of FILE compute what the original Fortran computes.

    Builds the subroutines with gfortran, runs them and the generated OpenCL on the same
    random inputs, and compares every array and scalar they write. Exit status 1 on a
    mismatch.
    """
    from f2loopy.verify.command import run_check
    sys.exit(run_check(file, defines=_parse_defines(defines), transform=transform, sizes=sizes,
                       ranges=ranges, kernel=kernel_name, seed=seed, rtol=rtol, atol=atol,
                       ulps=ulps, checkpoints=checkpoints, debug=debug, report_error=_report,
                       include_dirs=include_dirs, fc=fc, fflags=fflags,
                       fixed_form=_fixed_form(source_form), cpp=_cpp(cpp),
                       bindings=bindings, default_real_kind=default_real_kind))


@main.command()
@click.argument("file", type=click.Path())
@defines_option
@click.option("--size", "sizes", multiple=True, metavar="NAME=VALUE", callback=_int_values,
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
              callback=lambda ctx, param, value: _bandwidth(value),
              help="Memory bandwidth of the device, to report the fraction of the limit "
                   "reached; 'measure' times a copy kernel in the same run.")
@transform_option
@click.option("-I", "include_dirs", multiple=True, metavar="DIR",
              type=click.Path(exists=True, file_okay=False),
              help="Look for used modules and called procedures under DIR (repeatable).")
@click.option("--kernel", "kernel_name", multiple=True, callback=_single_kernel, metavar="NAME",
              help="Time only this kernel of a file that holds several (its script runs as "
                   "always).")
@cpp_option
@real_kind_option
@trust_option
@debug_option
def bench(file, defines, sizes, min_time, as_csv, as_json, plot, no_fortran, bandwidth,
          transform, include_dirs, kernel_name, cpp, debug, default_real_kind):
    """Build, check and time every checkpoint of FILE's transformation script and its
    result ("final", where it differs from the last checkpoint).

    Prints the Loo.py paper's Table 1 for this machine: per level the wall
    time, the speed-up over the first level, GFLOP/s and GB/s from the static
    counts, and whether the results match the original Fortran.
    """
    if as_json and as_csv:
        raise click.UsageError("--json and --csv cannot be used together")
    if plot:
        import importlib.util
        if importlib.util.find_spec("matplotlib") is None:
            _echo("f2loopy: error: --plot needs matplotlib (pip install matplotlib); "
                       "nothing was run", err=True)
            sys.exit(1)
    from f2loopy.bench.run import run_bench
    try:
        report = run_bench(file, defines=_parse_defines(defines), sizes=sizes,
                           min_time=min_time, fortran=not no_fortran,
                           bandwidth_gbs=bandwidth, transform=transform,
                           include_dirs=include_dirs, kernel=kernel_name, cpp=_cpp(cpp),
                           default_real_kind=default_real_kind, progress=lambda label: _echo(f"bench: {label}", err=True))
    except Exception as exc:  # noqa: BLE001
        _report(exc, debug)
        sys.exit(1)
    if as_json:
        _echo(report.to_json())
    elif as_csv:
        _echo(report.to_csv(), nl=False)
    else:
        _echo(report.to_text(), nl=False)
    if plot:
        from f2loopy.bench.plot import plot_report
        plot_report(report, plot)
    if any(r.ok is False for r in report.rows):
        sys.exit(1)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@defines_option
@transform_option
@click.option("--size", "sizes", multiple=True, metavar="NAME=VALUE",
              help="Value of a size argument for timing (repeatable), e.g. --size Ne=6910.")
@click.option("--verify-size", "verify_sizes", multiple=True, metavar="NAME=VALUE",
              help="Sizes for checking each variant against the untransformed kernel "
                   "(default: the --size values).")
@click.option("--budget", type=click.IntRange(min=1, max=10000), default=64, show_default=True,
              help="Most variants to time (a larger space is searched: random, then greedy).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the inputs and of the search.")
@click.option("--min-time", type=float, default=0.3, show_default=True,
              help="Seconds of timed launches per variant.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write a PNG plot of the time per variant (needs matplotlib).")
@click.option("--dry-run", is_flag=True, help="Measure, but do not write the tuning record.")
@click.option("-I", "include_dirs", multiple=True, metavar="DIR",
              type=click.Path(exists=True, file_okay=False),
              help="Look for used modules and called procedures under DIR (repeatable).")
@cpp_option
@real_kind_option
@debug_option
def tune(file, defines, transform, sizes, verify_sizes, budget, seed, min_time, plot, dry_run,
         include_dirs, cpp, debug, default_real_kind):
    """Time the variants of FILE's tunable(...) choices on the OpenCL device, check each
    against the untransformed kernel, and record the fastest in FILE.tune.json, which
    'f2loopy translate' then uses."""
    from f2loopy.tune.command import plot_tune, run_tune

    def int_sizes(items, option):
        out = {}
        for k, v in _parse_defines(items).items():
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise click.BadParameter(f"{k}: expected a non-negative integer",
                                         param_hint=option)
            out[k] = v
        return out
    try:
        if plot:
            import importlib.util
            if importlib.util.find_spec("matplotlib") is None:
                raise F2LoopyError("--plot needs matplotlib (pip install matplotlib)")
        report = run_tune(file, defines=_parse_defines(defines), transform=transform,
                          sizes=int_sizes(sizes, "--size"),
                          verify_sizes=int_sizes(verify_sizes, "--verify-size"),
                          budget=budget, seed=seed, min_time=min_time, store=not dry_run,
                          include_dirs=include_dirs, cpp=_cpp(cpp),
                          default_real_kind=default_real_kind, progress=lambda line: _echo(f"tune: {line}", err=True))
        _echo(report.to_text())
        if plot:
            plot_tune(report, plot)
    except Exception as exc:  # noqa: BLE001
        _report(exc, debug)
        sys.exit(1)


def _bandwidth(text):
    if text is None or text == "measure":
        return text
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise click.BadParameter(f"expected GB/s or 'measure', got {ascii(text)}",
                                 param_hint="--bandwidth")
    return value


main.add_command(recipes)
main.add_command(samples)


#: set by the console script (:func:`entry`, ``python -m f2loopy.cli``): the
#: process is this command's alone and ends when it returns
_OWN_PROCESS = False
#: set when ``translate`` has written everything and reported (see :func:`entry`)
_TRANSLATED = False


def _exit_without_teardown(code) -> None:
    """End the process with *code* (a ``SystemExit`` code) without the
    interpreter's teardown: freeing every object of the translation one by
    one, a last full garbage collection, the modules' finalizers took 0.1 s
    of the paper's file and 0.2 s of a 1,000-line one, longer than
    translating some files.  Only where nothing is left to do: output
    flushed, no thread or child process running; otherwise the usual exit."""
    import os
    import threading
    status = 0 if code is None else code
    if not isinstance(status, int):
        print(terminal(str(status)), file=sys.stderr)
        status = 1
    if threading.active_count() > 1 or (
            "multiprocessing" in sys.modules
            and sys.modules["multiprocessing"].active_children()):
        raise SystemExit(code)
    try:
        if "logging" in sys.modules:
            sys.modules["logging"].shutdown()      # what its exit handler does
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:          # None where the process has none
                stream.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None           # let the usual exit report it
    os._exit(status)


def entry():
    """The ``f2loopy`` console script.

    Translations must be byte-identical from run to run (build systems
    compare them), but a transformation script may iterate over a set of
    names (the paper's does), whose order Python randomises per process; so
    the command runs with a fixed hash seed, re-executing itself once if the
    environment did not set one.  f2loopy's own code does not depend on the
    seed (``tests/cli/test_hash_seed.py``): a ``translate`` that runs no
    script (:func:`_runs_no_script`) goes on in this process, which saves
    the start of a second interpreter.
    """
    if _runs_no_script(sys.argv[1:]):
        # as the re-executed process would (f2loopy/reexec.py): nothing is
        # imported from the current folder ('' is there under ``python -c``)
        if sys.path[:1] == [""]:
            del sys.path[0]
    else:
        from f2loopy.reexec import reexecute
        reexecute("f2loopy.cli", "_run")   # (never from the current folder: f2loopy/reexec.py)
    _run()


def _runs_no_script(args: list) -> bool:
    """Whether the command line *args* is a ``translate`` that certainly
    runs no transformation script: no ``--transform`` recipe, and every file
    named is one that :func:`f2loopy.reexec.may_hold_script` clears.  Any
    doubt (another command, options before it, arguments that do not parse)
    answers False."""
    if not args or args[0] != "translate":
        return False
    from f2loopy.reexec import may_hold_script
    try:
        # raw values from click's own parser: no callbacks (--trust-scripts
        # warns), conversions or messages; the command's parse comes later
        ctx = click.Context(translate, info_name="translate", resilient_parsing=True)
        params, _, _ = translate.make_parser(ctx).parse_args(list(args[1:]))
    except (click.exceptions.ClickException, TypeError, ValueError):
        return False
    files = params.get("files") or ()
    if params.get("transform") is not None or not isinstance(files, (list, tuple)) or \
            not files:
        return False
    return all(isinstance(f, str) and not may_hold_script(f) for f in files)


def _run() -> None:
    global _OWN_PROCESS
    _OWN_PROCESS = True
    try:
        main(prog_name="f2loopy")
    except SystemExit as exc:
        if not _TRANSLATED:
            raise
        _exit_without_teardown(exc.code)


if __name__ == "__main__":  # pragma: no cover - what entry() re-executes
    _run()
