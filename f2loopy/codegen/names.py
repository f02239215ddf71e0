"""Making Fortran names safe as C and Python identifiers."""

from __future__ import annotations

import keyword

C_RESERVED = frozenset("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while bool true false half size_t ptrdiff_t intptr_t uintptr_t
kernel __kernel global __global local __local private __private constant __constant
read_only write_only read_write image2d_t image3d_t sampler_t event_t
uchar ushort uint ulong float2 float3 float4 float8 float16 double2 double3 double4 double8
double16 int2 int3 int4 int8 int16 long2 long4 long8 long16
get_global_id get_local_id get_group_id get_local_size get_global_size get_num_groups
barrier mem_fence sqrt exp log log10 sin cos tan asin acos atan atan2 sinh cosh tanh pow
fabs fmin fmax min max fmod floor ceil round trunc copysign hypot abs mad fma clamp
vload2 vload4 vload8 vload16 vstore2 vstore4 vstore8 vstore16 convert_int convert_float
select isnan isinf dot cross length normalize
NAN INFINITY
""".split())


def c_name(name: str) -> str:
    """*name* as a C identifier that cannot clash with keywords, OpenCL built-ins
    or f2loopy's helpers."""
    if name in C_RESERVED or name.startswith(("f2l_", "cfloat", "cdouble", "__")):
        return name + "_"
    return name


# names the Python glue module uses itself: its imports, helpers and constants,
# the builtins its functions call, and the keyword-only 'queue'
# (tests/security/test_sec_glue_injection.py checks the list against the glue)
PY_GLUE_NAMES = frozenset((
    "queue", "np", "cl", "os", "threading", "hashlib", "KernelArgumentError", "CL_FILE",
    "CL_SHA256", "str", "max", "min", "abs", "int", "float", "complex", "bool", "tuple",
    "list", "isinstance", "type", "getattr", "len", "zip", "range", "reversed", "any", "all",
    "open", "OSError", "RuntimeError", "TypeError", "ValueError",
    # (added with module data, devices and stops: the glue's globals and builtins)
    "sys", "KernelStopError", "relaid", "unrelaid", "rank_queue", "print", "next", "super",
    "enumerate", "ord"))


def py_name(name: str) -> str:
    """*name* as a Python identifier of the glue: keywords and the glue's own
    names get a trailing underscore, and so does a name with a leading one
    (the glue's helpers and locals start with ``_`` and never end with it)."""
    if keyword.iskeyword(name) or keyword.issoftkeyword(name) or name in PY_GLUE_NAMES \
            or name.startswith("_"):
        return name + "_"
    return name


def check_identifiers(kernel) -> None:
    """Refuse a kernel any of whose names is not an ASCII identifier (as a
    whole): the names are written into OpenCL, Python, C and Fortran as they
    are.  Kernels from the sandbox were checked when they came back
    (:mod:`f2loopy.ir.serialize`); this is the gate for every other way in
    (a ``$`` that a Fortran compiler accepts in names, the Python API)."""
    from f2loopy.diagnostics import CodegenError
    from f2loopy.escape import is_identifier, visible

    def check(name, what, span):
        if not is_identifier(name):
            raise CodegenError(f"{what} '{visible(name)}' cannot be translated: names must be "
                               "letters, digits and underscores", span or kernel.span)

    check(kernel.name, "the kernel name", kernel.span)
    if kernel.module is not None:
        check(kernel.module, "the module name", kernel.span)
    for a in kernel.args:
        check(a.name, "the argument name", a.span)
    for t in kernel.temporaries.values():
        check(t.name, "the variable name", t.span)
        if t.base_storage is not None:
            check(t.base_storage, "the storage name", t.span)
    for iname in kernel.all_inames():
        check(iname, "the loop index name", None)
