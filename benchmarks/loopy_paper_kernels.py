"""loopy's own kernels for the paper sample's script, for a side-by-side timing.

Runs the ``!$loopy begin`` script of ``samples/numa_volume/volume.f90`` under
the real loopy (2025.2 was used; it is not a dependency of f2loopy: install it
into a separate folder and put that on ``PYTHONPATH`` for this script only),
records each ``checkpoint(label)``, and writes for the chosen levels loopy's
OpenCL code, the kernel's parameters in order (name, dtype, byte size for the
given sizes) and its launch geometry, as JSON.  ``benchmarks/paper_gpu.py``
times those kernels beside f2loopy's on the same buffers.  Nothing of loopy is
imported by f2loopy or its tests.

Three names of the paper's 2015 API that loopy 2025.2 no longer has are mapped
to their successors (``set_loop_priority`` -> ``prioritize_loops``,
``tag_data_axes`` -> ``tag_array_axes``, ``set_array_dim_names`` ->
``set_array_axis_names``), loopy's check that accesses are ordered is
switched off (the script asks for ``auto_dependencies=False``), the storage
that ``alias_temporaries`` shares is allocated
(``allocate_temporaries_for_base_storage``), and the D prefetch is put inside
the element loop ``e`` (``add_inames_to_insn``) and its two loops on the
work-group's two axes (loopy 2025 refuses an instruction outside a
work-group or work-item axis; f2loopy does the same itself); and loopy's
``parse_fortran`` (which returns one
translation unit) is wrapped to return the kernels in file order, as the
script's ``f_r, f_s = parse_fortran(...)`` expects.  Run (hash seed fixed, as
``f2loopy translate`` does: the script iterates over a set)::

    PYTHONHASHSEED=0 PYTHONPATH=/path/to/loopy-2025.2 python3 benchmarks/loopy_paper_kernels.py \\
        -D Nq=8 --size Ne=6910 --levels "level 1" "level 5" "level 7" "level 8" -o loopy.json
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

PAPER = Path(__file__).resolve().parent.parent / "samples" / "numa_volume" / "volume.f90"


def script_of(text: str) -> str:
    m = re.search(r"^!\$loopy begin[ \t]*\n(.*?)^!\$loopy end", text, re.MULTILINE | re.DOTALL)
    if m is None:
        raise SystemExit("no !$loopy begin ... !$loopy end block")
    return "\n".join(line[2:] if line.startswith("! ") else line[1:]
                     for line in m.group(1).splitlines())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", default=str(PAPER))
    ap.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=INT")
    ap.add_argument("--size", action="append", default=[], metavar="NAME=INT")
    ap.add_argument("--levels", nargs="*", default=["level 1", "level 5", "level 7", "level 8"])
    ap.add_argument("-o", "--output", required=True)
    opts = ap.parse_args(argv)
    import loopy as lp
    from pymbolic import evaluate

    defines = {k: int(v) for k, v in (d.split("=", 1) for d in opts.defines)}
    sizes = {k: int(v) for k, v in (d.split("=", 1) for d in opts.size)}
    text = Path(opts.file).read_text()
    original_parse = lp.parse_fortran

    def parse_fortran(source, filename="<floopy code>", **kwargs):
        tu = original_parse(source, filename, **kwargs)
        order = [m.group(1) for m in re.finditer(r"^\s*subroutine\s+(\w+)", source, re.MULTILINE | re.IGNORECASE)]
        names = [n for n in order if n in tu.callables_table]
        return [tu[n] for n in names]

    lp.parse_fortran = parse_fortran
    for old, new in [("set_loop_priority", "prioritize_loops"),
                     ("tag_data_axes", "tag_array_axes"),
                     ("set_array_dim_names", "set_array_axis_names")]:
        if not hasattr(lp, old):
            setattr(lp, old, getattr(lp, new))
            lp.__all__ = [*lp.__all__, old]
    checkpoints = {}
    g: dict = {}

    def checkpoint(label):
        checkpoints[label] = g["f"]

    g.update(SOURCE=text, FILENAME=opts.file, checkpoint=checkpoint, **defines)
    exec(compile(script_of(text), opts.file, "exec"), g)  # noqa: S102 - the sample's own script

    out = {"loopy_version": ".".join(str(x) for x in lp.VERSION), "file": Path(opts.file).name,
           "defines": defines, "sizes": sizes, "levels": {}}
    for label in opts.levels:
        # the script parses with auto_dependencies=False, so loopy's check that
        # every two accesses of rhsq are ordered fails; the r and s updates of
        # one rhsq element run in the same work-item either way (paper_gpu.py
        # compares the results with f2loopy's)
        tu = lp.set_options(checkpoints[label], enforce_variable_access_ordered="no_check")
        # loopy 2025 no longer allocates the storage alias_temporaries shares
        # loopy 2025 wants every instruction inside every work-group axis: the
        # D prefetch (the same for all elements) is made per element, as the
        # paper's loopy did implicitly
        knl0 = tu.default_entrypoint
        if any("D_fetch" in insn.assignee_var_names() for insn in knl0.instructions):
            tu = lp.add_inames_to_insn(tu, "e", "writes:D_fetch")
            if not knl0.iname_tags("D_dim_0"):
                tu = lp.tag_inames(tu, "D_dim_0:l.0, D_dim_1:l.1")
        tu = lp.allocate_temporaries_for_base_storage(lp.preprocess_kernel(tu))
        notes = []
        for _ in range(4):
            try:
                code = lp.generate_code_v2(tu).device_code()
                break
            except lp.LoopyError as exc:
                # loopy 2025 cannot index a vector axis with a loop that is not
                # unrolled (level 7 leaves the q prefetch's field loop plain,
                # level 8 tags it vec): unroll it, as the message suggests
                m = re.search(r"want to unroll the iname\(s\) '(\w+)'", str(exc))
                if m is None:
                    raise
                iname = m.group(1)
                from loopy.kernel.data import VectorizeTag
                k = tu.default_entrypoint
                if any(isinstance(t, VectorizeTag) for t in k.iname_tags(iname)):
                    tu = tu.with_kernel(lp.untag_inames(k, iname, VectorizeTag))
                tu = lp.tag_inames(tu, f"{iname}:unr")
                notes.append(f"{iname}: unr (loopy could not index the vector axis otherwise)")
        knl = tu.default_entrypoint
        gsize, lsize = knl.get_grid_size_upper_bounds_as_exprs(tu.callables_table)
        values = {**sizes, **defines}
        lsize = [int(evaluate(x, values)) for x in lsize]
        groups = [int(evaluate(x, values)) for x in gsize]
        dims = max(len(lsize), len(groups))
        lsize += [1] * (dims - len(lsize))
        groups += [1] * (dims - len(groups))
        sig = re.search(r"__kernel\s+void\s+(?:__attribute__\s*\(\(.*?\)\)\s*)?(\w+)\s*\((.*?)\)",
                        code, re.DOTALL)
        params = [re.findall(r"(\w+)\s*$", p.strip())[0] for p in sig.group(2).split(",")]
        by_name = {a.name: a for a in knl.args}
        args = []
        for name in params:
            a = by_name[name]
            dtype = a.dtype.numpy_dtype
            if isinstance(a, lp.ArrayArg):
                shape = [int(evaluate(s, values)) for s in a.shape]
                args.append({"name": name, "kind": "array", "dtype": dtype.str,
                             "nbytes": math.prod(shape) * dtype.itemsize})
            else:
                args.append({"name": name, "kind": "scalar", "dtype": dtype.str,
                             "value": values.get(name)})
        out["levels"][label] = {"name": sig.group(1), "source": code, "args": args,
                                "notes": notes,
                                "global_size": [g_ * l for g_, l in zip(groups, lsize, strict=True)],
                                "local_size": lsize}
    Path(opts.output).write_text(json.dumps(out, indent=1))
    print(f"wrote {opts.output}: {', '.join(out['levels'])} (loopy {out['loopy_version']})",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
