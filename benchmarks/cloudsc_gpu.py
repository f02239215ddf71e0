#!/usr/bin/env python3
"""CLOUDSC on a GPU: f2loopy's translations against the dwarf's reference and CUDA.

The ECMWF CLOUDSC dwarf (public: ecmwf-ifs/dwarf-p-cloudsc; its code and data
are never part of this repository) ships the input and the reference output
of 100 columns (KLEV 137) as serialbox files (``data/input_*.dat``,
``data/reference_*.dat``: raw Fortran-order arrays, scalars in
``MetaData-input.json``).  This script

1. ``translate``: preprocesses the dwarf's ``cloudsc.F90`` as the compiler
   sees it and translates it with f2loopy's variants (``--transform auto``,
   ``--transform scc`` without demotion, ...), writing ``DIR/VARIANT/``;
2. ``run``: on the machine with the GPU, expands the input to NGPTOT columns
   as the dwarf does (column g is input column g mod 100), calls each
   variant's Python glue once on all columns (KIDIA=1, KFDIA=KLON=NGPTOT:
   the kernel's work-groups are the dwarf's NPROMA blocks), times the kernel
   alone (OpenCL profiling markers around each call; PLUDE, which the kernel
   updates, restored before each call and not timed), checks all 21 outputs
   against the reference expanded the same way with the dwarf's error
   measure (sum |x - ref| / sum |ref| per field), and prints the table;
   ``--cuda-results FILE`` adds the lines ``RESULT {...}`` of the dwarf's
   CUDA kernels (``shared/anchors/cloudsc_cuda``) measured in the same call.

usage:
  cloudsc_gpu.py translate --dwarf DWARF_CHECKOUT --out DIR [--variants auto,scc-nodemote]
  cloudsc_gpu.py run --data DWARF_DATA_DIR --kernels DIR [--ngptot 65536] [--niter 10]
                     [--block 128] [--cuda-results FILE] [--json OUT]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

NLON, NLEV, NCLV = 100, 137, 5
MODULES = ("parkind1", "yomphyder", "yoecldp", "yoephli", "yomcst", "yoethf")

#: the one fact the analysis needs: NSSOPT selects one of four supersaturation
#: schemes; for other values CLOUDSC assigns ZQE in none, and the value of the
#: previous column would flow into the next level's (a real dependence in the
#: Fortran, which auto reports); and NCLDTOP, the main loop's first level, is a
#: level (>= 1: CLOUDSC indexes level arrays with it), so that the main loop's
#: range lies inside the set-up loops' and the level loops fuse into one
ASSUME = "assume=YDECLDP_NSSOPT >= 0 and YDECLDP_NSSOPT <= 3 and YDECLDP_NCLDTOP >= 1"
#: only the fact the column mapping needs (NSSOPT selects a branch of an IF chain with no ELSE)
ASSUME_NSSOPT = "assume=YDECLDP_NSSOPT >= 0 and YDECLDP_NSSOPT <= 3"

#: variant -> (f2loopy translate options, description)
VARIANTS = {
    "auto": (["--transform", "auto", "-D", ASSUME],
             "f2loopy --transform auto -D assume=NSSOPT in 0..3, NCLDTOP >= 1 (no script; compiled per KLEV)"),
    "auto-nsonly": (["--transform", "auto", "-D", ASSUME_NSSOPT],
                    "f2loopy --transform auto -D assume=NSSOPT in 0..3 only (levels below "
                    "NCLDTOP peeled)"),
    "auto-vblocks": (["--transform", "auto", "-D", "version=blocks", "-D", ASSUME],
                     "f2loopy --transform auto -D version=blocks (the sort's body once per "
                     "species value)"),
    "auto-vblocks-nokc": (["--transform", "auto", "-D", "version=blocks", "-D", "kcache=false",
                           "-D", ASSUME],
                          "f2loopy --transform auto -D version=blocks -D kcache=false"),
    "auto-nospec": (["--transform", "auto", "-D", "specialize=false", "-D", ASSUME],
                    "f2loopy --transform auto -D specialize=false (level temporaries global)"),
    "auto-fixklev": (["--transform", "auto", "-D", "fix=KLEV=137", "-D", ASSUME],
                     "f2loopy --transform auto -D fix=KLEV=137 (column temporaries private)"),
    "auto-fixklev-b256": (["--transform", "auto", "-D", "fix=KLEV=137", "-D", "block=256",
                           "-D", ASSUME],
                          "f2loopy --transform auto -D fix=KLEV=137 -D block=256"),
    "auto-fixklev-b512": (["--transform", "auto", "-D", "fix=KLEV=137", "-D", "block=512",
                           "-D", ASSUME],
                          "f2loopy --transform auto -D fix=KLEV=137 -D block=512 (at most 128 "
                          "registers)"),
    "scc-nodemote": (["--transform", "scc", "-D", "demote=false", "-D", ASSUME],
                     "f2loopy --transform scc, temporaries not demoted"),
    "auto-b64": (["--transform", "auto", "-D", "block=64", "-D", ASSUME],
                 "f2loopy --transform auto -D block=64"),
    "auto-b256": (["--transform", "auto", "-D", "block=256", "-D", ASSUME],
                  "f2loopy --transform auto -D block=256"),
}

OUTPUTS = ["PLUDE", "PCOVPTOT", "PRAINFRAC_TOPRFZ", "PFSQLF", "PFSQIF", "PFCQNNG", "PFCQLNG",
           "PFSQRF", "PFSQSF", "PFCQRNG", "PFCQSNG", "PFSQLTUR", "PFSQITUR", "PFPLSL",
           "PFPLSN", "PFHPSL", "PFHPSN", "TENDENCY_LOC_T", "TENDENCY_LOC_Q",
           "TENDENCY_LOC_A", "TENDENCY_LOC_CLD"]

#: the stand-in for the dwarf's loader module (its procedures are never called)
FILE_IO_STUB = """module file_io_mod
  implicit none
