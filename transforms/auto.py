"""auto: parallelise a kernel that has no script, from its dependences.

For every kernel of the file (see ``f2loopy.transform.auto`` for the exact
rules):

* the loops that carry no dependence (decided exactly with isl) run in
  parallel; loops carrying dependences stay sequential;
* a loop nest that only reduces into scalars (sums, products, max/min, an
  extreme with its location, see ``f2loopy.analysis.reductions``) runs as a
  parallel reduction where no other loop could use the grid (plan
  ``reduction``: partials per work-item, trees in local memory; 8 x 128
  work-groups store theirs, a second launch of one group combines them);
* the parallel loop indexing the fastest-varying (Fortran: first) subscript
  goes to grid axis 0, so neighbouring work-items touch neighbouring memory,
  a second one to axis 1; each is split into work-groups of *tile* items;
* a sequential loop inside them whose tiles of read-only arrays are used by
  several work-items (the ``k`` of a matrix product) is tiled and its tiles
  are staged in local memory;
* an array element accumulated across a sequential loop (``c(i, j) = c(i, j)
  + ...`` over ``k``) is kept in a private variable and stored once;
* loop nests that exchange data across the grid (one reads what another
  wrote) run in launches of their own, separated by global barriers, each
  on its own grid, and a time loop that carries a dependence around
  parallel loop nests runs on the host, launching them once per step
  (``f2loopy.transform.auto_launches``; ``launches="one"`` keeps one
  launch);
* each plan is checked by generating its code (exact race checks); when
  loop nests exchange data across work-groups the next plan is tried: one
  axis, then (if ``group`` asks for it) one work-group with barriers, then
  the kernel as it was.

The recipe prints what it chose for each kernel (``f2loopy translate``
shows it), e.g. ``auto: kernel 'gemm': plan grid+local, j -> g.1/l.1,
i -> g.0/l.0; local memory for a, b; registers for c``; a kernel that stays
sequential gets a note per loop saying why.

Options:

A value left at None is a tunable that ``f2loopy tune`` searches (untuned,
its first choice is used); only the choices that matter for the plan taken
with the first choices are declared.

``tile``
    Work-group size along axis 0 (tunable ``auto_tile0``: 32, 16, 64).
``tile1``
    Work-group size along axis 1 (tunable ``auto_tile1``: 8, 4, 16; where two
    loops are parallel).
``prefetch``
    Stage reused tiles in local memory (tunable ``auto_prefetch``: True,
    False; where a reused tile exists).
``axis1``
    Which loop goes to grid axis 1 where a statement runs in more than two
    parallel loops: ``"inner"``, the loop of the next-fastest subscript, each
    work-item marching through the rest (a GPU's choice), or ``"outer"``,
    the outermost loop, each work-item running whole inner rows (a CPU's)
    (tunable ``auto_axis1``: ``"inner"``, ``"outer"``; where it matters).
``style``
    ``"grid"``: the plans above; ``"outer"``: one work-group per iteration
    of each nest's outermost parallel loop, whose inner loops run as written
    (OpenMP's ``parallel do`` on the outer loop; often a CPU's best), falling
    back to the plans above if that is refused (tunable ``auto_style``:
    ``"grid"``, ``"outer"``; where a grid plan is taken).
``launches``
    ``"split"``: global barriers between loop nests that exchange data and a
    time loop on the host, as above; ``"one"``: one launch, the plans above
    on the kernel as written (tunable ``auto_launches``: ``"split"``,
    ``"one"``; where the kernel has such nests or such a loop).  A split
    kernel whose plans are all refused falls back to one launch.
``group``
    Work-group size when the kernel can only run in one work-group (loop
    nests that exchange data, a time loop around them), or ``"none"`` to keep
    such a kernel sequential (tunable ``auto_group``: ``"none"``, 128, 256).
    ``"none"`` comes first: on PoCL 3.1 (LLVM 15) a few such kernels with
    barriers inside loops compute wrong results unless built with
    ``-cl-opt-disable`` (code that ``f2loopy check`` passes with it), and on
    a CPU the barriers cost more than the parallelism gives; ``f2loopy tune``
    checks every variant it times, so it can pick a group where that is
    right and faster (a GPU).

``reduction_groups``
    The ``reduction`` plan's work-groups: ``(g0,g1)``, *g0* along the chunks
    of the innermost reduction loop and *g1* along the next loop out
    (default ``(8,128)``; fewer along a loop with fewer chunks or trips
    whatever the sizes), or one number for groups along the chunks only
    (``-D reduction_groups=128``: the plan before the pair; ``1``: one
    work-group, one launch).

``columns``
    ``"scc"``: a column-physics routine, whose loops over one run-time range
    (``DO JL = KIDIA, KFDIA``, at least two such loops, bounds that are
    scalar arguments) carry no dependence, gets one column per work-item
    (``f2loopy.transform.scc``: the horizontal loops become one index,
    blocks of *block* columns on ``g.0``, the other loops sequential inside,
    column temporaries of constant other extents private), when its code
    passes the checks; else the plans above.  ``"off"``: the plans above
    only.  Default ``"scc"``.
``block``
    Columns per work-group of the ``scc`` plan (default 128).
``kcache``
    In the ``scc`` plan, keep each private level temporary that one
    vertical loop alone uses, every iteration at its own level and the one
    above (``ZFLX(JK) = ZFLX(JK-1) + ...``), as two values, the current and
    the previous level, instead of an array over all levels
    (``f2loopy.transform.kcache``; default True).
``fuse``
    In the ``scc`` plan, merge the level loops inside the columns into one
    where the dependences allow (``f2loopy.transform.level_fusion``: loops
    of the same range, species loops around them interchanged, a loop from a
    run-time top level as a one-iteration loop under one test, a loop over
    one more level with its last level peeled; default True).  The summary
    line says what was fused; a line per loop that stays apart says why.
``version``
    In the ``scc`` plan, version code that indexes a small private array
    with a run-time value (``ZSOLQA(JO, JN)`` with ``JO = IORDER(JM)``) so
    that the array can stay in registers.  ``blocks``: the body of the loop
    around such statements once per value of the key, each copy one block
    under one test ``IORDER(JM) == value`` (``f2loopy.transform.
    block_versioning``), then each remaining statement; ``statements`` (or
    ``true``): each statement alone, one copy per value
    (``f2loopy.transform.versioning``); ``false``: nothing.  Default
    ``blocks`` (CLOUDSC 4-5% faster on an H200: samples/cloudsc_RESULTS.md).
``assume``
    Facts about the scalar arguments that the analysis may use (isl syntax,
    ``"NSSOPT >= 0 and NSSOPT <= 3"``): a branch no allowed value takes needs
    no assignment of a private scalar.
``fix``
    Integer scalar arguments fixed at translation time, ``"KLEV=137"`` or
    ``"KLEV=137, NCLV=5"`` (``-D fix=KLEV=137``; ``fix_parameters``): their
    uses become constants, so that column temporaries dimensioned by them
    (``ZTMP(KLON, KLEV)``) become private arrays of each work-item under
    ``columns="scc"``.  The glue still takes them and refuses other values.

From the command line::

    f2loopy translate --transform auto gemm.f90
    f2loopy check --transform auto gemm.f90
    f2loopy tune --transform auto --size ni=512 --size nj=512 --size nk=512 gemm.f90
    f2loopy translate --transform auto -D launches=one -D group=128 jacobi_2d.f90
    f2loopy translate --transform auto -D style=outer heat_3d_step.f90
    f2loopy translate --transform auto -D fix=KLEV=137 cloudsc.F90

From a script::

    knl = apply_recipe("auto", knl, tile=16)
"""

