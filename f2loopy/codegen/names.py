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
""".split()) | frozenset("""
acosh acospi asinh asinpi atanh atanpi atan2pi cbrt cospi erf erfc exp2 exp10 expm1 fdim
fract frexp ilogb ldexp lgamma lgamma_r log2 log1p logb maxmag minmag modf nan nextafter
pown powr remainder remquo rint rootn rsqrt sincos sinpi tanpi tgamma
half_cos half_divide half_exp half_exp2 half_exp10 half_log half_log2 half_log10 half_powr
half_recip half_rsqrt half_sin half_sqrt half_tan native_cos native_divide native_exp
native_exp2 native_exp10 native_log native_log2 native_log10 native_powr native_recip
native_rsqrt native_sin native_sqrt native_tan
abs_diff add_sat hadd rhadd clz popcount mad_hi mad_sat mad24 mul_hi mul24 rotate sub_sat
upsample degrees mix radians sign smoothstep step distance fast_distance fast_length
fast_normalize isequal isnotequal isgreater isgreaterequal isless islessequal islessgreater
isfinite isnormal isordered isunordered signbit bitselect shuffle shuffle2 vec_step
get_work_dim get_global_offset read_mem_fence write_mem_fence async_work_group_copy
async_work_group_strided_copy wait_group_events prefetch printf
atomic_add atomic_sub atomic_xchg atomic_inc atomic_dec atomic_cmpxchg atomic_min atomic_max
atomic_and atomic_or atomic_xor atom_add atom_sub atom_xchg atom_inc atom_dec atom_cmpxchg
atom_min atom_max atom_and atom_or atom_xor
read_imagef read_imagei read_imageui write_imagef write_imagei write_imageui
get_image_width get_image_height get_image_depth
char2 char3 char4 char8 char16 uchar2 uchar3 uchar4 uchar8 uchar16 short2 short3 short4
short8 short16 ushort2 ushort3 ushort4 ushort8 ushort16 uint2 uint3 uint4 uint8 uint16
ulong2 ulong3 ulong4 ulong8 ulong16 long3 float3 double3 half2 half3 half4 half8 half16
image1d_t image1d_array_t image1d_buffer_t image2d_array_t
main typeof asm
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


def check_names(kernel) -> None:
    """Refuse a kernel any of whose names (its own, its module's, arguments,
    variables, loop indices) is not an ASCII identifier as a whole (a ``$``
    that a Fortran compiler accepts in names), with a located error: the
    names are written into OpenCL, Python, C and Fortran as they are, and
    the transformation sandbox refuses to send them back.  The pipeline
    asks before a script or recipe runs; :func:`check_identifiers` before
    code is generated."""
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


def check_identifiers(kernel) -> None:
    """Refuse a kernel any of whose names is not an ASCII identifier (as a
    whole): the names are written into OpenCL, Python, C and Fortran as they
    are.  Kernels from the sandbox were checked when they came back
    (:mod:`f2loopy.ir.serialize`); this is the gate for every other way in
    (a ``$`` that a Fortran compiler accepts in names, the Python API)."""
    from f2loopy.diagnostics import CodegenError
    check_names(kernel)
    # the names of one kernel's code: c_name appends '_' to reserved ones, so
    # a loop 'max' and an argument 'max_' would be one C variable (the
    # loop's, shadowing the argument: 'for (int max_ = 1; max_ <= max_; ...)')
    declared: dict = {}

    def distinct(name, span):
        other = declared.setdefault(c_name(name), name)
        if other != name:
            raise CodegenError(f"'{other}' and '{name}' would both be '{c_name(name)}' in the "
                               "OpenCL code (f2loopy appends '_' to names that OpenCL or "
                               "f2loopy reserve): rename one", span or kernel.span)
    for a in kernel.args:
        distinct(a.name, a.span)
    for t in kernel.temporaries.values():
        distinct(t.name, t.span)
    for iname in kernel.all_inames():
        distinct(iname, None)
