"""GPU tiling: spread loops over the OpenCL grid in tiles (work-groups).

Each chosen loop ``i`` is split into ``i_outer`` (the work-group number,
``g.N``) and ``i_inner`` (the work-item within the group, ``l.N``) of length
*tile*.  The innermost chosen loop gets axis 0: in Fortran's column-major
layout it usually indexes the fastest-varying array dimension, so
neighbouring work-items touch neighbouring memory (coalesced access).

Options:

``inames``
    The loops to tile, outermost first: ``"j,i"`` or ``["j", "i"]`` (at most
    three).  Default: the outermost loops (up to two) that every statement runs
    in and that carry no dependence (checked by generating code once per
    candidate: a loop whose iterations depend on each other is skipped).
``tile``
    Work-group size along each loop: one number for all, or one per loop
    (``tile=(16, 8)``).  Default: the tunable choice ``tile`` among 16, 8 and
    32 (16 until ``f2loopy tune`` records another).

From a script::

    knl = apply_recipe("gpu_tiling", knl, inames="j,i", tile=(8, 32))

From the command line (``-D`` values named like options are passed on)::

    f2loopy translate --transform gpu_tiling -D tile=32 matmul.f90
    f2loopy tune --transform gpu_tiling --size n=1024 matmul.f90    # measure the tile
"""

from loopy import LoopyError, TransformError, generate_code, split_iname, tag_inames, tunable

OPTIONS = {"inames": None, "tile": None}
OPTION_TYPES = {"inames": "names", "tile": ("positive integer", "positive integers")}


def common_loops(kernel):
    """Inames every instruction runs in, outermost (in the source) first."""
    common = None
    for insn in kernel.instructions:
        common = set(insn.within_inames) if common is None else common & insn.within_inames
    return [name for name in kernel.all_inames() if name in (common or set())]


def is_parallel(kernel, iname):
    """True if tagging *iname* as a grid axis is race-free."""
    try:
        generate_code(tag_inames(kernel, {iname: "g.0"}))
    except LoopyError:
        return False
    return True


def as_list(names):
    if isinstance(names, str):
        return [n.strip() for n in names.split(",") if n.strip()]
    return list(names)


def transform(kernel, inames=None, tile=None):
    if tile is None:
        tile = tunable("tile", [16, 8, 32])
    if inames is None:
        chosen = [n for n in common_loops(kernel)
                  if not kernel.iname_tag(n).hardware and is_parallel(kernel, n)][:2]
        if not chosen:
            raise TransformError(f"gpu_tiling: kernel '{kernel.name}' has no loop that every "
                                 "statement runs in and that can run in parallel; give "
                                 "inames=...")
    else:
        chosen = as_list(inames)
    if not 1 <= len(chosen) <= 3:
        raise TransformError("gpu_tiling: give one to three loops to tile")
    tiles = [tile] * len(chosen) if isinstance(tile, int) else tile
    if (not isinstance(tiles, (list, tuple))
            or not all(isinstance(t, int) and not isinstance(t, bool) and t > 0 for t in tiles)):
        raise TransformError(f"gpu_tiling: option tile must be a positive integer or a tuple "
                             f"of them (-D tile=16, -D tile=(16,8)), not {tile!r}")
    tiles = list(tiles)
    if len(tiles) != len(chosen):
        raise TransformError(f"gpu_tiling: {len(chosen)} loops but {len(tiles)} tile sizes")
    for position, (name, size) in enumerate(zip(chosen, tiles)):
        axis = len(chosen) - 1 - position
        kernel = split_iname(kernel, name, size, outer_tag=f"g.{axis}",
                             inner_tag=f"l.{axis}")
    return kernel
