"""Running the original Fortran: compile with gfortran, call through ctypes.

The subroutines are compiled unchanged into a shared library, together with a
generated ``bind(c)`` shim per subroutine that takes every argument by
reference and calls the original, so no compiler-specific name mangling is
relied upon.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import cast

import numpy as np

from f2loopy.diagnostics import F2LoopyError
from f2loopy.glue.fexpr import wrap
from f2loopy.glue.fortran import fortran_name
from f2loopy.ir.kernel import ArrayArg, Kernel, ScalarArg
from f2loopy.ir.roles import Allocation, Component, Dummy, Extent, Presence, character_of
from f2loopy.verify.shared_data import ISO_KIND as _ISO_KIND
from f2loopy.verify.shared_data import ShimData, constant_extents


class FortranToolError(F2LoopyError):
    """gfortran is missing or failed."""




def find_gfortran() -> str:
    env = os.environ.get("F2LOOPY_FC")
    if env:
        found = shutil.which(env)
        if not found:
            raise FortranToolError(f"the Fortran compiler F2LOOPY_FC={env} was not found")
        return found
    exe = shutil.which("gfortran")
    if not exe:
        raise FortranToolError("gfortran was not found: install it (Debian/Ubuntu: "
                               "apt-get install gfortran) or set F2LOOPY_FC")
    return exe


def _shim_name(kernel: Kernel) -> str:
    """A Fortran name (at most 63 characters) for the shim of *kernel*."""
    return fortran_name(f"f2l_shim_{kernel.name.lower()}", "")


def _shim(kernel: Kernel, access: dict | None = None, accessors: dict | None = None) -> str:
    """A bind(c) wrapper taking every argument by reference.

    The extents of assumed-shape arrays (kernel arguments after the Fortran
    ones) are arguments of the shim, which declares such an array with them;
    a subroutine outside a module then needs an interface block, made from
    the kernel's arguments."""
    # (prefixed: a procedure or module of the user's may be named 'a1')
    names = {a.name: f"f2l_a{k}" for k, a in enumerate(kernel.args)}
    # a character flag comes as up to CHAR_MAX bytes and its length
    lengths = {a.name: f"f2l_l{k}" for k, a in enumerate(kernel.args) if _is_char(a)}
    extents: dict[str, dict[int, str]] = {}
    for a in kernel.extent_args:
        assert isinstance(a.role, Extent)
        extents.setdefault(a.role.array, {})[a.role.axis] = names[a.name]
    fortran_args = kernel.fortran_args
    # module data, common blocks, derived-type arguments
    data = ShimData(kernel, names,
                    private=lambda module, var: is_private(access or {}, module, var))
    if accessors is not None:
        for module, statements in data.accessors.items():
            accessors.setdefault(module, []).extend(statements)
    shim_args = list(names.values()) + data.extent_names + list(lengths.values())
    lines = [f"subroutine {_shim_name(kernel)}({', '.join(shim_args)}) "
             f"bind(c, name='{_shim_name(kernel)}')"]
    lines.append("  use iso_c_binding")
    if kernel.module:
        lines.append(f"  use {kernel.module}, only: {kernel.name}")
    # the procedures the kernel is specialised to: the original is called with them
    for bp in kernel.bound_procedures:
        if bp.module is not None:
            lines.append(f"  use {bp.module}, only: {bp.procedure}")
    if data.alias_module:
        lines.append(f"  use {data.alias_module_name}")
    lines += data.uses
    lines.append("  implicit none")
    if data.extent_names:
        lines.append(f"  integer(c_int32_t) :: {', '.join(data.extent_names)}")
    for bp in kernel.bound_procedures:
        if bp.module is None and bp.procedure.lower() != kernel.name.lower():
            lines.append(f"  {_external(bp.result_dtype)} :: {bp.procedure}")
    result = kernel.result_arg
    result_bounds = array_result_bounds(kernel, names)
    for karg in kernel.args:
        if karg.name in lengths:
            lines.append(f"  character(kind=c_char) :: {names[karg.name]}({CHAR_MAX})")
            lines.append(f"  integer(c_int32_t) :: {lengths[karg.name]}")
            lines.append(f"  character(len={CHAR_MAX}) :: s{names[karg.name]}")
            continue
        if result_bounds is not None and karg is result:
            continue          # (declared below, after the sizes it uses)
        lines.append(f"  {data.declared(karg) or _declaration(karg, names[karg.name], extents)}")
    if result_bounds is not None and result is not None:
        # an array-valued function's value: stored whole, with its declared bounds
        decl = _declaration(result, names[result.name], {}).split(" :: ")[0]
        lines.append(f"  {decl} :: {names[result.name]}({result_bounds})")
    lines += data.declarations
    # a bind(c) procedure, 'value' dummies and logicals of other kinds need
    # the procedure's interface (its C name, arguments passed by value)
    special = kernel.bind_name is not None or any(
        (isinstance(a.role, Dummy) and a.role.by_value) or a.logical_kind != 4
        for a in fortran_args)
    interface = not kernel.module and (extents or special) and kernel.result_arg is None
    if interface:
        lines.append("  interface")
        passed = [a for a in fortran_args if data.actual(a) is not None]
        data.reset()
        dummies = [f"d{k}" for k in range(len(passed))]
        every = list(dummies)
        for k, bp in enumerate(kernel.bound_procedures):
            every.insert(bp.position, f"p{k}")
        bind = f" bind(c, name='{kernel.bind_name}')" if kernel.bind_name is not None else ""
        lines.append(f"    subroutine {kernel.name}({', '.join(every)}){bind}")
        lines.append("      import")
        for dummy_arg, d in zip(passed, dummies, strict=True):
            lines.append(f"      {data.interface_declaration(dummy_arg, d) or _declaration(dummy_arg, d, extents, interface=True)}")
        for k, bp in enumerate(kernel.bound_procedures):
            lines.append(f"      {_external(bp.result_dtype)} :: p{k}")
        lines.append("    end subroutine")
        lines.append("  end interface")
    if result is not None and not kernel.module:
        # a function translated as a kernel: the shim stores its value
        type_name, kind = _ISO_KIND[np.dtype(result.dtype).name]
        lines.append(f"  {type_name}({kind}), external :: {kernel.name}")
    elif result is None and not kernel.module and not interface:
        lines.append(f"  external :: {kernel.name}")
    if lengths:
        lines.append("  integer :: f2l_j")
    for karg in kernel.args:
        if karg.name in lengths:
            lines.append(f"  do f2l_j = 1, {CHAR_MAX}")
            lines.append(f"    s{names[karg.name]}(f2l_j:f2l_j) = {names[karg.name]}(f2l_j)")
            lines.append("  end do")
    lines += data.copy_in
    actual = [f"s{names[a.name]}(1:{lengths[a.name]})" if a.name in lengths
              else data.actual(a) for a in fortran_args]
    actual = [x for x in actual if x is not None]
    for bp in kernel.bound_procedures:
        actual.insert(bp.position, bp.procedure)
    if result is not None:
        lines.append(f"  {names[result.name]} = {kernel.name}({', '.join(actual)})")
    else:
        lines.append(f"  call {kernel.name}({', '.join(actual)})")
    lines += data.copy_out
    for karg in kernel.args:
        if karg.name in lengths and _is_message(karg):
            # a character dummy the kernel assigns (a message): its text back
            lines.append(f"  do f2l_j = 1, {CHAR_MAX}")
            lines.append(f"    {names[karg.name]}(f2l_j) = s{names[karg.name]}(f2l_j:f2l_j)")
            lines.append("  end do")
    lines.append(f"end subroutine {_shim_name(kernel)}")
    return data.alias_module + "\n".join(x for line in lines for x in wrap(line)) + "\n"


