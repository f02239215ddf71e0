"""scc: one column per work-item for column-physics routines (single-column mapping).

For every kernel of the file (see ``f2loopy.transform.scc`` for the exact
rules): the horizontal loops (``DO JL = KIDIA, KFDIA`` and array syntax over
the same range) become one loop index, split into work-groups of *block*
columns (``g.0``) and one work-item per column (``l.0``); vertical and
species loops run sequentially inside each work-item.  Each horizontal loop
must carry no dependence (per-column scalars, also those assigned under
conditions, are private; the error names the loop, the variable and the line
where a value would cross columns).  Temporaries that each column uses only
in its own part and whose other extents are constants (``ZTMP(KLON, 5)``)
become private arrays of each work-item.

Options:

``index``
    The horizontal loop index (``"JL"``; also matches the frontend's
    ``JL_1``, ``JL_2``... for further loops of that index).  Default: found
    from the bounds.
``start``, ``end``
    The names of the horizontal bounds (``KIDIA``, ``KFDIA``; both or
    neither).  Default: the largest group of loops whose bounds are both
    scalar arguments.
``block``
    Columns per work-group (default 128).
``demote``
    Turn column temporaries into private variables (default True).
``assume``
    Facts about the scalar arguments that the analysis may use, in isl's
    syntax (``"NSSOPT >= 0 and NSSOPT <= 3"``): a branch that no allowed
    value takes then needs no assignment.
``fix``
    Integer scalar arguments fixed at translation time, ``"KLEV=137"`` or
    ``"KLEV=137, NCLV=5"`` (``-D fix=KLEV=137``; ``fix_parameters``): column
    temporaries dimensioned by them (``ZTMP(KLON, KLEV)``) then have constant
    other extents and become private arrays.  The glue still takes the
    arguments and refuses other values.
``kcache``
    Keep each private level temporary that one vertical loop alone uses,
    every iteration at its own level and the one above, as two values (the
    current and the previous level) instead of an array over all levels
    (k-caching, ``f2loopy.transform.kcache``; default True).
``fuse``
    Merge the level loops inside the columns into one where the dependences
    allow (``f2loopy.transform.level_fusion``; default True).
``version``
    Version code that indexes a small private array with a run-time value
    (``ZSOLQA(JO, JN)`` with ``JO = IORDER(JM)``, a species chosen by a sort)
    so that every subscript is a constant once constant loops are unrolled
    and the array can stay in registers: ``blocks`` copies the body of the
    loop around such statements once per value of the key, each copy one
    block under one test (``f2loopy.transform.block_versioning``), then each
    remaining statement; ``statements`` (or ``true``) copies each statement
    alone under ``JO == value`` (``f2loopy.transform.versioning``); ``false``
    versions nothing.  Default ``blocks``.
``specialize``
    Compile the kernel per value of the integer arguments that the other
    extents of column temporaries are made of (``ZTMP(KLON, KLEV)``; default
    True): those temporaries become private arrays of each work-item without
    fixing ``KLEV``; the Python and Fortran glues build and cache one program
    per value, the first time they are called with it (runtime
    specialisation).  ``-D specialize=false`` keeps them global buffers.

From the command line::

    f2loopy translate --transform scc -D index=JL -D block=64 cloudsc.F90
    f2loopy translate --transform scc -D fix=KLEV=137 cloudsc.F90
"""

from loopy import (
    TransformError, assume as assume_facts, fix_parameters, horizontal_loops,
    parse_fixed_values, scc)

OPTIONS = {"index": None, "start": None, "end": None, "block": 128, "demote": True,
           "assume": None, "fix": None, "specialize": True,
           "kcache": True, "version": "blocks", "fuse": True}
OPTION_TYPES = {"index": "name", "start": "name", "end": "name",
                "block": "positive integer", "demote": "boolean", "assume": "text",
                "fix": "text", "specialize": "boolean", "kcache": "boolean",
                "version": ("boolean", "blocks", "statements"), "fuse": "boolean"}


def transform(kernel, index=None, start=None, end=None, block=128, demote=True, assume=None,
              fix=None, specialize=True, kcache=True, version="blocks", fuse=True):
    if (start is None) != (end is None):
        raise TransformError("scc: give both start and end, or neither")
    bounds = None if start is None else (start, end)
    if assume is not None:
        if not isinstance(assume, str):
            raise TransformError(f"scc: assume is a condition (text), not {assume!r}")
        kernel = assume_facts(kernel, assume)
    if fix is not None:
        kernel = fix_parameters(kernel, **parse_fixed_values(fix, who="scc: fix"))
    loops = horizontal_loops(kernel, index=index, bounds=bounds)
    out = scc(kernel, index=index, bounds=bounds, block=block, demote=demote,
              specialize=specialize, kcache=kcache, version=version, fuse=fuse)
    print(f"scc: kernel '{kernel.name}': {len(loops)} horizontal "
          f"loop{'s' if len(loops) > 1 else ''} -> "
          f"{loops[0]}_outer (g.0, blocks of {block}), {loops[0]}_inner (l.0)")
    return out