contains
  subroutine load_scalar(name, x)
    character(*), intent(in) :: name
    real(8), intent(inout) :: x
  end subroutine load_scalar
  subroutine load_array(name, x)
    character(*), intent(in) :: name
    real(8), intent(inout) :: x(:)
  end subroutine load_array
end module file_io_mod
"""

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


# {{{ translate

def translate(dwarf: Path, out: Path, variants: list[str]) -> None:
    src = dwarf / "src"
    pre = out / "pre"
    mods = out / "mods"
    pre.mkdir(parents=True, exist_ok=True)
    mods.mkdir(exist_ok=True)
    subprocess.run(["gfortran", "-E", "-cpp", "-P", "-I", str(src / "common/include"),
                    str(src / "cloudsc_fortran/cloudsc.F90"), "-o", str(pre / "cloudsc.F90")],
                   check=True)
    for m in MODULES:
        subprocess.run(["gfortran", "-E", "-cpp", "-P", str(src / f"common/module/{m}.F90"),
                        "-o", str(mods / f"{m}.F90")], check=True)
    # the modules `use FILE_IO_MOD` (the dwarf's serialbox/HDF5 loader, which
    # CLOUDSC never calls; every `use` must resolve): a stand-in of our own
    (mods / "file_io_mod.F90").write_text(FILE_IO_STUB)
    env = dict(os.environ, PYTHONHASHSEED="0")
    # the recipe runs in the sandbox, whose default limits suit small files
    env.setdefault("F2LOOPY_SCRIPT_CPU_LIMIT", "3600")
    env.setdefault("F2LOOPY_SCRIPT_WALL_LIMIT", "3600")
    for v in variants:
        opts, _ = VARIANTS[v]
        dest = out / v
        dest.mkdir(exist_ok=True)
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable, "-m", "f2loopy.cli", "translate", *opts,
                              "-I", str(mods), "-o", str(dest), str(pre / "cloudsc.F90")],
                             env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        print(res.stdout + res.stderr, end="")
        if res.returncode != 0:
            raise SystemExit(f"translation of variant {v} failed")
        (dest / "translate_seconds.txt").write_text(f"{wall:.1f}\n")
        print(f"{v}: translated in {wall:.1f} s")

# }}}


# {{{ data

def _meta(data: Path) -> dict:
    meta = json.loads((data / "MetaData-input.json").read_text())
    return {k: v["value"] for k, v in meta["global_meta_info"].items()}


def _field(data: Path, prefix: str, name: str, dims, dtype, ngptot: int, first: int = 0):
    """A dwarf field (Fortran order, NLON columns first), its columns
    repeated to *ngptot* (column g is column g mod NLON), starting at global
    column *first* (a rank's share of a larger problem)."""
    import numpy as np
    raw = np.fromfile(data / f"{prefix}_{name}.dat", dtype=dtype)
    arr = raw.reshape(dims, order="F")
    cols = (first + np.arange(ngptot)) % NLON
    return np.asfortranarray(arr[cols, ...])


def _objects(meta: dict, data: Path):
    import numpy as np
    cst = SimpleNamespace(**{k: float(meta[k]) for k in (
        "RG", "RD", "RCPD", "RETV", "RLVTT", "RLSTT", "RLMLT", "RTT", "RV")})
    thf = SimpleNamespace(**{k: float(meta[k]) for k in (
        "R2ES", "R3LES", "R3IES", "R4LES", "R4IES", "R5LES", "R5IES", "R5ALVCP", "R5ALSCP",
        "RALVDCP", "RALSDCP", "RALFDCP", "RTWAT", "RTICE", "RTICECU", "RTWAT_RTICE_R",
        "RTWAT_RTICECU_R", "RKOOP1", "RKOOP2")})
    ecldp = SimpleNamespace()
    for k, v in meta.items():
        if k.startswith("YRECLDP_"):
            setattr(ecldp, k[len("YRECLDP_"):], v)
    for name in ("RBETA", "RBETAP1"):
        setattr(ecldp, name, np.fromfile(data / f"input_YRECLDP_{name}.dat", dtype=np.float64))
    return cst, thf, ecldp

# }}}


# {{{ run

def _load_glue(path: Path):
    spec = importlib.util.spec_from_file_location(f"cloudsc_cl_{path.parent.name}", path)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def _error(got, ref) -> tuple[float, float]:
    import numpy as np
    d = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    errsum, total = float(d.sum()), float(np.abs(ref).sum())
    if np.isnan(got).any():
        errsum = float("inf")
    eps = 2.220446049250313e-16
    rel = 0.0 if errsum < eps else (errsum / (1 + total) if total < eps else errsum / total)
    return rel, float(d.max()) if d.size else 0.0


def run_variant(glue, queue, data: Path, meta: dict, ngptot: int, niter: int, *,
                first: int = 0, barrier=None, pipelined: int = 0) -> dict:
    """Time CLOUDSC of *glue* on *ngptot* columns (global columns *first*
    onwards) and check its outputs.  *barrier(phase)*: called after the two
    warm-up calls, before the timed ones (phase "timed"), and before the
    pipelined ones (phase "pipelined"): processes that start together.

    Each timed call waits for the one before: its time (OpenCL markers
    around the glue call, PLUDE's restore outside) includes the glue's host
    work, during which the device idles.  With *pipelined* > 0, that many
    more calls follow with at most two in flight (the next call's host work
    overlaps the device's work, as in a model's time loop): their time per
    call is the span from the end of the first to the end of the last over
    the calls after the first, PLUDE's restore (a copy on the device) included."""
    import numpy as np
    import pyopencl as cl
    import pyopencl.array as cla
    started = time.perf_counter()
    f = lambda name, dims, dt=np.float64: _field(data, "input", name, dims, dt, ngptot, first)
    k2, k2h, k3 = (NLON, NLEV), (NLON, NLEV + 1), (NLON, NLEV, NCLV)
    ins = {n: f(n, k2) for n in ("PT", "PQ", "PVFA", "PVFL", "PVFI", "PDYNA", "PDYNL", "PDYNI",
                                  "PHRSW", "PHRLW", "PVERVEL", "PAP", "PLU", "PLUDE", "PSNDE",
                                  "PMFU", "PMFD", "PA", "PSUPSAT", "PLCRIT_AER", "PICRIT_AER",
                                  "PRE_ICE", "PCCN", "PNICE", "TENDENCY_TMP_T",
                                  "TENDENCY_TMP_Q", "TENDENCY_TMP_A")}
    ins["PAPH"] = f("PAPH", k2h)
    ins["PCLV"] = f("PCLV", k3)
    ins["TENDENCY_TMP_CLD"] = f("TENDENCY_TMP_CLD", k3)
    ins["PLSM"] = f("PLSM", (NLON,))
    # logical arrays are 4-byte integers on the device (the glue's convention)
    ins["LDCUM"] = f("LDCUM", (NLON,), np.bool_).astype(np.int32, order="F")
    ins["KTYPE"] = f("KTYPE", (NLON,), np.int32)
    dev = {n: cla.to_device(queue, a) for n, a in ins.items()}
    plude0 = dev["PLUDE"].copy()

    def zeros(shape):
        return cla.zeros(queue, shape, np.float64, order="F")
    outs = {n: zeros((ngptot, NLEV)) for n in ("TENDENCY_LOC_T", "TENDENCY_LOC_Q",
                                                "TENDENCY_LOC_A", "PCOVPTOT")}
    outs["TENDENCY_LOC_CLD"] = zeros((ngptot, NLEV, NCLV))
    outs["PRAINFRAC_TOPRFZ"] = zeros((ngptot,))
    for n in OUTPUTS[3:17]:
        outs[n] = zeros((ngptot, NLEV + 1))
    cst, thf, ecldp = _objects(meta, data)
    args = [1, ngptot, ngptot, NLEV, float(meta["PTSPHY"]),
            dev["PT"], dev["PQ"], dev["TENDENCY_TMP_T"], dev["TENDENCY_TMP_Q"],
            dev["TENDENCY_TMP_A"], dev["TENDENCY_TMP_CLD"], outs["TENDENCY_LOC_T"],
            outs["TENDENCY_LOC_Q"], outs["TENDENCY_LOC_A"], outs["TENDENCY_LOC_CLD"],
            dev["PVFA"], dev["PVFL"], dev["PVFI"], dev["PDYNA"], dev["PDYNL"], dev["PDYNI"],
            dev["PHRSW"], dev["PHRLW"], dev["PVERVEL"], dev["PAP"], dev["PAPH"], dev["PLSM"],
            dev["LDCUM"], dev["KTYPE"], dev["PLU"], dev["PLUDE"], dev["PSNDE"], dev["PMFU"],
            dev["PMFD"], dev["PA"], dev["PCLV"], dev["PSUPSAT"], dev["PLCRIT_AER"],
            dev["PICRIT_AER"], dev["PRE_ICE"], dev["PCCN"], dev["PNICE"], outs["PCOVPTOT"],
            outs["PRAINFRAC_TOPRFZ"]] + [outs[n] for n in OUTPUTS[3:17]] + \
        [int(meta["KFLDX"]), cst, thf, ecldp]
    queue.finish()
    prepare_s = time.perf_counter() - started
    times, host = [], []
    t_start = 0.0
    first_call_s = 0.0
    for it in range(niter + 2):
        if it == 2:
            queue.finish()
            if barrier is not None:
                barrier("timed")
            t_start = time.time()
        cl.enqueue_copy(queue, dev["PLUDE"].data, plude0.data)
        e0 = cl.enqueue_marker(queue)
        h0 = time.perf_counter()
        glue.CLOUDSC(*args, queue=queue)
        h1 = time.perf_counter()
        e1 = cl.enqueue_marker(queue)
        e1.wait()
        if it == 0:       # the program's build (or its cache) and the first run
            first_call_s = time.perf_counter() - h0
        if it >= 2:
            times.append((e1.profile.end - e0.profile.end) * 1e-6)
            host.append((h1 - h0) * 1e3)
    queue.finish()
    t_end = time.time()
    pipe_ms, pipe_start, pipe_end = None, 0.0, 0.0
    if pipelined > 0:
        if barrier is not None:
            barrier("pipelined")
        pipe_start = time.time()
        ends = []
        for it in range(pipelined + 1):
            cl.enqueue_copy(queue, dev["PLUDE"].data, plude0.data)
            glue.CLOUDSC(*args, queue=queue)
            ends.append(cl.enqueue_marker(queue))
            if len(ends) > 2:
                ends[-3].wait()
        ends[-1].wait()
        pipe_end = time.time()
        pipe_ms = (ends[-1].profile.end - ends[0].profile.end) * 1e-6 / pipelined
    # one more call timed on the host, as a check of the markers
    cl.enqueue_copy(queue, dev["PLUDE"].data, plude0.data)
    queue.finish()
    t0 = time.perf_counter()
    glue.CLOUDSC(*args, queue=queue)
    queue.finish()
    wall = (time.perf_counter() - t0) * 1e3
    result = {"median_ms": sorted(times)[len(times) // 2], "min_ms": min(times),
              "wall_ms": wall, "times_ms": times, "t_start": t_start, "t_end": t_end,
              "host_ms": sorted(host)[len(host) // 2], "prepare_s": prepare_s,
              "first_call_s": first_call_s, "pipelined_ms": pipe_ms,
              "pipelined_start": pipe_start, "pipelined_end": pipe_end, "fields": {}}
    got = dict(outs)
    got["PLUDE"] = dev["PLUDE"]
    for n in OUTPUTS:
        ref_dims = {"PLUDE": k2, "PCOVPTOT": k2, "PRAINFRAC_TOPRFZ": (NLON,),
                    "TENDENCY_LOC_T": k2, "TENDENCY_LOC_Q": k2, "TENDENCY_LOC_A": k2,
                    "TENDENCY_LOC_CLD": k3}.get(n, k2h)
        ref = _field(data, "reference", n, ref_dims, np.float64, ngptot, first)
        result["fields"][n] = _error(got[n].get(), ref)
    return result


def main_run(a) -> None:
    import pyopencl as cl
    data, kernels = Path(a.data), Path(a.kernels)
    meta = _meta(data)
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    print(f"device: {queue.device.name}; NGPTOT {a.ngptot}, KLEV {NLEV}, double")
    rows = []
    cuda = {}
    if a.cuda_results:
        for line in Path(a.cuda_results).read_text().splitlines():
            if line.startswith("RESULT "):
                r = json.loads(line[len("RESULT "):])
                cuda[r["kernel"]] = r
    for name, r in cuda.items():
        bad = [f for f, v in r.get("fields", {}).items() if v[0] > a.tolerance]
        rows.append((f"dwarf CUDA {name}", r["median_ms"], not bad))
    results = {}
    for v in sorted(p.name for p in kernels.iterdir() if (p / "cloudsc_cl.py").exists()):
        if not _NAME.fullmatch(v):
            continue
        glue = _load_glue(kernels / v / "cloudsc_cl.py")
        try:
            r = run_variant(glue, queue, data, meta, a.ngptot, a.niter)
        except Exception as exc:   # report and go on with the other variants
            print(f"{v}: failed: {type(exc).__name__}: {str(exc)[:500]}")
            continue
        results[v] = r
        worst = max(r["fields"].items(), key=lambda kv: kv[1][0])
        ok = worst[1][0] <= a.tolerance
        print(f"{v}: median {r['median_ms']:.3f} ms (min {r['min_ms']:.3f}, one call on the host "
              f"{r['wall_ms']:.3f} ms); worst field {worst[0]} rel {worst[1][0]:.2e} "
              f"max {worst[1][1]:.2e}; {'all 21 match' if ok else 'MISMATCH'}")
        seconds = kernels / v / "translate_seconds.txt"
        took = seconds.read_text().strip() if seconds.is_file() else ""
        took = f" (translated in {took} s)" if re.fullmatch(r"[0-9]{1,6}\.[0-9]", took) else ""
        rows.append((VARIANTS.get(v, (None, v))[1] + took, r["median_ms"], ok))
    best = min((ms for n, ms, ok in rows if n.startswith("dwarf") and ok), default=None)
    scc = next((ms for n, ms, ok in rows if "cloudsc_c (SCC)" in n), None)
    print()
    print("| variant | ms | vs the dwarf's best correct CUDA | vs cloudsc_c (SCC) | outputs |")
    print("|---|---|---|---|---|")
    for n, ms, ok in rows:
        r1 = f"{ms / best:.2f}" if best else "-"
        r2 = f"{ms / scc:.2f}" if scc else "-"
        print(f"| {n} | {ms:.2f} | {r1} | {r2} | {'21/21 match' if ok else 'mismatch'} |")
    if a.json:
        Path(a.json).write_text(json.dumps({"cuda": cuda, "f2loopy": results}, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("translate")
    t.add_argument("--dwarf", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--variants", default="auto,scc-nodemote")
    r = sub.add_parser("run")
    r.add_argument("--data", required=True)
    r.add_argument("--kernels", required=True)
    r.add_argument("--ngptot", type=int, default=65536)
    r.add_argument("--niter", type=int, default=10)
    r.add_argument("--tolerance", type=float, default=1e-9)
    r.add_argument("--cuda-results")
    r.add_argument("--json")
    a = ap.parse_args()
    if a.cmd == "translate":
        names = [v for v in a.variants.split(",") if v]
        unknown = [v for v in names if v not in VARIANTS]
        if unknown:
            raise SystemExit(f"unknown variant {unknown[0]!r} (known: {', '.join(VARIANTS)})")
        if shutil.which("gfortran") is None:
            raise SystemExit("gfortran is needed to preprocess cloudsc.F90")
        translate(Path(a.dwarf), Path(a.out), names)
    else:
        main_run(a)


if __name__ == "__main__":
    main()