def array_result_bounds(kernel: Kernel, names: dict | None = None) -> str | None:
    """The bounds (``lo:hi, ...``) of the value of *kernel*, an array-valued
    function of a module, as the harness's shim declares it, with the
    arguments renamed by *names*; None for a scalar result, a function
    outside a module (no interface to call it through) or bounds that are
    not integers and scalar arguments (``y(n)``)."""
    result = kernel.result_arg
    if result is None or not isinstance(result, ArrayArg) or not kernel.module:
        return None
    scalars = {a.name for a in kernel.args if isinstance(a, ScalarArg)}

    def text(e):
        if isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_)):
            return str(int(e))
        name = getattr(e, "name", None)
        if type(e).__name__ == "Variable" and name in scalars:
            return (names or {}).get(name, name)
        return None
    parts = []
    for lb, ext in zip(result.lower_bounds, result.shape, strict=True):
        lo, n = text(lb), text(ext) if ext is not None else None
        if lo is None or n is None:
            return None
        parts.append(f"{lo}:{lo}+{n}-1" if lo != "1" else n)
    return ", ".join(parts)


def _external(result_dtype) -> str:
    """The declaration of an external procedure: typed for a function."""
    if result_dtype is None:
        return "external"
    type_name, kind = _ISO_KIND[np.dtype(result_dtype).name]
    return f"{type_name}({kind}), external"