from loopy import (
    LoopyError, assume as assume_facts, fix_parameters, generate_code,
    has_choice_of_second_axis, horizontal_loops, launch_summary, parallel_loops,
    parse_fixed_values, plan_auto, scc_with_fusion, split_for_auto)

OPTIONS = {"tile": None, "tile1": None, "prefetch": None, "axis1": None, "style": None,
           "group": None, "launches": None, "columns": "scc", "block": 128, "assume": None, "fix": None,
           "specialize": True, "kcache": True, "version": "blocks", "reduction_groups": None,
           "fuse": True}
OPTION_TYPES = {"tile": "positive integer", "tile1": "positive integer", "prefetch": "boolean",
                "axis1": ("inner", "outer"), "style": ("grid", "outer"),
                "group": ("positive integer", "none"), "launches": ("split", "one"),
                "columns": ("scc", "off"), "block": "positive integer", "assume": "text",
                "fix": "text", "specialize": "boolean", "kcache": "boolean",
                "version": ("boolean", "blocks", "statements"), "fuse": "boolean",
                "reduction_groups": ("positive integer", "positive integers")}

PLANS = ("grid+local", "grid", "grid-1d", "reduction", "one-group", "sequential")


def transform(kernel, tile=None, tile1=None, prefetch=None, axis1=None, style=None,
              group=None, launches=None, columns="scc", block=128, assume=None, fix=None,
              specialize=True, kcache=True, version="blocks", reduction_groups=None, fuse=True):
    if launches not in (None, "split", "one"):
        raise TransformError(f"auto: launches is 'split' or 'one', not {launches!r}")
    if columns not in ("scc", "off"):
        raise TransformError(f"auto: columns is 'scc' or 'off', not {columns!r}")
    if assume is not None:
        if not isinstance(assume, str):
            raise TransformError(f"auto: assume is a condition (text), not {assume!r}")
        kernel = assume_facts(kernel, assume)
    if fix is not None:
        kernel = fix_parameters(kernel, **parse_fixed_values(fix, who="auto: fix"))
    if columns == "scc":
        mapped = columns_plan(kernel, block, specialize, kcache, version, fuse)
        if mapped is not None:
            return mapped
    split = split_for_auto(kernel)
    if split is not kernel and launches is None:
        launches = tunable("auto_launches", ["split", "one"])
    outcome = None
    if split is not kernel and launches == "split":
        outcome = choose(split, tile, tile1, prefetch, axis1, style, group, reduction_groups)
        if outcome.plan == "sequential":
            print(f"auto: kernel '{kernel.name}': no plan of its launches was taken; one launch")
            outcome = None
        elif outcome.plan == "reduction":
            # one work-group runs the whole kernel: one launch needs no global barrier
            one = choose(kernel, tile, tile1, prefetch, axis1, style, group, reduction_groups)
            if one.plan == "reduction":
                outcome = one
    if outcome is None:
        outcome = choose(kernel, tile, tile1, prefetch, axis1, style, group, reduction_groups)
    print(outcome.summary() + launch_summary(outcome.kernel))
    if outcome.plan == "sequential":
        for note in outcome.notes:
            print(f"  note: {note}")
    return outcome.kernel


