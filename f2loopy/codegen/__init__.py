"""Code generation: kernel IR to OpenCL C.

:func:`generate_code` runs the back half of the pipeline on one kernel::

    checks -> grid -> schedule -> barriers -> OpenCL C

and returns a :class:`GeneratedKernel` with everything the host glue needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from f2loopy.codegen.c_expressions import arg_c_type, c_type
from f2loopy.codegen.elsewhere import remember_code, remembered, unwrap  # noqa: F401
from f2loopy.codegen.declarations import constant_table, declare_storage, declare_temporary
from f2loopy.codegen.emit import KernelEmitter
from f2loopy.ir.build_options import BuildOptionError, check_build_options
from f2loopy.ir.control import check_loop_exits
from f2loopy.ir.layout import storage_size
from f2loopy.codegen.grid import Grid, compute_grid
from f2loopy.codegen.names import c_name, check_identifiers
from f2loopy.codegen.preprocess import address_spaces
from f2loopy.codegen.vectors import vec_axis
from f2loopy.diagnostics import CodegenError
from f2loopy.escape import c_comment
from f2loopy.ir.kernel import AddressSpace, ArrayArg, Kernel, ScalarArg, TranslationUnit
from f2loopy.schedule.linearize import check_innermost_order, linearize
from f2loopy.version import __version__


@dataclass(frozen=True)
class KernelArgument:
    """One argument of the generated OpenCL kernel.

    :attr kind: ``"value"`` (scalar by value), ``"scalar_ref"`` (a scalar the
        kernel writes, passed as a one-element buffer), ``"array"``, or
        ``"fixed"`` (a scalar fixed at translation time: not passed to the
        OpenCL kernel, only checked by the glue).
    """

    name: str
    c_name: str
    kind: str
    dtype: np.dtype
    read: bool
    written: bool
    ir_arg: object


@dataclass(frozen=True)
class ScratchBuffer:
    """A global temporary: device memory the host allocates for each launch
    and passes after the arguments (nothing is copied in or out).

    :attr elements: number of elements, an int or an expression of the
        kernel's scalar arguments.
    """

    name: str
    c_name: str
    dtype: np.dtype
    elements: object

    @property
    def itemsize(self) -> int:
        """Bytes per element on the device (a logical is stored as an int)."""
        dt = np.dtype(self.dtype)
        return 4 if dt.kind == "b" else dt.itemsize


@dataclass(frozen=True)
class GeneratedKernel:
    name: str
    c_name: str
    device_code: str          # the kernel function and what it needs
    preamble: str             # pragmas, helper functions and constant tables
    arguments: tuple          # KernelArgument, in the Fortran order
    grid: Grid
    kernel: Kernel
    scratch: tuple = ()       # ScratchBuffer: OpenCL arguments after `arguments`
    #: for a kernel split at global barriers (:mod:`f2loopy.codegen.phases`):
    #: what the host runs, in order: GeneratedKernel (one launch each, whose
    #: arguments name this kernel's and the indices of the host loops around
    #: it) and HostLoop (whose body holds the same); empty for one launch of
    #: this kernel.  ``scratch`` then lists the global temporaries of every
    #: launch, allocated once for the whole sequence.
    launches: tuple = ()

    @property
    def source(self) -> str:
        """A complete OpenCL program for this kernel alone."""
        return join_program([self])

    @property
    def build_options(self) -> tuple:
        return tuple(self.kernel.options.build_options)

    @property
    def specialized(self) -> tuple:
        """``(argument name, macro)`` of each argument the program is compiled
        for per value (:attr:`~f2loopy.ir.kernel.KernelOptions.specialized`):
        the glue builds the program with ``-DMACRO=value`` added to
        :attr:`build_options` (:func:`specialization_options`)."""
        return tuple((n, specialization_macro(self.kernel.name, n))
                     for n in self.kernel.options.specialized)


def specialization_macro(kernel_name: str, arg_name: str) -> str:
    """The macro that holds argument *arg_name*'s value in the program of a
    kernel specialised for it (both are identifiers)."""
    return f"F2L_SPEC_{c_name(kernel_name)}_{c_name(arg_name)}"


def specialization_options(specialized, values: dict) -> tuple:
    """The build options adding the values (*values*: argument name -> int)
    of the arguments *specialized* (:attr:`GeneratedKernel.specialized`)."""
    return tuple(f"-D{macro}={int(values[name])}" for name, macro in specialized)


def join_program(kernels) -> str:
    """One OpenCL program holding several generated kernels (a kernel split
    at global barriers brings the kernels of all its launches).

    :raises CodegenError: two of them would have the same name (a
        subroutine named like the launch of another, ``foo_phase1``).
    """
    from f2loopy.codegen.phases import phase_kernels
    seen_names: dict = {}
    for gk in kernels:
        for part in phase_kernels(gk.launches) or [gk]:
            other = seen_names.setdefault(part.c_name, gk)
            if other is not gk:
                raise CodegenError(f"two kernels of the program would be named "
                                   f"'{part.c_name}' (kernels '{other.name}' and '{gk.name}'; "
                                   "launches of a split kernel are named NAME_phaseK): "
                                   "rename one", gk.kernel.span)
    pre_lines: list[str] = []
    seen = set()
    for gk in kernels:
        for line in gk.preamble.split("\n\n"):
            if line.strip() and line not in seen:
                seen.add(line)
                pre_lines.append(line)
    parts = [p for p in pre_lines]
    parts.extend(gk.device_code for gk in kernels)
    return "\n\n".join(parts) + "\n"


# the code of the last few kernels, by identity (kernels are immutable: a
# script's checkpoint and its final result are often the same object)
_RECENT: dict = {}
_RECENT_SIZE = 16


def generate_code(kernel: Kernel | TranslationUnit) -> GeneratedKernel:
    """Generate OpenCL C for *kernel* (or the one kernel of a translation
    unit; :func:`f2loopy.generate_code_v2` takes several).

    The result's ``source`` is a complete OpenCL program; ``device_code`` the
    kernel function, ``arguments`` and ``grid`` what the host glue needs.
    Results are cached by kernel identity (kernels are immutable).

    :raises CodegenError: the kernel cannot be turned into OpenCL as
        transformed (e.g. no valid loop order).
    :raises RaceError: a parallel loop carries a dependence (both Fortran
        lines are named).
    """
    if isinstance(kernel, TranslationUnit):
        if len(kernel.kernels) != 1:
            raise CodegenError(f"generate_code: the translation unit holds {len(kernel)} "
                               f"kernels ({', '.join(kernel.keys())}); give one, or use "
                               "generate_code_v2")
        kernel = kernel.kernels[0]
    if not isinstance(kernel, Kernel):
        raise CodegenError(f"generate_code: expected a kernel, got {type(kernel).__name__}")
    known = remembered(kernel)      # a script's kernel: the sandbox child's code
    if known is not None:
        return unwrap(known)
    hit = _RECENT.get(id(kernel))
    if hit is not None and hit[0] is kernel:
        return hit[1]
    gk = _generate_code(kernel)
    if len(_RECENT) >= _RECENT_SIZE:
        del _RECENT[next(iter(_RECENT))]
    _RECENT[id(kernel)] = (kernel, gk)
    return gk


def forget_code(kernel: Kernel) -> None:
    """Drop the code :func:`generate_code` remembers for *kernel* (code made
    without the value-flow check, :func:`~f2loopy.codegen.barriers.flow_check`,
    is never the kernel's code for a later call)."""
    hit = _RECENT.get(id(kernel))
    if hit is not None and hit[0] is kernel:
        del _RECENT[id(kernel)]


def _generate_code(kernel: Kernel, by_reference: frozenset = frozenset()) -> GeneratedKernel:
    """*by_reference*: scalar arguments passed as one-element buffers even
    where this kernel does not write them (other launches of the same
    sequence do)."""
    from f2loopy.codegen.preprocess import preprocess
    check_identifiers(kernel)
    try:        # they reach the OpenCL compiler of the user's program: the last gate
        check_build_options(kernel.options.build_options)
    except BuildOptionError as exc:
        raise CodegenError(str(exc), kernel.span) from None
    from f2loopy.codegen.phases import has_global_barriers
    if has_global_barriers(kernel):
        if kernel.options.specialized:
            raise CodegenError(f"kernel '{kernel.name}' runs in several launches (global "
                               "barriers); compiling it per value of "
                               f"{', '.join(kernel.options.specialized)} "
                               "(specialize_parameters) is supported for one launch only",
                               kernel.span)
        return _generate_phased(kernel)
    check_loop_exits(kernel)
    kernel = preprocess(kernel)
    grid = compute_grid(kernel)
    schedule = linearize(kernel)
    check_innermost_order(kernel, schedule)
    from f2loopy.codegen.barriers import check_and_insert_barriers
    schedule = check_and_insert_barriers(kernel, grid, schedule)
    spaces = address_spaces(kernel)
    emitter = KernelEmitter(kernel, grid, schedule, address_spaces=spaces,
                            by_reference=by_reference)
    emitter.emit_body()

    args, params, flat_decls = _kernel_arguments(kernel, emitter, by_reference)
    decls, tables, scratch = _temporaries(kernel, emitter, spaces, params)
    if kernel.error_sites:
        from f2loopy.codegen.emit import ERROR_BUFFER
        params.append(f"__global int *{ERROR_BUFFER}")
    device_code = _device_code(kernel, grid, params, flat_decls + decls, emitter.lines)
    pre = []
    if emitter.uses_double or emitter.helpers.uses_double:
        pre.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    if not kernel.options.fp_contract:
        pre.append("#pragma OPENCL FP_CONTRACT OFF")
    helper_src = emitter.helpers.source()
    if helper_src:
        pre.append(helper_src.rstrip())
    pre.extend(tables)
    return GeneratedKernel(kernel.name, c_name(kernel.name), device_code, "\n\n".join(pre),
                           tuple(args), grid, kernel, tuple(scratch))


def _kernel_arguments(kernel: Kernel, emitter: KernelEmitter,
                      by_reference: frozenset) -> tuple[list, list, list]:
    """The kernel's arguments as :class:`KernelArgument` records, their
    OpenCL parameter declarations, and the declarations of the flat views
    of vector-typed arrays (marks *emitter* as using doubles where an
    argument is double)."""
    written = kernel.written_variables()
    read = set()
    from f2loopy.ir.expressions import variables_read
    for insn in kernel.instructions:
        read |= variables_read(*insn.read_expressions())
    args = []
    params = []
    flat_decls = []
    for a in kernel.args:
        arg_type = arg_c_type(a)
        if isinstance(a, ScalarArg) and a.fixed_value is not None:
            kind = "fixed"
        elif isinstance(a, ScalarArg):
            kind = "scalar_ref" if a.name in written or a.name in by_reference else "value"
            if kind == "value":
                params.append(f"{arg_type} const {c_name(a.name)}")
            else:
                params.append(f"__global {arg_type} *{c_name(a.name)}")
        elif isinstance(a, ArrayArg):
            kind = "array"
            # written arrays are not __restrict__: PoCL 3.1 (LLVM 15) miscompiles
            # a loop nest storing through a restrict pointer (an earlier store
            # of one element lands after a later one: tests/regressions/
            # pocl_restrict_store_order.f90); read-only arrays keep it, which
            # tells the compiler no store reaches them
            const = "" if a.name in written else " const"
            restrict = "" if a.name in written else "__restrict__ "
            va = vec_axis(a)
            vec = str(va[1]) if va is not None else ""
            params.append(f"__global {arg_type}{vec}{const} *{restrict}"
                          f"{c_name(a.name)}")
            if va is not None:
                flat_decls.append(f"__global {arg_type}{const} *{c_name(a.name)}_flat = "
                                  f"(__global {arg_type}{const} *) {c_name(a.name)};")
        else:
            raise CodegenError(f"unknown argument kind for '{a.name}'")
        if np.dtype(a.dtype) in (np.float64, np.complex128):
            emitter.uses_double = True
        args.append(KernelArgument(a.name, c_name(a.name), kind, np.dtype(a.dtype),
                                   a.name in read, a.name in written, a))
    return args, params, flat_decls


def _temporaries(kernel: Kernel, emitter: KernelEmitter, spaces: dict,
                 params: list) -> tuple[list, list, list]:
    """The declarations of the kernel's temporaries (one line each), the
    constant tables of read-only initialised ones, and the global scratch
    buffers, whose parameters are appended to *params* (marks *emitter* as
    using doubles where a temporary is double)."""
    decls = []
    tables = []
    shared: dict = {}
    scratch = []
    for name, t in kernel.temporaries.items():
        if t.read_only and t.initializer is not None:
            tables.append(constant_table(t, kernel.name))
            continue
        if np.dtype(t.dtype) in (np.float64, np.complex128):
            emitter.uses_double = True
        if spaces[name] == AddressSpace.GLOBAL:
            scratch.append(_scratch_buffer(t))
            params.append(f"__global {c_type(t.dtype)} *{c_name(t.name)}")
            continue
        if t.base_storage:
            size, first = shared.get(t.base_storage, (0, t))
            shared[t.base_storage] = (max(size, storage_size(t)), first)
            continue
        size_text = None
        if t.shape and not all(isinstance(e, (int, np.integer)) for e in t.shape):
            size_text = _specialized_size(kernel, t, emitter)
        decls.append(declare_temporary(t, spaces[name], kernel.name, size_text=size_text))
    for base, (size, first) in shared.items():
        decls.append(declare_storage(base, first, size, spaces[first.name]))
    return [line for d in decls for line in d.split("\n")], tables, scratch


def _device_code(kernel: Kernel, grid, params: list, decls: list, lines: list) -> str:
    """The kernel function's OpenCL text: its header with *params*, the
    declarations *decls* and the body *lines* (under ``#if`` where it is
    compiled per value of specialised parameters)."""
    local = grid.local_size
    attribute = f"__attribute__ ((reqd_work_group_size({local[0]}, {local[1]}, " \
        f"{local[2]}))) " if grid.fixed_local_size else ""
    header = f"__kernel void {attribute}{c_name(kernel.name)}({', '.join(params)})"
    body = ["{"] + ["    " + d for d in decls] + lines + ["}"]
    if kernel.options.specialized:
        body = _specialized_body(kernel, body)
    device_code = header + "\n" + "\n".join(body)
    if kernel.options.specialized:
        # only a build that defines the values holds the kernel (the glue's
        # builds for other kernels of the file leave it out)
        macros = [specialization_macro(kernel.name, n) for n in kernel.options.specialized]
        device_code = ("#if " + " && ".join(f"defined({m})" for m in macros) + "\n"
                       + device_code + "\n#endif")
    return device_code


def _specialized_body(kernel: Kernel, body: list) -> list:
    """*body* (the kernel function's lines from its opening brace) reading
    the specialised arguments as their macros: each name is defined as its
    macro inside the function, so every use (loop bounds, subscripts, the
    extents of private arrays) is a compile-time constant; the parameter
    itself stays in the signature, unused."""
    names = []
    for n in kernel.options.specialized:
        a = kernel.arg_dict.get(n)
        if not isinstance(a, ScalarArg) or a.fixed_value is not None:
            raise CodegenError(f"kernel '{kernel.name}' is specialised for '{n}', which is "
                               "not a scalar argument it takes", kernel.span)
        names.append(c_name(n))
    defines = [f"#define {n} ({specialization_macro(kernel.name, a)})"
               for n, a in zip(names, kernel.options.specialized, strict=True)]
    return [body[0]] + defines + body[1:-1] + [f"#undef {n}" for n in names] + [body[-1]]


def _specialized_size(kernel: Kernel, t, emitter) -> str:
    """The C text of the number of elements of private or local temporary
    *t*, whose extents are numbers or expressions of the arguments the
    kernel is specialised for (constants once the macros are defined)."""
    from f2loopy.ir.expressions import variables_read
    allowed = set(kernel.options.specialized)
    size = None
    for e in t.shape:
        if e is None or isinstance(e, (float, bool, str)) or \
                (not isinstance(e, (int, np.integer)) and not variables_read(e) <= allowed):
            raise CodegenError(f"temporary '{t.name}' needs constant extents, not {e}", t.span)
        size = e if size is None else size * e
    return emitter.printer.rec(size, 0)


def _generate_phased(kernel: Kernel) -> GeneratedKernel:
    """A kernel split at its global barriers: one generated kernel per launch
    (:mod:`f2loopy.codegen.phases`), and this kernel's arguments as the host
    glue takes them."""
    from f2loopy.codegen.phases import HostLoop, PhaseKernel, split_phases
    from f2loopy.ir.expressions import variables_read
    written = kernel.written_variables()
    by_ref = frozenset(a.name for a in kernel.args
                       if isinstance(a, ScalarArg) and a.name in written)
    scratch: dict = {}
    launches: list = []

    def generate(steps) -> tuple:
        out: list = []
        for s in steps:
            if isinstance(s, HostLoop):
                out.append(HostLoop(s.iname, s.lower, s.upper, generate(s.body), s.span))
                continue
            assert isinstance(s, PhaseKernel)
            gk = _generate_code(s.kernel, by_ref)
            for sb in gk.scratch:
                scratch.setdefault(sb.name, sb)
            launches.append(gk)
            out.append(gk)
        return tuple(out)

    steps = generate(split_phases(kernel))
    read: set = set()
    for insn in kernel.instructions:
        read |= variables_read(*insn.read_expressions())
    args = []
    for a in kernel.args:
        if isinstance(a, ScalarArg):
            kind = "fixed" if a.fixed_value is not None else \
                "scalar_ref" if a.name in written else "value"
        else:
            kind = "array"
        args.append(KernelArgument(a.name, c_name(a.name), kind, np.dtype(a.dtype),
                                   a.name in read, a.name in written, a))
    preamble = join_program([GeneratedKernel(g.name, g.c_name, "", g.preamble, (), g.grid,
                                             g.kernel) for g in launches]).strip()
    device = "\n\n".join(g.device_code for g in launches)
    grid = Grid((), (1, 1, 1), (1, 1, 1))
    return GeneratedKernel(kernel.name, c_name(kernel.name), device, preamble, tuple(args),
                           grid, kernel, tuple(scratch.values()), steps)


def _scratch_buffer(t) -> ScratchBuffer:
    import pymbolic.primitives as p

    from f2loopy.ir.folding import normalize_integer
    if t.base_storage:
        raise CodegenError(f"global temporary '{t.name}' shares storage with others "
                           "(alias_temporaries): only local and private temporaries can",
                           t.span)
    if vec_axis(t) is not None:
        raise CodegenError(f"global temporary '{t.name}' has a vec axis: only local and "
                           "private temporaries can", t.span)
    if any(s is None for s in t.shape):
        raise CodegenError(f"global temporary '{t.name}' needs a known size", t.span)
    elements = normalize_integer(p.Product(tuple(t.shape))) if len(t.shape) > 1 else \
        (normalize_integer(t.shape[0]) if t.shape else 1)
    if not isinstance(elements, (int, np.integer)):
        # extents of an automatic array may be negative (a zero-size array)
        elements = p.Call(p.Variable("max"), (0, elements))
    return ScratchBuffer(t.name, c_name(t.name), np.dtype(t.dtype), elements)


def file_header(filename: str) -> str:
    return (f"/* Generated by f2loopy {__version__} from {c_comment(filename)}. Do not edit: "
            "change the Fortran source or its !$loopy script and translate again. */")
