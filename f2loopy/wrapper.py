"""``f2loopyfc``: a compiler wrapper for existing Makefiles.

::

    make FC="f2loopyfc gfortran" FFLAGS="-O2 -DUSE_OPENCL"

stands in for the Fortran compiler.  A compile (``-c``) of a Fortran file that
carries a ``!$loopy`` block (with ``--transform`` in ``F2LOOPYFC_OPTIONS``: any file
that defines subroutines or functions) translates it and puts three things into the one
object file the Makefile asked for: the original subroutines (compiled as
usual), the Fortran glue ``NAME_cl.f90`` (modules ``foo_cl_mod``, whose
``.mod`` files land where the compiler puts modules) and the C glue
``NAME_cl.c`` (which embeds the OpenCL program).  A link adds f2loopy's runtime
(built once per compiler, in the translation cache's folder) and
``-lOpenCL -lpthread``.  Everything else passes through unchanged, so the
Makefile's own rules and dependencies keep working: an object is rebuilt
exactly when its Fortran is.

``F2LOOPYFC_OPTIONS`` adds options of ``f2loopy translate`` (``-D NAME=VALUE``,
``--transform RECIPE``, ``-ffree-form``, ``-ffixed-form``, ``--kernel NAME``,
``--bind KERNEL:DUMMY=PROCEDURE``); the
compile's own
``-ffree-form``/``-ffixed-form`` and ``-fdefault-real-8 -fdefault-double-8`` reach the
translation too (other kind options are refused); ``F2LOOPYFC_CC`` (else ``CC``, else ``cc``) is the C
compiler for the glue and the runtime.  Errors in a translation are printed as
the compiler's are (file:line:col), and the compile fails with status 1.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from f2loopy.escape import terminal
from f2loopy.kind_flags import KIND_FLAGS
from f2loopy.pipeline import INPUT_SUFFIXES

#: compiler options whose value is the next argument
_TAKES_VALUE = {"-o", "-I", "-J", "-L", "-l", "-D", "-U", "-module", "-include", "-x", "-MF",
                "-MT", "-MQ", "-isystem", "-idirafter", "-iquote", "-Xlinker", "-u"}
_LOOPY_MARK = "!$loopy"
USAGE = "usage: f2loopyfc COMPILER [compiler arguments...]   (e.g. FC=\"f2loopyfc gfortran\")"


class WrapperError(Exception):
    pass


def has_loopy_block(path: Path) -> bool:
    from f2loopy.regular_files import read_regular
    try:        # not a FIFO or /dev/zero: regular files, bounded
        text = read_regular(path).decode("utf-8", "replace")
    except OSError:
        return False
    return any(line.lstrip().lower().startswith(_LOOPY_MARK) for line in text.splitlines())


def defines_procedures(path: Path) -> bool:
    """Whether *path* has a subroutine or function outside a main program:
    what ``--transform RECIPE`` in ``F2LOOPYFC_OPTIONS`` translates even
    without a ``!$loopy`` block (a file of modules only, or a program, is
    compiled as it is)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    import re
    if re.search(r"^[ \t]*program[ \t]+\w", text, re.IGNORECASE | re.MULTILINE):
        return False
    return re.search(r"^[ \t]*(?:(?:pure|elemental|recursive|impure|module)[ \t]+)*"
                     r"(?:subroutine[ \t]+\w|(?:[\w*()=, ]+[ \t]+)?function[ \t]+\w)",
                     text, re.IGNORECASE | re.MULTILINE) is not None


def options_transform() -> str | None:
    """The ``--transform`` of ``F2LOOPYFC_OPTIONS``, or None."""
    extra = shlex.split(os.environ.get("F2LOOPYFC_OPTIONS", ""))
    for opt, value in itertools.pairwise(extra):
        if opt == "--transform":
            return value
    return None


def wants_translation(path: Path) -> bool:
    """A file the wrapper translates: it carries a ``!$loopy`` block, or a
    recipe is given for every file (``--transform`` in ``F2LOOPYFC_OPTIONS``)
    and it defines procedures (:func:`defines_procedures`)."""
    if has_loopy_block(path):
        return True
    return options_transform() is not None and defines_procedures(path)


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


