"""``f2loopyfc``: a compiler wrapper for existing Makefiles.

::

    make FC="f2loopyfc gfortran" FFLAGS="-O2 -DUSE_OPENCL"

stands in for the Fortran compiler.  A compile (``-c``) of a Fortran file that
carries a ``!$loopy`` block translates it and puts three things into the one
object file the Makefile asked for: the original subroutines (compiled as
usual), the Fortran glue ``NAME_cl.f90`` (modules ``foo_cl_mod``, whose
``.mod`` files land where the compiler puts modules) and the C glue
``NAME_cl.c`` (which embeds the OpenCL program).  A link adds f2loopy's runtime
(built once per compiler, in the translation cache's folder) and
``-lOpenCL -lpthread``.  Everything else passes through unchanged, so the
Makefile's own rules and dependencies keep working: an object is rebuilt
exactly when its Fortran is.

``F2LOOPYFC_OPTIONS`` adds options of ``f2loopy translate`` (``-D NAME=VALUE``,
``--transform RECIPE``, ``-ffree-form``, ``-ffixed-form``, ``--kernel NAME``); the
compile's own
``-ffree-form``/``-ffixed-form`` reach the translation too; ``F2LOOPYFC_CC`` (else ``CC``, else ``cc``) is the C
compiler for the glue and the runtime.  Errors in a translation are printed as
the compiler's are (file:line:col), and the compile fails with status 1.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from f2loopy.pipeline import INPUT_SUFFIXES

#: compiler options whose value is the next argument
_TAKES_VALUE = {"-o", "-I", "-J", "-L", "-l", "-D", "-U", "-module", "-include", "-x", "-MF",
                "-MT", "-MQ", "-isystem", "-idirafter", "-iquote", "-Xlinker", "-u"}
_LOOPY_MARK = "!$loopy"
USAGE = "usage: f2loopyfc COMPILER [compiler arguments...]   (e.g. FC=\"f2loopyfc gfortran\")"


class WrapperError(Exception):
    pass


def has_loopy_block(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return any(line.lstrip().lower().startswith(_LOOPY_MARK) for line in f)
    except OSError:
        return False


def split_arguments(args):
    """``(sources, options, output, compile_only)``: the Fortran sources of
    the command line, every other argument in order (without ``-o X``), the
    ``-o`` value, and whether ``-c`` is given."""
    sources, options = [], []
    output = None
    compile_only = False
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-o" and i + 1 < len(args):
            output = args[i + 1]
            i += 2
            continue
        if a in _TAKES_VALUE and i + 1 < len(args):
            options.extend(args[i:i + 2])
            i += 2
            continue
        if a == "-c":
            compile_only = True
        if not a.startswith("-") and a.endswith(INPUT_SUFFIXES):
            sources.append(a)
        else:
            options.append(a)
        i += 1
    return sources, options, output, compile_only


def _c_compiler() -> list[str]:
    return shlex.split(os.environ.get("F2LOOPYFC_CC") or os.environ.get("CC") or "cc")


def _run(cmd, **kw) -> None:
    proc = subprocess.run([str(c) for c in cmd], **kw)
    if proc.returncode != 0:
        raise SystemExit(proc.returncode or 1)


def runtime_build(compiler: list[str]) -> Path:
    """The runtime compiled for *compiler* (``libf2loopy_runtime.a`` and
    ``f2loopy_runtime.mod``), built once into the cache folder (by content of
    the runtime and the compilers' versions), atomically."""
    from f2loopy.cache import cache_dir
    from f2loopy.resources import runtime_dir
    src = runtime_dir()
    cc = _c_compiler()
    h = hashlib.sha256()
    for tool in (compiler, cc):
        exe = shutil.which(tool[0]) or tool[0]
        h.update(os.path.realpath(exe).encode() + b"\0" + " ".join(tool).encode() + b"\0")
        try:
            out = subprocess.run([*tool, "--version"], capture_output=True, text=True,
                                 timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        h.update(out.encode())
    for name in ("f2loopy_runtime.c", "f2loopy_runtime.f90", "f2loopy_runtime.h"):
        h.update((src / name).read_bytes())
    from f2loopy.cache import _open_folder
    folder = _open_folder(create=True)
    if folder is None:
        # no private cache folder of the user's own: build for this process only
        base = Path(tempfile.mkdtemp(prefix="f2loopyfc-runtime-"))
    else:
        folder.__exit__()
        base = cache_dir()
    target = base / f"runtime-{h.hexdigest()[:24]}"
    if (target / "libf2loopy_runtime.a").is_file():
        return target
    tmp = Path(tempfile.mkdtemp(prefix=".runtime.", dir=base))
    try:
        _run([*cc, "-O2", "-fPIC", "-I", src, "-c", src / "f2loopy_runtime.c", "-o",
              tmp / "rt_c.o"])
        _run([*compiler, "-O2", "-fPIC", "-J", tmp, "-c", src / "f2loopy_runtime.f90", "-o",
              tmp / "rt_f.o"])
        _run(["ar", "rcs", tmp / "libf2loopy_runtime.a", tmp / "rt_f.o", tmp / "rt_c.o"])
        try:
            os.rename(tmp, target)
        except OSError:          # built by a concurrent compile meanwhile
            if not (target / "libf2loopy_runtime.a").is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def source_form_of(options) -> str | None:
    """``"free"``/``"fixed"`` from the last ``-ffree-form``/``-ffixed-form`` of
    *options* (gfortran's last one wins), or None."""
    form = None
    for opt in options:
        if opt in ("-ffree-form", "-ffixed-form"):
            form = opt[2:-5]
    return form


def translate_for_compile(source: str, workdir: Path,
                          source_form: str | None = None) -> tuple[Path, Path]:
    """Translate *source* into *workdir*; the Fortran and C glue's paths.
    *source_form*: the compile's ``-ffree-form``/``-ffixed-form``."""
    from f2loopy.build import translate_one
    from f2loopy.cli import _parse_defines
    extra = shlex.split(os.environ.get("F2LOOPYFC_OPTIONS", ""))
    defines, transform, kernels = [], None, []
    i = 0
    while i < len(extra):
        opt = extra[i]
        if opt == "--kernel" and i + 1 < len(extra):
            kernels.append(extra[i + 1])
            i += 2
        elif opt.startswith("--kernel="):
            kernels.append(opt[len("--kernel="):])
            i += 1
        elif opt in ("-ffree-form", "-ffixed-form"):
            source_form = opt[2:-5]
            i += 1
        elif opt in ("-D", "--define") and i + 1 < len(extra):
            defines.append(extra[i + 1])
            i += 2
        elif opt.startswith("-D") and len(opt) > 2:
            defines.append(opt[2:])
            i += 1
        elif opt == "--transform" and i + 1 < len(extra):
            transform = extra[i + 1]
            i += 2
        else:
            raise WrapperError(f"F2LOOPYFC_OPTIONS: unknown option {opt!r} (use -D NAME=VALUE, "
                               f"--transform RECIPE, --kernel NAME, -ffree-form and "
                               f"-ffixed-form)")
    try:
        values = _parse_defines(defines)
    except Exception as exc:  # noqa: BLE001 - click's BadParameter
        raise WrapperError(f"F2LOOPYFC_OPTIONS: {getattr(exc, 'message', exc)}") from None
    if kernels:
        from f2loopy.diagnostics import F2LoopyError
        from f2loopy.frontend.kernel_choice import check_kernel_names
        try:
            kernels = list(check_kernel_names(kernels))
        except F2LoopyError as exc:
            raise WrapperError(f"F2LOOPYFC_OPTIONS: {exc.message}") from None
    outcome = translate_one(source, output_dir=workdir, defines=values, transform=transform,
                            source_form=source_form, kernels=tuple(kernels) or None)
    if outcome.script_output:
        sys.stdout.write(outcome.script_output)
    if outcome.error is not None:
        print(outcome.error, file=sys.stderr)
        raise SystemExit(1)
    if outcome.skipped:
        raise WrapperError(f"{source}: {outcome.skipped}")
    stem = Path(outcome.outputs[0]).name[:-len(".cl")]
    return workdir / f"{stem}_cl.f90", workdir / f"{stem}_cl.c"


def compile_with_glue(compiler, source, options, output) -> None:
    """``COMPILER OPTIONS -c SOURCE -o OUTPUT`` plus the glue, one object."""
    obj = Path(output) if output else Path(Path(source).name.split(".")[0] + ".o")
    runtime = runtime_build(compiler)
    with tempfile.TemporaryDirectory(prefix=".f2loopyfc.",
                                     dir=obj.parent if obj.parent.is_dir() else None) as tmp:
        tmp = Path(tmp)
        f_glue, c_glue = translate_for_compile(source, tmp, source_form_of(options))
        flags = [o for o in options if o != "-c"]
        _run([*compiler, *flags, "-c", source, "-o", tmp / "orig.o"])
        # the glue module's .mod goes where the compiler puts the other modules;
        # the glue is free form whatever form the project's files are
        glue_flags = [o for o in flags if o not in ("-ffree-form", "-ffixed-form")]
        _run([*compiler, *glue_flags, "-I", runtime, "-c", f_glue, "-o", tmp / "glue_f.o"])
        _run([*_c_compiler(), "-O2", "-fPIC", "-I", _runtime_headers(), "-c", c_glue, "-o",
              tmp / "glue_c.o"])
        _run(["ld", "-r", tmp / "orig.o", tmp / "glue_f.o", tmp / "glue_c.o", "-o",
              tmp / "all.o"])
        os.replace(tmp / "all.o", obj)


def _runtime_headers() -> Path:
    from f2loopy.resources import runtime_dir
    return runtime_dir()


def wrap(argv) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        body = __doc__.split("\n\n", 1)[1].replace("::\n\n", "").replace("``", "'")
        print(USAGE + "\n\n" + body.strip())
        return 0 if argv else 2
    compiler = shlex.split(argv[0])
    args = list(argv[1:])
    if not compiler:
        print(USAGE, file=sys.stderr)
        return 2
    sources, options, output, compile_only = split_arguments(args)
    loopy = [s for s in sources if has_loopy_block(Path(s))]
    if compile_only and loopy:
        if output is not None and len(sources) > 1:
            raise WrapperError("cannot specify -o with -c and several files")
        plain = [s for s in sources if s not in loopy]
        if plain:
            out = ["-o", output] if output else []
            _run([*compiler, *options, *plain, *out, "-I", runtime_build(compiler)])
        for s in loopy:
            compile_with_glue(compiler, s, options, output)
        return 0
    if compile_only and sources and not any(o in options for o in ("-E", "-M", "-MM")):
        # a Fortran file that uses a glue module also needs the runtime's module
        runtime = runtime_build(compiler)
        return subprocess.run([*compiler, *args, "-I", str(runtime)]).returncode
    if compile_only or "-E" in options or "-S" in options or "-M" in options or not args:
        return subprocess.run([*compiler, *args]).returncode
    # a link (perhaps compiling too): files with blocks get their glue
    runtime = runtime_build(compiler)
    with tempfile.TemporaryDirectory(prefix=".f2loopyfc.") as tmp:
        extra = []
        for s in loopy:
            obj = Path(tmp) / (Path(s).name.split(".")[0] + ".o")
            compile_with_glue(compiler, s, options, obj)
            extra.append(str(obj))
        rest = [a for a in args if a not in loopy]
        return subprocess.run([*compiler, *rest, *extra, "-I", str(runtime),
                               str(runtime / "libf2loopy_runtime.a"), "-lOpenCL",
                               "-lpthread"]).returncode


def main(argv=None) -> None:
    """The ``f2loopyfc`` console script (with a fixed hash seed, as ``f2loopy``
    runs: translations are byte-identical from run to run)."""
    argv = sys.argv[1:] if argv is None else argv
    if os.environ.get("PYTHONHASHSEED") is None:
        env = dict(os.environ, PYTHONHASHSEED="0")
        try:
            os.execve(sys.executable, [sys.executable, "-m", "f2loopy.wrapper", *argv], env)
        except OSError:
            pass
    try:
        code = wrap(argv)
    except WrapperError as exc:
        print(f"f2loopyfc: error: {exc}", file=sys.stderr)
        code = 1
    except OSError as exc:
        print(f"f2loopyfc: error: {exc}", file=sys.stderr)
        code = 1
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