#: the longest string a character flag may be given in check and the tests
CHAR_MAX = 64


def _is_char(arg) -> bool:
    return isinstance(arg, ScalarArg) and character_of(arg.role) is not None


def _is_message(arg) -> bool:
    """A character dummy the kernel assigns (f2loopy.frontend.messages)."""
    char = character_of(arg.role) if isinstance(arg, ScalarArg) else None
    return char is not None and bool(char.messages)


def _declaration(arg, name: str, extents: dict, interface: bool = False) -> str:
    """Declaration of *arg* as *name* in a shim (or in the interface block of
    the original subroutine): arrays are assumed size, or for an
    assumed-shape array explicit with the extents the shim receives
    (assumed shape in the interface)."""
    if _is_char(arg):
        return f"character(len=*) :: {name}"
    type_name, kind = _ISO_KIND[np.dtype(arg.dtype).name]
    if type_name == "logical":
        kind = str(arg.logical_kind)
    decl = f"{type_name}({kind})"
    if not isinstance(arg, ArrayArg):
        by_value = ", value" if interface and isinstance(arg.role, Dummy) \
            and arg.role.by_value else ""
        return f"{decl}{by_value} :: {name}"
    own = extents.get(arg.name)
    if own is None:
        return f"{decl} :: {name}(*)"
    if interface:
        return f"{decl} :: {name}({', '.join(':' for _ in range(len(own)))})"
    return f"{decl} :: {name}({', '.join(own[k] for k in sorted(own))})"


