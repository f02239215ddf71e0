"""Every sample translates and reproduces gfortran's results."""

from pathlib import Path

import numpy as np
import pytest

from util import farray, needs_gfortran, run_both

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _euler_args():
    ne, npts = 5, 4
    q = farray((npts, 3, ne), seed=1, low=0.5, high=2.0)
    return [ne, npts, np.float32(1.4), farray((npts, npts), seed=2), farray((npts, ne), seed=3),
            q, farray((npts, 3, ne), seed=4)]


def _jacobi_args():
    nx, ny = 6, 5
    return [nx, ny, 0.1, farray((nx, ny), np.float64, seed=5),
            farray((nx + 2, ny + 2), np.float64, seed=6),
            np.zeros((nx + 2, ny + 2), np.float64, order="F"), 0.0]


def _tridiag_args():
    n, m = 12, 5
    return [n, m, farray((n, m), np.float64, seed=7), farray((n, m), np.float64, seed=8,
                                                             low=3.0, high=5.0),
            farray((n, m), np.float64, seed=9), farray((n, m), np.float64, seed=10),
            np.zeros((n, m), np.float64, order="F")]


def _water_state(n):
    q = np.zeros((2, n + 2), np.float64, order="F")
    q[0] = farray(n + 2, np.float64, seed=11, low=1.0, high=2.0)
    q[1] = farray(n + 2, np.float64, seed=12, low=-0.5, high=0.5)
    return q


ARGS = {
    ("saxpy.f90", "saxpy"): lambda: [37, np.float32(0.5), farray(37, seed=1), farray(37, seed=2)],
    ("matmul.f90", "matmul_ref"): lambda: [5, 7, 3, farray((5, 7), seed=3), farray((7, 3), seed=4),
                                           np.zeros((5, 3), np.float32, order="F")],
    ("matmul_tiled/matmul.f90", "matmul_tiled"): lambda: [
        37, 45, 29, farray((37, 45), seed=13), farray((45, 29), seed=14),
        np.zeros((37, 29), np.float32, order="F")],
    ("reduction/dot_max.f90", "dot_max"): lambda: [
        1000, farray(1000, np.float64, seed=15), farray(1000, np.float64, seed=16), 0.0, 0.0],
    ("norms.f90", "vector_norms"): lambda: [50, farray(50, np.float64, seed=5), 0.0, 0.0, 0.0, 0],
    ("jacobi2d.f90", "jacobi_step"): _jacobi_args,
    ("euler_flux.f90", "euler_volume"): _euler_args,
    ("legacy_tridiag.f", "TRISOL"): _tridiag_args,
    ("shallow_water.f90", "rusanov_step"): lambda: [
        16, 0.01, 0.1, _water_state(16), np.zeros((2, 16), np.float64, order="F"), 0.0],
    ("shallow_water.f90", "diagnostics"): lambda: [16, _water_state(16), 0.0, 0.0, 0.0],
}


@needs_gfortran
@pytest.mark.parametrize("sample, name", sorted(ARGS))
def test_sample_matches_gfortran(sample, name, tmp_path, cl_queue):
    source = (SAMPLES / sample).read_text()
    run_both(source, name, ARGS[(sample, name)](), tmp_path, cl_queue, filename=sample)


def test_every_sample_is_covered():
    # (not the Fortran glue that the README's first command writes next to saxpy.f90)
    files = {p.name for p in SAMPLES.glob("*.f90") if not p.name.endswith("_cl.f90")} | \
        {p.name for p in SAMPLES.glob("*.f")}
    assert files <= {s for s, _ in ARGS} | {"__placeholder__"}


@pytest.mark.usefixtures("sandbox_process")
def test_scripted_samples_are_transformed():
    """The samples' !$loopy scripts run: the matmul fetches 16x16 tiles into
    local memory per work-group; the reduction runs over a 256-item group."""
    from f2loopy.pipeline import translate_file
    mm = translate_file(SAMPLES / "matmul_tiled" / "matmul.f90")
    (gk,) = mm.generated
    assert gk.grid.local_size == (16, 16, 1)
    assert "__local float a_fetch[256];" in gk.device_code
    assert "__local float b_fetch[256];" in gk.device_code
    assert [label for label, _ in mm.checkpoints] == ["untransformed", "parallel",
                                                      "local prefetch"]
    red = translate_file(SAMPLES / "reduction" / "dot_max.f90")
    (gk,) = red.generated
    assert gk.grid.local_size == (256, 1, 1)
    assert "__local double acc_i_inner[256];" in gk.device_code