#: what a runtime folder holds: the library, its module, and their MAC
_RUNTIME_FILES = ("libf2loopy_runtime.a", "f2loopy_runtime.mod")
_RUNTIME_MAC = "MAC"


def _read_own_file(path: Path) -> bytes | None:
    """The bytes of *path* if it is a regular file (not a link) of this
    user's that nobody else may write."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read()
    except OSError:
        return None
    finally:
        os.close(fd)


def _runtime_mac(folder: Path, secret: bytes, name: str) -> str | None:
    """The MAC of the runtime in *folder* that is to be called *name*."""
    from f2loopy.cache import mac
    parts = [_read_own_file(folder / n) for n in _RUNTIME_FILES]
    if any(p is None for p in parts):
        return None
    return mac(secret, "runtime", name.encode(), *parts)   # type: ignore[arg-type]


def runtime_ok(folder: Path, secret: bytes) -> bool:
    """Whether *folder* is a runtime this user built: a folder (not a link)
    of the user's own that nobody else may write, holding exactly the library,
    its module and their MAC under the user's secret (so a library planted
    there, by anyone, is never linked, and no planted ``.mod`` or header is
    found through its ``-I``)."""
    import hmac
    try:
        st = os.lstat(folder)
        if (not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid()
                or st.st_mode & 0o022):
            return False
        if sorted(os.listdir(folder)) != sorted((*_RUNTIME_FILES, _RUNTIME_MAC)):
            return False
    except OSError:
        return False
    recorded = _read_own_file(folder / _RUNTIME_MAC)
    expected = _runtime_mac(folder, secret, folder.name)
    return (recorded is not None and expected is not None
            and hmac.compare_digest(recorded, expected.encode()))


def _private_build(base: Path | None) -> Path:
    """A temporary folder for one runtime build, removed when this process
    ends unless it is renamed into the cache first."""
    import atexit
    try:
        tmp = Path(tempfile.mkdtemp(prefix=".runtime.", dir=base))
    except OSError:
        # a cache folder this process cannot write (read-only, full): build for
        # this process only, as translate then translates without the cache
        tmp = Path(tempfile.mkdtemp(prefix=".runtime."))
    atexit.register(shutil.rmtree, tmp, True)
    return tmp


def runtime_build(compiler: list[str]) -> Path:
    """The runtime compiled for *compiler* (``libf2loopy_runtime.a`` and
    ``f2loopy_runtime.mod``), built once into the cache folder (by content of
    the runtime and the compilers' versions), atomically, and used from there
    only while :func:`runtime_ok` (else built again).  Without a private cache
    folder or a secret (:func:`f2loopy.cache.secret_key`) it is built for
    this process only."""
    from f2loopy.cache import _open_folder, cache_dir, secret_key
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
    folder = _open_folder(create=True)
    secret = secret_key() if folder is not None else None
    if folder is not None:
        folder.__exit__()
    base = cache_dir() if secret is not None else None
    target = (base or Path(tempfile.gettempdir())) / f"runtime-{h.hexdigest()[:24]}"
    if secret is not None and runtime_ok(target, secret):
        return target
    tmp = _private_build(base)
    _run([*cc, "-O2", "-fPIC", "-I", src, "-c", src / "f2loopy_runtime.c", "-o",
          tmp / "rt_c.o"])
    _run([*compiler, "-O2", "-fPIC", "-J", tmp, "-c", src / "f2loopy_runtime.f90", "-o",
          tmp / "rt_f.o"])
    _run(["ar", "rcs", tmp / "libf2loopy_runtime.a", tmp / "rt_f.o", tmp / "rt_c.o"])
    for name in os.listdir(tmp):
        if name not in _RUNTIME_FILES:
            os.unlink(tmp / name)
    if secret is None or base is None:
        return tmp                   # this process's own, removed when it ends
    (tmp / _RUNTIME_MAC).write_text(_runtime_mac(tmp, secret, target.name) or "")
    if os.path.lexists(target):
        # not one of ours (planted, or made before): set aside if we may
        try:
            st = os.lstat(target)
            if st.st_uid == os.geteuid():
                aside = Path(tempfile.mkdtemp(prefix=".stale.", dir=base))
                os.rename(target, aside / "runtime")
                shutil.rmtree(aside, ignore_errors=True)
        except OSError:
            pass
    try:
        os.rename(tmp, target)
    except OSError:          # built by a concurrent compile meanwhile, or not ours
        return target if runtime_ok(target, secret) else tmp
    return target


@dataclass
class _ExtraOptions:
    """What ``F2LOOPYFC_OPTIONS`` asks of the translation, as written there."""
    defines: list = field(default_factory=list)
    transform: str | None = None
    kernels: list = field(default_factory=list)
    forms: list = field(default_factory=list)     # True for -ffixed-form, in order
    bindings: list = field(default_factory=list)


_EXTRA_WITH_VALUE = {"--kernel": "kernels", "--bind": "bindings", "-D": "defines",
                     "--define": "defines"}


def _extra_options(extra) -> _ExtraOptions:
    """Read the words of ``F2LOOPYFC_OPTIONS``; an unknown one is an error."""
    out = _ExtraOptions()
    i = 0
    while i < len(extra):
        opt = extra[i]
        joined = next((k for k in ("--kernel=", "--bind=") if opt.startswith(k)), None)
        if opt in _EXTRA_WITH_VALUE and i + 1 < len(extra):
            getattr(out, _EXTRA_WITH_VALUE[opt]).append(extra[i + 1])
            i += 2
        elif joined is not None:
            getattr(out, _EXTRA_WITH_VALUE[joined[:-1]]).append(opt[len(joined):])
            i += 1
        elif opt in ("-ffree-form", "-ffixed-form"):
            out.forms.append(opt == "-ffixed-form")
            i += 1
        elif opt.startswith("-D") and len(opt) > 2:
            out.defines.append(opt[2:])
            i += 1
        elif opt == "--transform" and i + 1 < len(extra):
            out.transform = extra[i + 1]
            i += 2
        elif opt in KIND_FLAGS:
            raise WrapperError(f"F2LOOPYFC_OPTIONS: {opt} belongs on the compile's own command "
                               "line (FFLAGS), where the translation takes it from: the "
                               "original and the kernels must read the kinds alike")
        else:
            raise WrapperError(f"F2LOOPYFC_OPTIONS: unknown option {opt!r} (use -D NAME=VALUE, "
                               f"--transform RECIPE, --kernel NAME, "
                               f"--bind KERNEL:DUMMY=PROCEDURE, -ffree-form and "
                               f"-ffixed-form)")
    return out


def _add_extra_defines(values: dict, defines: list, compiler) -> None:
    """Add ``F2LOOPYFC_OPTIONS``' ``-D`` values to the script's *values*; one
    that differs from the compiler's own ``-D``/``-U`` is an error."""
    from f2loopy.cli import _parse_defines
    from f2loopy.preprocessor import macro_text
    try:
        extra_values = _parse_defines(defines)
    except Exception as exc:  # noqa: BLE001 - click's BadParameter
        raise WrapperError(f"F2LOOPYFC_OPTIONS: {getattr(exc, 'message', exc)}") from None
    for name, value in extra_values.items():
        # the preprocessor must see what the compiler sees
        if name in compiler.undefines or (name in compiler.macros
                                          and macro_text(value) != compiler.macros[name]):
            raise WrapperError(f"F2LOOPYFC_OPTIONS: -D {name} differs from the compiler's "
                               f"-D/-U {name}: the kernels and the original would disagree")
        values[name] = value


def _source_form(source: str, compiler, forms: list) -> bool | None:
    """The form the translation reads *source* in: the compiler's, which a
    form given in ``F2LOOPYFC_OPTIONS`` may only repeat."""
    fixed_form = compiler.fixed_form
    if forms:
        # the translation reads the file as the compiler does: a form of its own
        # would make the kernels and the original disagree
        from f2loopy.frontend.source import is_fixed_form_name
        read = is_fixed_form_name(source) if fixed_form is None else fixed_form
        if forms[-1] != read:
            raise WrapperError(
                f"F2LOOPYFC_OPTIONS: {'-ffixed-form' if forms[-1] else '-ffree-form'} "
                f"differs from the form the compiler reads {source} in "
                f"({'fixed' if read else 'free'}): the kernels and the original would "
                "disagree (give the compile the option)")
        fixed_form = forms[-1]
    return fixed_form


def _checked_choices(kernels: list, bindings: list) -> tuple[tuple, tuple]:
    """``--kernel`` names and ``--bind`` values, validated as the CLI does."""
    from f2loopy.diagnostics import F2LoopyError
    try:
        if kernels:
            from f2loopy.frontend.kernel_choice import check_kernel_names
            kernels = list(check_kernel_names(kernels))
        if bindings:
            from f2loopy.frontend.procedure_dummies import parse_bindings
            bindings = [b.option().split(" ", 1)[1] for b in parse_bindings(bindings)]
    except F2LoopyError as exc:
        raise WrapperError(f"F2LOOPYFC_OPTIONS: {exc.message}") from None
    return tuple(kernels), tuple(bindings)


def translate_for_compile(source: str, workdir: Path, options=(), for_depfile: bool = False):
    """Translate *source* into *workdir* as the compiler with *options* reads
    it (:mod:`f2loopy.wrapper_options`); the Fortran and C glue's paths and
    the files the translation read (*for_depfile*: see ``translate_one``)."""
    from f2loopy.build import translate_one
    from f2loopy.wrapper_options import OptionError, script_values, translation_options
    try:
        compiler = translation_options(options)
        values = script_values(compiler.macros)
    except OptionError as exc:
        raise WrapperError(f"{source}: {exc}") from None
    extra = _extra_options(shlex.split(os.environ.get("F2LOOPYFC_OPTIONS", "")))
    _add_extra_defines(values, extra.defines, compiler)
    fixed_form = _source_form(source, compiler, extra.forms)
    kernels, bindings = _checked_choices(extra.kernels, extra.bindings)
    outcome = translate_one(source, output_dir=workdir, defines=values, transform=extra.transform,
                            bindings=bindings,
                            undefines=tuple(compiler.undefines),
                            include_dirs=tuple(compiler.include_dirs),
                            fixed_form=fixed_form, cpp=compiler.cpp,
                            default_real_kind=compiler.default_real_kind,
                            kernels=kernels or None,
                            for_depfile=for_depfile)
    # everything printed comes from the file, its name or its script: shown, never acted on
    if outcome.script_output:
        sys.stdout.write(terminal(outcome.script_output))
    for note in outcome.notes:
        print(terminal(f"f2loopyfc: note: {note}"), file=sys.stderr)
    if outcome.error is not None:
        print(terminal(outcome.error), file=sys.stderr)
        raise SystemExit(1)
    if outcome.skipped:
        raise WrapperError(f"{source}: {outcome.skipped}")
    stem = Path(outcome.outputs[0]).name[:-len(".cl")]
    return workdir / f"{stem}_cl.f90", workdir / f"{stem}_cl.c", outcome.inputs


def _dependency_file(options, obj: Path) -> tuple[list, Path | None]:
    """With ``-MD``/``-MMD`` the compiler writes a Make depfile beside the
    object (or at ``-MF``): the options that make the compile of the original
    (into a temporary object) write it there for *obj*, and its path."""
    if not any(o in ("-MD", "-MMD") for o in options):
        return [], None
    if "-MF" in options[:-1]:
        return ["-MT", str(obj)], Path(options[options.index("-MF") + 1])
    dep = obj.with_suffix(".d")
    return ["-MF", str(dep), "-MT", str(obj)], dep


def _without_dependency_options(options) -> list:
    out, skip = [], False
    for o in options:
        if skip:
            skip = False
        elif o in ("-MF", "-MT", "-MQ"):
            skip = True
        elif o not in ("-MD", "-MMD", "-MP"):
            out.append(o)
    return out


def _add_dependencies(depfile: Path, obj: Path, inputs) -> None:
    """Append to the compiler's *depfile* a rule making *obj* depend on the
    translation's inputs (recipes, ``#include``s, the tuning record, also
    before ``f2loopy tune`` writes it), each with an empty rule."""
    from f2loopy.build import FileOutcome, depfile_text
    rule = depfile_text([FileOutcome(str(obj), outputs=[str(obj)], inputs=list(inputs))])
    with open(depfile, "a", encoding="utf-8") as f:
        f.write(rule)


def compile_with_glue(compiler, source, options, output) -> None:
    """``COMPILER OPTIONS -c SOURCE -o OUTPUT`` plus the glue, one object."""
    obj = Path(output) if output else Path(object_name(source))
    with tempfile.TemporaryDirectory(prefix=".f2loopyfc.",
                                     dir=obj.parent if obj.parent.is_dir() else None) as tmp_dir:
        tmp = Path(tmp_dir)
        flags = [o for o in options if o != "-c"]
        dep_flags, depfile = _dependency_file(flags, obj)
        f_glue, c_glue, inputs = translate_for_compile(source, tmp, options, depfile is not None)
        runtime = runtime_build(compiler)
        _run([*compiler, *flags, *dep_flags, "-c", source, "-o", tmp / "orig.o"])
        if depfile is not None:
            _add_dependencies(depfile, obj, inputs)
        flags = _without_dependency_options(flags)     # the glue's compiles write none
        # the glue module's .mod goes where the compiler puts the other modules;
        # the glue is free form whatever form the sources are
        glue_flags = [o for o in flags if o not in ("-ffixed-form", "-ffree-form")
                      and not o.startswith("-ffixed-line-length-")]
        _run([*compiler, *glue_flags, "-ffree-form", "-I", runtime, "-c", f_glue, "-o",
              tmp / "glue_f.o"])
        _run([*_c_compiler(), "-O2", "-fPIC", "-I", _runtime_headers(), "-c", c_glue, "-o",
              tmp / "glue_c.o"])
        _run(["ld", "-r", tmp / "orig.o", tmp / "glue_f.o", tmp / "glue_c.o", "-o",
              tmp / "all.o"])
        os.replace(tmp / "all.o", obj)


def object_name(source: str) -> str:
    """The object ``COMPILER -c SOURCE`` writes: the file name without its
    last suffix, as gfortran names it (``kd.v2.f90`` gives ``kd.v2.o``)."""
    return Path(Path(source).name).stem + ".o"


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
    loopy = [s for s in sources if wants_translation(Path(s))]
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
        for k, s in enumerate(loopy):
            # numbered: two sources of one name in other folders stay apart
            obj = Path(tmp) / f"{k}-{object_name(s)}"
            compile_with_glue(compiler, s, options, obj)
            extra.append(str(obj))
        rest = [a for a in args if a not in loopy]
        return subprocess.run([*compiler, *rest, *extra, "-I", str(runtime),
                               str(runtime / "libf2loopy_runtime.a"), "-lOpenCL",
                               "-lpthread"]).returncode


def main(argv=None) -> None:
    """The ``f2loopyfc`` console script (with a fixed hash seed, as ``f2loopy``
    runs: translations are byte-identical from run to run)."""
    if argv is None:
        from f2loopy.reexec import reexecute
        reexecute("f2loopy.wrapper", "main")     # (nothing from the current folder)
    argv = sys.argv[1:] if argv is None else argv
    try:
        code = wrap(argv)
    except WrapperError as exc:
        print(terminal(f"f2loopyfc: error: {exc}"), file=sys.stderr)
        code = 1
    except OSError as exc:
        print(terminal(f"f2loopyfc: error: {exc}"), file=sys.stderr)
        code = 1
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