class ReferenceBuilds:
    """A scratch folder keeping the reference libraries that one ``check``
    compiled, so that its later rounds of inputs (which change the inputs
    only) load the library of an identical source instead of compiling it
    again (CLOUDSC-sized sources take seconds per build, and a coverage
    check makes up to 37 rounds).  A library is found by the hash of
    everything its build reads (sources, shims, flags); :meth:`close`
    removes the folder."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="f2loopy-refs-")
        self._loads = 0

    def folder(self, key: str) -> Path:
        """The build folder of the library whose build hashes to *key*."""
        d = Path(self._tmp.name) / key[:32]
        d.mkdir(exist_ok=True)
        return d

    def load_path(self, built: Path, workdir: Path) -> Path:
        """A fresh copy of the library *built* in *workdir* to load: a new
        path is a new ``dlopen``, so module variables and saved locals start
        from their initial values as they do in a library just compiled."""
        self._loads += 1
        copy = workdir / f"{built.stem}_{self._loads}{built.suffix}"
        shutil.copyfile(built, copy)
        return copy

    def close(self) -> None:
        self._tmp.cleanup()


class FortranLibrary:
    """The subroutines of one Fortran source, compiled into a shared library.

    :arg flags: gfortran flags (default ``-O0``: evaluation as written).
    :arg coverage: build with gcov instrumentation: :meth:`dump_coverage`
        writes the counts (see :mod:`f2loopy.verify.coverage`).
    :arg extra_sources: files compiled before the source, in order (the
        modules and procedures of other files it uses).
    :arg builds: where a library of the same build may already be (then it
        is loaded, not compiled again; with *coverage* its counts start from
        zero) and where this one is kept.
    """

    def __init__(self, source: str, kernels, *, filename: str = "kernel.f90",
                 flags=("-O0",), workdir: str | None = None, coverage: bool = False,
                 extra_sources=(), builds: ReferenceBuilds | None = None):
        self.kernels = {k.name.lower(): k for k in kernels}
        fc = find_gfortran()
        suffix = Path(filename).suffix or ".f90"
        from f2loopy.regular_files import read_regular
        extra_text = "".join(read_regular(s).decode("utf-8", "replace") for s in extra_sources)
        access = module_access(source + "\n" + extra_text)
        accessors: dict = {}
        shims = "\n".join(_shim(k, access, accessors) for k in kernels) + \
            _missing_helpers(source, extra_text)
        if accessors:
            # procedures inside modules of the source (PRIVATE derived-type
            # variables), on the lines of their 'end module': no line moves
            source = with_accessors(source, accessors)
            flags = tuple(flags) + ("-ffixed-line-length-none" if suffix.lower() in (".f", ".for")
                                    else "-ffree-line-length-none",)
        extra = []
        if coverage:
            flags = tuple(flags) + ("--coverage",)
        key = hashlib.sha256((source + shims + suffix + " ".join(flags) + extra_text)
                             .encode()).hexdigest()
        self._tmp = None
        if workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="f2loopy-ref-")
            workdir = self._tmp.name
        wd = Path(workdir)
        load_dir = wd
        if builds is not None:
            wd = builds.folder(key)
        src_path = wd / f"original{suffix}"
        shim_path = wd / "shims.f90"
        lib_path = wd / f"libref_{key[:12]}.so"
        self.lib_path, self.source_path, self.coverage = lib_path, src_path, coverage
        if builds is not None and lib_path.exists():
            # built in an earlier round: its coverage counts start again
            for data in wd.glob("*.gcda"):
                data.unlink()
            self.lib = ctypes.CDLL(str(builds.load_path(lib_path, load_dir)),
                                   mode=os.RTLD_LAZY | os.RTLD_LOCAL)
            return
        src_path.write_text(source)
        shim_path.write_text(shims)
        if coverage:
            dump = wd / "f2l_coverage_dump.c"
            dump.write_text("extern void __gcov_dump(void);\n"
                            "void f2l_coverage_dump(void) { __gcov_dump(); }\n")
            extra.append(str(dump))
        cmd = [fc, "-shared", "-fPIC", "-Wl,--no-undefined", *flags, "-J", str(wd), "-o",
               str(lib_path), *[str(Path(s).resolve()) for s in extra_sources], str(src_path),
               str(shim_path), *extra]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=wd)
        missing_procedures = _undefined_procedures(proc.stderr) if proc.returncode else None
        if missing_procedures:
            # procedures the compiled files call that no file compiled with
            # them defines (a module on the path calling an external one of
            # another file): the checked kernels never reach them (their
            # translation would have read the file), so each is a stub that
            # stops the run with a message if it is reached after all
            stubs = wd / "f2l_missing_procedures.c"
            stubs.write_text(_stub_source(missing_procedures))
            proc = subprocess.run(cmd + [str(stubs)], capture_output=True, text=True, cwd=wd)
        if proc.returncode != 0:
            import re
            # (not those the sources define: they failed for want of the others)
            defined = {m.lower() for m in re.findall(
                r"^\s*module\s+(?!procedure\b)(\w+)\s*$", source + "\n" + extra_text,
                re.IGNORECASE | re.MULTILINE)}
            missing = sorted(set(re.findall(r"Cannot open module file .(\w+)\.mod.",
                                            proc.stderr)) - defined)
            hint = "" if not missing else (
                "\n(no file on the search path defines module " +
                ", ".join(f"'{m}'" for m in missing) + ", which the sources compiled with the "
                "original use: give the directory of its source with -I)")
            raise FortranToolError("gfortran failed to compile the original Fortran:\n"
                                   + proc.stderr.strip() + hint)
        # lazily bound: a unit of the file that no kernel runs may call a
        # procedure of another file of the project (Nekbone's math.f calls
        # exitt), which is only resolved if it is called
        self.lib = ctypes.CDLL(str(lib_path if builds is None else
                                   builds.load_path(lib_path, load_dir)),
                               mode=os.RTLD_LAZY | os.RTLD_LOCAL)

    def dump_coverage(self) -> None:
        """Write the gcov counts so far (a forked child exits without)."""
        if self.coverage:
            self.lib.f2l_coverage_dump()

    def call(self, name: str, args: list) -> list:
        """Call subroutine *name* with *args*, its Fortran arguments (numpy
        arrays are updated in place; scalars are passed by reference and their
        final values are returned in the result list, arrays returned as
        given).  Assumed-shape arrays pass their shapes.  Module variables,
        common blocks and saved locals start from their initial values (zero
        where they have none), as on the program's first call."""
        kernel = self.kernels[name.lower()]
        if len(args) != len(kernel.fortran_args):
            raise TypeError(f"{name} takes {len(kernel.fortran_args)} arguments, got {len(args)}")
        values = {a.name: v for a, v in zip(kernel.fortran_args, args, strict=True)}
        for a in kernel.storage_args:
            init = getattr(a.role, "init", None)
            if init is not None and a.name not in values:
                shape = constant_extents(a.shape) if isinstance(a, ArrayArg) else ()
                start = np.array(init, dtype=_storage(np.dtype(a.dtype), a.logical_kind))
                values[a.name] = np.asfortranarray(start.reshape(shape, order="F")) \
                    if shape else start.reshape(())[()]
        out = self.call_named(name, values)
        extents = {a.name for a in kernel.extent_args}
        return [out[a.name] for a in kernel.args if a.name not in extents]

    def call_named(self, name: str, values: dict) -> dict:
        """Call subroutine *name* with the arguments of its kernel by name:
        the Fortran arguments, the flattened components of derived-type
        arguments and the module variables and common blocks it uses (set
        before the call; zero if not given).  Returns argument name -> value
        after the call (arrays are updated in place)."""
        kernel = self.kernels[name.lower()]
        fn = getattr(self.lib, _shim_name(kernel))
        fn.restype = None
        given = dict(values)
        for a in kernel.extent_args:
            assert isinstance(a.role, Extent)
            array, axis = a.role.array, a.role.axis
            given[a.name] = np.asarray(given[array]).shape[axis]
        for a in kernel.args:
            if isinstance(a.role, Allocation) and a.role.array in given:
                # what the shim allocates (lower bounds 1, as the Python glue's)
                given[a.name] = np.asarray(given[a.role.array]).shape[a.role.axis] \
                    if a.role.what == "extent" else \
                    int(values.get(a.name, 1)) if a.role.what == "lbound" else 1
        result = kernel.result_arg
        if isinstance(result, ArrayArg):
            # an array-valued function's value (array_result_bounds): a new
            # array of its declared extents, which are constants or arguments
            shape = tuple(int(given[getattr(e, "name")]) if hasattr(e, "name")
                          else int(cast(int, e)) for e in result.shape)
            given[result.name] = np.zeros(shape, dtype=_storage(np.dtype(result.dtype)),
                                          order="F")
        elif result is not None:
            given[result.name] = 0      # the function's value comes back last
        for a in kernel.args:
            if isinstance(a.role, Presence):       # the harness passes every optional
                given.setdefault(a.name, 1)
        for a in kernel.storage_args:
            if a.name not in given:
                given[a.name] = np.zeros(constant_extents(a.shape),
                                         dtype=_storage(np.dtype(a.dtype)), order="F") \
                    if isinstance(a, ArrayArg) else 0
        missing = [a.name for a in kernel.args if a.name not in given]
        if missing:
            raise TypeError(f"{name}: no value for {', '.join(missing)}")
        c_args: list = []
        holders: list = []        # what each argument's pointer points into
        char_lengths: list = []
        keep: list = []
        extent_values: list[int] = []
        copy_back: list = []
        for arg in kernel.args:
            value = given[arg.name]
            dt = np.dtype(arg.dtype)
            if _is_char(arg):
                if not isinstance(value, str) or len(value) > CHAR_MAX:
                    raise TypeError(f"argument '{arg.name}' must be a str of at most "
                                    f"{CHAR_MAX} characters")
                data = value.encode("latin-1").ljust(CHAR_MAX)
                box = ctypes.create_string_buffer(data, CHAR_MAX)
                c_args.append(ctypes.cast(box, ctypes.c_void_p))
                holders.append(box if _is_message(arg) else value)
                length = np.array([len(value)], dtype=np.int32)
                char_lengths.append(length.ctypes.data_as(ctypes.c_void_p))
                keep += [box, length]
                continue
            if isinstance(arg, ArrayArg):
                allowed = (_storage(dt),) if dt != np.bool_ else (
                    np.dtype(np.bool_), _storage(dt), _storage(dt, arg.logical_kind))
                if not isinstance(value, np.ndarray) or value.dtype not in allowed or \
                        not value.flags.f_contiguous:
                    raise TypeError(f"argument '{arg.name}' must be a Fortran-ordered "
                                    f"{_storage(dt)} array")
                if _storage(dt, arg.logical_kind) != value.dtype:
                    # a logical of another kind: its own storage, copied back after
                    store = np.asfortranarray(value.astype(_storage(dt, arg.logical_kind)))
                    keep.append(store)
                    copy_back.append((value, store))
                    value = store
                c_args.append(value.ctypes.data_as(ctypes.c_void_p))
                holders.append(value)
                if isinstance(arg.role, Component):
                    extent_values += list(value.shape)   # the shim declares it with them
            else:
                scalar = np.array([value], dtype=_storage(dt, arg.logical_kind))
                c_args.append(scalar.ctypes.data_as(ctypes.c_void_p))
                holders.append(scalar)
        extent_boxes = [np.array([n], dtype=np.int32) for n in extent_values]
        fn(*c_args, *[b.ctypes.data_as(ctypes.c_void_p) for b in extent_boxes],
           *char_lengths)
        for original, store in copy_back:
            original[...] = store != 0
        out: dict[str, object] = {}
        for arg, h in zip(kernel.args, holders, strict=True):
            if _is_message(arg):
                # the string the original left (Fortran's assignment padded it)
                out[arg.name] = h.raw[:len(given[arg.name])].decode("latin-1")
            elif _is_char(arg):
                out[arg.name] = h
            elif isinstance(arg, ScalarArg):
                v = h[0]
                out[arg.name] = bool(v) if np.dtype(arg.dtype) == np.bool_ else v
            else:
                out[arg.name] = h
        return out


