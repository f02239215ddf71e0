"""CPU vectorizing: threads over an outer loop, short unrolled inner chunks.

For OpenCL on a CPU (PoCL), one work-group runs on one core, and the C
compiler vectorizes straight-line code well.  This recipe

* spreads the outermost parallel loop over work-groups (``g.0``), so every
  core gets a share: in chunks of *chunk* iterations when that loop is also
  the innermost one (a 1-D kernel such as saxpy), else one iteration per
  work-group;
* splits the innermost loop of the kernel's statements into pieces of
  *width* iterations that are unrolled (``unr``), giving the compiler
  independent operations to pack into SIMD instructions.  The order of the
  iterations does not change, so this is legal even where that loop carries
  a dependence (a sum, a recurrence).

Options:

``width``
    Piece length of the innermost loop (default 8: 8 floats or 4 doubles
    fill a 256-bit vector).  0 leaves the innermost loop alone.
``chunk``
    Iterations per work-group when the parallel loop is the innermost loop
    (default 1024).
``parallel``
    The loop to spread over work-groups; default: the outermost loop every
    statement runs in that carries no dependence.  ``False``: none.

From a script::

    knl = apply_recipe("cpu_vectorize", knl, width=4)

From the command line::

    f2loopy translate --transform cpu_vectorize -D width=4 saxpy.f90
"""

from loopy import LoopyError, TransformError, generate_code, split_iname, tag_inames

OPTIONS = {"width": 8, "chunk": 1024, "parallel": None}
OPTION_TYPES = {"width": "positive integer", "chunk": "positive integer",
                "parallel": ("name", "boolean")}


def common_loops(kernel):
    """Inames every instruction runs in, outermost (in the source) first."""
    common = None
    for insn in kernel.instructions:
        common = set(insn.within_inames) if common is None else common & insn.within_inames
    return [name for name in kernel.all_inames() if name in (common or set())]


def is_parallel(kernel, iname):
    try:
        generate_code(tag_inames(kernel, {iname: "g.0"}))
    except LoopyError:
        return False
    return True


def innermost_loop(kernel, exclude):
    """The loop that is innermost for the most statements."""
    counts = {}
    order = list(kernel.all_inames())
    for insn in kernel.instructions:
        loops = [n for n in order if n in insn.within_inames and n not in exclude
                 and not kernel.iname_tag(n).hardware]
        if loops:
            counts[loops[-1]] = counts.get(loops[-1], 0) + 1
    if not counts:
        return None
    return max(counts, key=lambda n: (counts[n], order.index(n)))


def transform(kernel, width=8, chunk=1024, parallel=None):
    for option, value in (("width", width), ("chunk", chunk)):
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise TransformError(f"cpu_vectorize: option {option} must be a positive integer "
                                 f"(-D {option}=8), not {value!r}")
    outer = None
    if parallel is None:
        candidates = [n for n in common_loops(kernel) if not kernel.iname_tag(n).hardware]
        if candidates and is_parallel(kernel, candidates[0]):
            outer = candidates[0]
    elif parallel is not False:
        outer = parallel
    inner = innermost_loop(kernel, set())
    if outer is not None and outer == inner:
        kernel = split_iname(kernel, outer, int(chunk), outer_tag="g.0")
        inner = f"{outer}_inner"
    elif outer is not None:
        kernel = tag_inames(kernel, {outer: "g.0"})
    if width and inner is not None:
        kernel = split_iname(kernel, inner, int(width), inner_tag="unr")
    return kernel
