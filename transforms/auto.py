"""auto: parallelise a kernel that has no script, from its dependences.

For every kernel of the file (see ``f2loopy.transform.auto`` for the exact
rules):

* the loops that carry no dependence (decided exactly with isl) run in
  parallel; reductions and loops carrying dependences stay sequential;
* the parallel loop indexing the fastest-varying (Fortran: first) subscript
  goes to grid axis 0, so neighbouring work-items touch neighbouring memory,
  a second one to axis 1; each is split into work-groups of *tile* items;
* a sequential loop inside them whose tiles of read-only arrays are used by
  several work-items (the ``k`` of a matrix product) is tiled and its tiles
  are staged in local memory;
* each plan is checked by generating its code (exact race checks); when
  loop nests exchange data across work-groups the next plan is tried: one
  axis, then one work-group with barriers, then the kernel as it was.

The recipe prints what it chose for each kernel (``f2loopy translate``
shows it), e.g. ``auto: kernel 'gemm': plan grid+local, j -> g.1/l.1,
i -> g.0/l.0; local memory for a, b``.

Options (a value left at None is a tunable that ``f2loopy tune`` searches;
untuned, its first choice is used):

``tile``
    Work-group size along axis 0 (tunable ``auto_tile0``: 32, 16, 64).
``tile1``
    Work-group size along axis 1 (tunable ``auto_tile1``: 8, 4, 16).
``prefetch``
    Stage reused tiles in local memory (tunable ``auto_prefetch``: True,
    False; declared only where a reused tile exists).
``group``
    Work-group size when the kernel runs in one work-group (tunable
    ``auto_group``: 128, 64, 256; declared only where that plan is taken).

From the command line::

    f2loopy translate --transform auto gemm.f90
    f2loopy check --transform auto gemm.f90
    f2loopy tune --transform auto --size ni=512 ... gemm.f90

From a script::

    knl = apply_recipe("auto", knl, tile=16)
"""

from loopy import generate_code, grid_axes, parallel_loops, plan_auto, reused_tiles

OPTIONS = {"tile": None, "tile1": None, "prefetch": None, "group": None}


def transform(kernel, tile=None, tile1=None, prefetch=None, group=None):
    t0 = tunable("auto_tile0", [32, 16, 64]) if tile is None else tile
    t1 = tunable("auto_tile1", [8, 4, 16]) if tile1 is None else tile1
    if prefetch is None:
        loops = parallel_loops(kernel)
        reuse = bool(loops) and bool(reused_tiles(kernel, grid_axes(kernel, loops)))
        prefetch = tunable("auto_prefetch", [True, False]) if reuse else False
    outcome = plan_auto(kernel, tile=(t0, t1), prefetch=prefetch,
                        group_size=128 if group is None else group, verify=generate_code)
    if outcome.plan == "one-group" and group is None:
        size = tunable("auto_group", [128, 64, 256])
        if size != 128:
            outcome = plan_auto(kernel, tile=(t0, t1), prefetch=prefetch, group_size=size,
                                verify=generate_code, plans=["one-group", "sequential"])
    print(outcome.summary())
    if outcome.plan == "sequential":
        for note in outcome.notes:
            print(f"  note: {note}")
    return outcome.kernel