#: what the translation recognises by name when the file does not define it
#: (the BLAS LSAME: case-insensitive comparison of the first characters),
#: for the original to link
_HELPERS = {
    "lsame": """
logical function lsame(ca, cb)
  character(len=*) :: ca, cb
  integer :: a, b
  a = ichar(ca(1:1))
  b = ichar(cb(1:1))
  if (a >= 97 .and. a <= 122) a = a - 32
  if (b >= 97 .and. b <= 122) b = b - 32
  lsame = a == b
end function lsame
""",
    "xerbla": """
subroutine xerbla(srname, info)
  character(len=*) :: srname
  integer :: info
  write(*, '(a, a, a, i2, a)') ' ** On entry to ', srname, ' parameter number ', info, &
    ' had an illegal value'
  stop
end subroutine xerbla
""",
}


def _missing_helpers(source: str, others: str = "") -> str:
    """The BLAS helpers *source* uses that neither it nor the *others* (the
    files of the search path compiled with it) define."""
    import re
    out = []
    for name, text in _HELPERS.items():
        if re.search(rf"\b{name}\b", source, re.IGNORECASE) and not re.search(
                rf"\b(function|subroutine)\s+{name}\b", source + "\n" + others,
                re.IGNORECASE):
            out.append(text)
    return "".join(out)