def choose(kernel, tile, tile1, prefetch, axis1, style, group, reduction_groups=None):
    """The plan for *kernel* with the given options, declaring the tunables
    that matter for it."""
    groups = {} if reduction_groups is None else {"reduction_groups": tuple(
        reduction_groups) if isinstance(reduction_groups, (tuple, list)) else reduction_groups}

    def plan(t0, t1, fetch, size, plans=PLANS):
        return plan_auto(kernel, tile=(t0, t1), prefetch=fetch, group_size=size,
                         second_axis=second, verify=generate_code, plans=plans, **groups)

    t0 = 32 if tile is None else tile
    t1 = 8 if tile1 is None else tile1
    size = 128 if group is None or group == "none" else group
    fetch = True if prefetch is None else prefetch
    second = "inner" if axis1 is None else axis1
    first = plan(t0, t1, fetch, size)
    # the tunables that matter for the plan the first choices give
    if first.plan.startswith("grid"):
        if tile is None:
            t0 = tunable("auto_tile0", [32, 16, 64])
        if tile1 is None and any(t.startswith("g.1") for t in first.tags.values()):
            t1 = tunable("auto_tile1", [8, 4, 16])
        if prefetch is None and first.plan == "grid+local":
            fetch = tunable("auto_prefetch", [True, False])
        if axis1 is None and has_choice_of_second_axis(kernel, parallel_loops(kernel)):
            second = tunable("auto_axis1", ["inner", "outer"])
        if style is None:
            style = tunable("auto_style", ["grid", "outer"])
    if first.plan == "one-group" and group is None:
        group = tunable("auto_group", ["none", 128, 256])
        size = 128 if group == "none" else group
    if style == "outer":
        outcome = plan(t0, t1, fetch, size, ("outer",) + PLANS)
    elif style not in (None, "grid"):
        raise TransformError(f"auto: style is 'grid' or 'outer', not {style!r}")
    elif group == "none":
        outcome = plan(t0, t1, fetch, size,
                       ["grid+local", "grid", "grid-1d", "reduction", "sequential"])
    elif (t0, t1, fetch, size, second) != (32, 8, True, 128, "inner"):
        outcome = plan(t0, t1, fetch, size)
    else:
        outcome = first
    return outcome


def columns_plan(kernel, block, specialize=True, kcache=True, version="blocks", fuse=True):
    """The single-column mapping of *kernel* if it is a column-physics routine
    and the mapping passes the checks, else None (the reason printed)."""
    loops = horizontal_loops(kernel)
    if len(loops) < 2:
        return None
    try:
        out, fusion = scc_with_fusion(kernel, block=block, specialize=specialize,
                                      kcache=kcache, version=version, fuse=fuse)
        generate_code(out)
    except LoopyError as exc:
        reason = str(getattr(exc, "message", None) or exc).splitlines()[0]
        print(f"auto: kernel '{kernel.name}': scc refused: {reason}")
        return None
    private = sorted(n for n, t in out.temporaries.items()
                     if n in kernel.temporaries and kernel.temporaries[n].shape
                     and len(t.shape) < len(kernel.temporaries[n].shape))
    # the level temporaries k-caching replaced by their current level (named
    # n_k, or n_k_2... when taken), not those dead-store removal dropped
    made = [m for m in out.temporaries if m not in kernel.temporaries]
    cached = sorted(n for n in kernel.temporaries if n not in out.temporaries
                    and any(m == f"{n}_k" or (m.startswith(f"{n}_k_") and m[len(n) + 3:].isdigit())
                            for m in made))
    merged = [f"{x} into {t} ({how})" for x, t, how in fusion.merged]
    print(f"auto: kernel '{kernel.name}': plan scc, {len(loops)} horizontal loops "
          f"({', '.join(loops[:3])}{', ...' if len(loops) > 3 else ''}) -> "
          f"{loops[0]}_outer (g.0, blocks of {block}), {loops[0]}_inner (l.0)"
          + (f"; private column temporaries: {', '.join(private)}" if private else "")
          + (f"; level loops fused: {', '.join(merged)}" if merged else "")
          + (f"; levels cached: {', '.join(cached)}" if cached else "")
          + (f"; compiled per value of {', '.join(out.options.specialized)}"
             if out.options.specialized else ""))
    for _, _, reason in fusion.refused:
        print(f"auto: kernel '{kernel.name}': {reason}")
    return out
