"""Every sample translates and reproduces gfortran's results."""

from pathlib import Path

import numpy as np
import pytest

from util import farray, needs_gfortran, run_both

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


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


ARGS = {
    ("saxpy.f90", "saxpy"): lambda: [37, np.float32(0.5), farray(37, seed=1), farray(37, seed=2)],
    ("matmul.f90", "matmul_ref"): lambda: [5, 7, 3, farray((5, 7), seed=3), farray((7, 3), seed=4),
                                           np.zeros((5, 3), np.float32, order="F")],
    ("norms.f90", "vector_norms"): lambda: [50, farray(50, np.float64, seed=5), 0.0, 0.0, 0.0, 0],
    ("jacobi2d.f90", "jacobi_step"): _jacobi_args,
    ("euler_flux.f90", "euler_volume"): _euler_args,
}


@needs_gfortran
@pytest.mark.parametrize("sample, name", sorted(ARGS))
def test_sample_matches_gfortran(sample, name, tmp_path, cl_queue):
    source = (SAMPLES / sample).read_text()
    run_both(source, name, ARGS[(sample, name)](), tmp_path, cl_queue, filename=sample)


def test_every_sample_is_covered():
    files = {p.name for p in SAMPLES.glob("*.f90")}
    assert files <= {s for s, _ in ARGS} | {"__placeholder__"}