_MODULE_START = re.compile(r"\s*module\s+(?!procedure\b)([a-z]\w*)\s*(!.*)?$", re.IGNORECASE)
_MODULE_END = re.compile(r"\s*end\s*module\b", re.IGNORECASE)
_CONTAINS = re.compile(r"\s*contains\s*(!.*)?$", re.IGNORECASE)
_ACCESS = re.compile(r"\s*(private|public)\s*(?:(?:::)?\s*([a-z]\w*(?:\s*,\s*[a-z]\w*)*))?"
                     r"\s*(!.*)?$", re.IGNORECASE)
_PROCEDURE = re.compile(r"\s*(?:[a-z]\w*(?:\([^)]*\))?\s+)*(subroutine|function)\s+"
                        r"([a-z]\w*)", re.IGNORECASE)
_TYPE_START = re.compile(r"\s*type\s*(,|::|\s+(?!is\b)[a-z])", re.IGNORECASE)


def module_access(text: str) -> dict:
    """Module name (lower case) -> ``(default, private, public, procedures)``
    of the modules *text* defines: the default accessibility (``"public"`` or
    ``"private"``), the names a ``private`` or ``public`` statement lists,
    and the procedures it contains."""
    out: dict = {}
    module: dict | None = None
    for line in _joined_lines(text):
        if module is None:
            m = _MODULE_START.match(line)
            if m:
                module = {"default": "public", "private": set(), "public": set(),
                          "procs": [], "contains": False}
                out[m.group(1).lower()] = module
            continue
        if _MODULE_END.match(line):
            module = None
            continue
        if not module["contains"]:
            if _TYPE_START.match(line):
                module["in_type"] = True
            elif re.match(r"\s*end\s*type\b", line, re.IGNORECASE):
                module["in_type"] = False
                continue
            elif module.get("in_type"):
                # a type's own 'private' (its components) and 'contains'
                # (its type-bound procedures) are not the module's
                continue
            elif _CONTAINS.match(line):
                module["contains"] = True
                continue
            m = _ACCESS.match(line)
            if m:
                which = m.group(1).lower()
                if m.group(2) is None:
                    module["default"] = which
                else:
                    module[which].update(n.strip().lower() for n in m.group(2).split(","))
            else:
                m = re.match(r"[^!]*,\s*(private|public)\b[^!]*::", line, re.IGNORECASE)
                if m:
                    # 'real, private :: a, b = 1.0', 'real, allocatable, public :: r(:,:)'
                    # under a 'private' default (the names before any '=')
                    names = line.split("::", 1)[1].split("!")[0]
                    module[m.group(1).lower()].update(re.findall(
                        r"(?:^|,)\s*([a-z]\w*)", names, re.IGNORECASE))
            continue
        m = _PROCEDURE.match(line)
        if m and not line.lstrip().lower().startswith("end"):
            module["procs"].append(m.group(2).lower())
    return {name: (m["default"], {n.lower() for n in m["private"]}, m["public"], m["procs"])
            for name, m in out.items()}


