#!/usr/bin/env python3
"""K-caching on a GPU: a column kernel with level recurrences, translated by
``--transform auto`` with and without k-caching, timed in the same run.

The kernel (Fortran of our own, in the style of a cloud scheme's level loop):
one vertical loop (two horizontal loops inside, so that auto takes the
single-column plan) computes six level temporaries per column (temperature,
density, saturation, cloud fraction, five species, a flux carried
downwards) and reads each at its own level and the level above.  With
``-D kcache=false`` they are private arrays over all levels (local memory on
a GPU); with k-caching (the default) each is two private values (or two
arrays of the five species).  Both translations run on the same inputs; the
table gives the median kernel time (OpenCL profiling markers around the
glue call), the ratio to the uncached kernel, and the largest relative
difference between the two kernels' outputs.

usage:
  kcache_gpu.py translate --out DIR
  kcache_gpu.py run --kernels DIR [--ngptot 65536] [--klev 137] [--niter 20] [--json OUT]
  kcache_gpu.py run --translate --kernels DIR ...   (translate into DIR first)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

SOURCE = """\
subroutine kc_column(klon, klev, kidia, kfdia, pt, pq, pap, paph, ptend_t, ptend_q, pflux)
  implicit none
  integer, parameter :: nclv = 5
  integer, intent(in) :: klon, klev, kidia, kfdia
  double precision, intent(in) :: pt(klon, klev), pq(klon, klev, nclv), pap(klon, klev)
  double precision, intent(in) :: paph(klon, klev + 1)
  double precision, intent(out) :: ptend_t(klon, klev), ptend_q(klon, klev, nclv)
  double precision, intent(out) :: pflux(klon, klev)
  double precision :: ztp1(klon, klev), zrho(klon, klev), zqs(klon, klev), za(klon, klev)
  double precision :: zqx(klon, klev, nclv), zflx(klon, klev), zdp
  integer :: jk, jl, jm

  do jk = 1, klev
    do jl = kidia, kfdia
      ztp1(jl, jk) = pt(jl, jk) + 0.1d0
      zrho(jl, jk) = pap(jl, jk) / (287.0d0 * ztp1(jl, jk))
      zqs(jl, jk) = 611.2d0 * exp(17.67d0 * (ztp1(jl, jk) - 273.15d0) &
                    / (ztp1(jl, jk) - 29.65d0)) / pap(jl, jk)
      za(jl, jk) = min(1.0d0, max(0.0d0, pq(jl, jk, 1) / zqs(jl, jk)))
    end do
    do jl = kidia, kfdia
      do jm = 1, nclv
        zqx(jl, jk, jm) = pq(jl, jk, jm)
        if (jk > 1) zqx(jl, jk, jm) = zqx(jl, jk, jm) + 0.3d0 * za(jl, jk - 1) * zqx(jl, jk - 1, jm)
      end do
      if (jk > 1) then
        zdp = paph(jl, jk + 1) - paph(jl, jk)
        zflx(jl, jk) = zflx(jl, jk - 1) + zdp * (zqx(jl, jk, 2) - zqx(jl, jk - 1, 2)) &
                       * zrho(jl, jk - 1) * 1.0d-3
        ptend_t(jl, jk) = (ztp1(jl, jk) - ztp1(jl, jk - 1)) * zflx(jl, jk) &
                          + za(jl, jk) - za(jl, jk - 1) + zqs(jl, jk - 1)
      else
        zflx(jl, jk) = 0.0d0
        ptend_t(jl, jk) = za(jl, jk)
      end if
      do jm = 1, nclv
        ptend_q(jl, jk, jm) = zqx(jl, jk, jm) * zqs(jl, jk) + zrho(jl, jk)
      end do
      pflux(jl, jk) = zflx(jl, jk)
    end do
  end do