def _joined_lines(text: str) -> list[str]:
    """The lines of *text* with free-form continuations (a line ending in
    ``&``) joined to the statement they continue (``public a, &`` / ``b``)."""
    out: list[str] = []
    pending = ""
    for line in text.splitlines():
        if pending:
            line = pending + re.sub(r"^\s*&", " ", line)
            pending = ""
        code = line.split("!", 1)[0].rstrip()
        if code.endswith("&"):
            pending = code[:-1]
            continue
        out.append(line)
    if pending:
        out.append(pending)
    return out


def with_accessors(text: str, accessors: dict) -> str:
    """*text* with the statements ``accessors[module]`` (whole procedures)
    put into each module, joined by ``;`` on the line of its ``end module``
    (after a ``contains`` where it has none), so that no line moves.  A
    module *text* does not define is an error (its variables are PRIVATE in
    another file, which the harness does not change)."""
    lines = text.splitlines(keepends=True)
    module = None
    contains = in_type = False
    todo = {m.lower(): st for m, st in accessors.items()}
    for k, line in enumerate(lines):
        if module is None:
            m = _MODULE_START.match(line)
            if m:
                module, contains = m.group(1).lower(), False
            continue
        if _TYPE_START.match(line):
            in_type = True          # (its 'contains' opens type-bound procedures)
        elif re.match(r"\s*end\s*type\b", line, re.IGNORECASE):
            in_type = False
        elif _CONTAINS.match(line.rsplit(";", 1)[-1]) and not in_type:
            # (also after 'public :: name;', which with_public puts on its line)
            contains = True
        elif _MODULE_END.match(line):
            statements = todo.pop(module, None)
            if statements:
                at = len(line) - len(line.lstrip())
                lines[k] = line[:at] + ("" if contains else "contains; ") + \
                    "; ".join(statements) + "; " + line[at:]
            module = None
    if todo:
        raise FortranToolError("check cannot reach the PRIVATE derived-type variables of "
                               "module " + ", ".join(f"'{m}'" for m in sorted(todo)) +
                               ", which another file defines (the harness sets module "
                               "variables through procedures it adds to the module's source)")
    return "".join(lines)


def is_private(access: dict, module: str, name: str) -> bool:
    """Whether *name* of *module* is PRIVATE by :func:`module_access`'s *access*."""
    info = access.get(module.lower())
    if info is None:
        return False
    default, private, public, _ = info
    low = name.lower()
    return low in private or (default == "private" and low not in public)


def private_procedures(text: str) -> set[str]:
    """Lower-case names of the module procedures of *text* that are PRIVATE
    (a shim outside the module cannot call them)."""
    access = module_access(text)
    return {p for mod, info in access.items() for p in info[3] if is_private(access, mod, p)}


def openable_procedures(text: str) -> set[str]:
    """Lower-case names of the PRIVATE module procedures of *text* that are
    private only by their module's default (a ``private`` statement without
    names): :func:`with_public` makes them reachable without changing what
    they compute."""
    access = module_access(text)
    return {p for info in access.values() if info[0] == "private"
            for p in info[3] if p not in info[1] and p not in info[2]}


def with_public(text: str, names) -> str:
    """*text* with ``public :: NAMES;`` put in front of the ``contains`` of
    each module that has some of *names* (lower case, from
    :func:`openable_procedures`) among its procedures, so that no line moves
    (the caller lifts the line-length limit)."""
    access = module_access(text)
    todo = {m: sorted(set(info[3]) & set(names)) for m, info in access.items()}
    lines = text.splitlines(keepends=True)
    module = None
    in_type = False
    for k, line in enumerate(lines):
        if module is None:
            m = _MODULE_START.match(line)
            module = m.group(1).lower() if m else None
            continue
        if _TYPE_START.match(line):
            in_type = True
        elif re.match(r"\s*end\s*type\b", line, re.IGNORECASE):
            in_type = False
        elif _MODULE_END.match(line):
            module = None
        elif _CONTAINS.match(line) and not in_type:
            if todo.get(module):
                at = len(line) - len(line.lstrip())
                lines[k] = line[:at] + f"public :: {', '.join(todo[module])}; " + line[at:]
            module = None
    return "".join(lines)


def private_type_arguments(text: str, procedures) -> dict:
    """Lower-case name -> ``(dummy, type)`` of the *procedures* (IR) with a
    derived-type dummy whose type is PRIVATE in its module of *text* (a shim
    outside the module cannot declare one)."""
    access = module_access(text)
    out: dict[str, tuple] = {}
    for proc in procedures:
        for a in proc.fortran_args:
            if isinstance(a.role, Component):
                module, tname = a.role.type_module, a.role.type_name
                if is_private(access, module, tname):
                    out.setdefault(proc.name.lower(), (a.role.root, tname))
    return out


_UNDEFINED = re.compile(r"undefined reference to [`']([^'`\n]{1,300})'")
_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,200}")
#: what a stub of a missing procedure writes before it stops the run
STUB_MARK = "f2loopy check: the original called a procedure that no compiled file defines: "


def _undefined_procedures(stderr: str) -> list[str] | None:
    """The symbols the linker reports undefined, if that is all it reports
    and each is a plain symbol name (None otherwise)."""
    if "error:" in stderr.replace("ld returned 1 exit status", ""):
        lines = [ln for ln in stderr.splitlines() if "error:" in ln
                 and "ld returned" not in ln and "undefined reference" not in ln]
        if lines:
            return None
    names = sorted(set(_UNDEFINED.findall(stderr)))
    if not names or not all(_SYMBOL.fullmatch(n) for n in names):
        return None
    return names


def _stub_source(names: list[str]) -> str:
    """C stubs for the procedures *names* (validated symbol names): each
    prints :data:`STUB_MARK` and its name on stderr and exits."""
    out = ["#include <stdio.h>", "#include <stdlib.h>", ""]
    for n in names:
        out += [f"void {n}(void) {{", f'  fputs("{STUB_MARK}{n}\\n", stderr);',
                "  exit(3);", "}", ""]
    return "\n".join(out)


def _storage(dt: np.dtype, logical_kind: int = 4) -> np.dtype:
    """How a Fortran value of type *dt* is stored (a logical is an integer of
    its kind's bytes, 4 by default)."""
    if dt != np.bool_:
        return dt
    return np.dtype({1: np.int8, 2: np.int16, 8: np.int64}.get(logical_kind, np.int32))