end subroutine kc_column
"""

VARIANTS = {"cached": [], "uncached": ["-D", "kcache=false"]}


def translate(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    src = out / "kc_column.f90"
    src.write_text(SOURCE)
    for name, extra in VARIANTS.items():
        res = subprocess.run([sys.executable, "-m", "f2loopy.cli", "translate", "--transform",
                              "auto", *extra, "-o", str(out / name), str(src)],
                             capture_output=True, text=True)
        print(res.stdout + res.stderr, end="")
        if res.returncode != 0:
            raise SystemExit(f"translation of variant {name} failed")


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(f"kc_column_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def run(kernels: Path, ngptot: int, klev: int, niter: int, json_out: Path | None) -> None:
    import numpy as np
    import pyopencl as cl
    import pyopencl.array as cla
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    rng = np.random.default_rng(0)
    nclv = 5
    host = {"pt": 200.0 + 100.0 * rng.random((ngptot, klev)),
            "pq": 1e-3 * rng.random((ngptot, klev, nclv)),
            "pap": 1e4 + 9e4 * rng.random((ngptot, klev)),
            "paph": np.cumsum(1e3 * rng.random((ngptot, klev + 1)), axis=1)}
    dev = {n: cla.to_device(queue, np.asfortranarray(a)) for n, a in host.items()}
    rows, results, outputs = [], {}, {}
    for name in VARIANTS:
        glue = _load(kernels / name / "kc_column_cl.py", name)
        outs = {"ptend_t": cla.zeros(queue, (ngptot, klev), np.float64, order="F"),
                "ptend_q": cla.zeros(queue, (ngptot, klev, nclv), np.float64, order="F"),
                "pflux": cla.zeros(queue, (ngptot, klev), np.float64, order="F")}
        args = [ngptot, klev, 1, ngptot, dev["pt"], dev["pq"], dev["pap"], dev["paph"],
                outs["ptend_t"], outs["ptend_q"], outs["pflux"]]
        times = []
        for it in range(niter + 2):
            e0 = cl.enqueue_marker(queue)
            glue.kc_column(*args, queue=queue)
            e1 = cl.enqueue_marker(queue)
            e1.wait()
            if it >= 2:
                times.append((e1.profile.end - e0.profile.end) * 1e-6)
        queue.finish()
        outputs[name] = {n: a.get() for n, a in outs.items()}
        results[name] = {"median_ms": sorted(times)[len(times) // 2], "times_ms": times}
    base = results["uncached"]["median_ms"]
    diff = max(float(np.max(np.abs(outputs["cached"][n] - outputs["uncached"][n])
                            / np.maximum(np.abs(outputs["uncached"][n]), 1e-300)))
               for n in outputs["cached"])
    for name in VARIANTS:
        ms = results[name]["median_ms"]
        rows.append(f"| {name} | {ms:.3f} | {ms / base:.2f} |")
    print(f"device: {queue.device.name}; NGPTOT {ngptot}, KLEV {klev}, median of {niter}")
    print("| kernel (--transform auto) | ms | vs uncached |\n|---|---|---|")
    print("\n".join(rows))
    print(f"largest relative difference between the two kernels' outputs: {diff:.3g}")
    if json_out is not None:
        json_out.write_text(json.dumps({"device": queue.device.name, "ngptot": ngptot,
                                        "klev": klev, "results": results, "max_rel_diff": diff},
                                       indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("translate")
    t.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("run")
    r.add_argument("--kernels", type=Path, required=True)
    r.add_argument("--ngptot", type=int, default=65536)
    r.add_argument("--klev", type=int, default=137)
    r.add_argument("--niter", type=int, default=20)
    r.add_argument("--json", type=Path)
    r.add_argument("--translate", action="store_true",
                   help="translate both variants into --kernels first")
    a = ap.parse_args()
    if a.cmd == "translate":
        translate(a.out)
    else:
        if a.translate:
            translate(a.kernels)
        run(a.kernels, a.ngptot, a.klev, a.niter, a.json)


if __name__ == "__main__":
    main()
