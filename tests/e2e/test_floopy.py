"""loopy-style ``.floopy`` files translate unchanged and compute what gfortran does.

Each file in ``tests/floopy/`` carries its transformation script in loopy's
style (``lp.parse_fortran(SOURCE, FILENAME)``, ``lp.split_iname``,
``lp.tag_inames``, ``lp.fix_parameters``, ``RESULT = ...``); it is translated
as a ``.floopy`` file, run on OpenCL and compared with the same Fortran built by
gfortran.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from f2loopy.frontend import is_fixed_form_name
from f2loopy.pipeline import translate_file, write_outputs
from util import farray, fortran_reference, needs_gfortran, run_both

FLOOPY = Path(__file__).resolve().parents[1] / "floopy"


def _translate(name: str, tmp_path: Path):
    src = tmp_path / name
    src.write_text((FLOOPY / name).read_text())
    result = translate_file(src)
    write_outputs(result.outputs)
    glue = tmp_path / f"{src.name.split('.')[0]}_cl.py"
    spec = importlib.util.spec_from_file_location(glue.stem + "_" + tmp_path.name, glue)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, result


def _check(name, kernel, args, tmp_path, queue, **kw):
    source = (FLOOPY / name).read_text()
    module, result = _translate(name, tmp_path)
    ref = fortran_reference(source, filename=name.replace(".floopy", ".f90"))
    run_both(source, kernel, args, tmp_path, queue, module=module, reference=ref,
             filename=name.replace(".floopy", ".f90"), **kw)
    return result


def test_floopy_is_free_form_input():
    assert not is_fixed_form_name("matmul.floopy")
    assert len(list(FLOOPY.glob("*.floopy"))) >= 5


@needs_gfortran
def test_matmul_splits_and_tags(tmp_path, cl_queue):
    # no size is a multiple of its tile: partial work-groups and loops
    m, n, l = 37, 21, 11
    result = _check("matmul.floopy", "dgemm",
                    [m, n, l, 0.5, farray((m, l), np.float64, seed=1),
                     farray((l, n), np.float64, seed=2), farray((m, n), np.float64, seed=3)],
                    tmp_path, cl_queue)
    (knl,) = result.kernels
    assert {n: str(t) for n, t in knl.iname_tags.items()} == {
        "i_outer": "g.0", "i_inner": "l.1", "j_outer": "g.1", "j_inner": "l.0",
        "k_inner": "unr"}


def _csr(m, n, seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 6, size=m)
    rowstarts = np.concatenate([[1], 1 + np.cumsum(lengths)]).astype(np.int32)
    nvals = int(rowstarts[-1] - 1)
    cols = rng.integers(1, n + 1, size=nvals).astype(np.int32)
    return rowstarts, cols, nvals


@needs_gfortran
def test_sparse_csr_loop(tmp_path, cl_queue):
    m, n = 67, 23
    rowstarts, cols, nvals = _csr(m, n, seed=4)
    _check("sparse.floopy", "sparse",
           [rowstarts, cols, farray(nvals, np.float64, seed=5), m, n, nvals,
            farray(n, np.float64, seed=6), np.zeros(m, np.float64)],
           tmp_path, cl_queue)


@needs_gfortran
def test_tagged_statements(tmp_path, cl_queue):
    result = _check("tagging.floopy", "fill",
                    [np.zeros(300, np.float64), 1.25, 300], tmp_path, cl_queue)
    (knl,) = result.kernels
    init = [i for i in knl.instructions if "init" in i.tags]
    assert len(init) == 1 and init[0].within_inames == {"i_outer", "i_inner"}


@needs_gfortran
def test_old_style_transform_block(tmp_path, cl_queue):
    result = _check("fill_transform.floopy", "fill",
                    [np.zeros(300, np.float64), 1.25, 300], tmp_path, cl_queue)
    (knl,) = result.kernels
    assert sorted(knl.all_inames()) == ["i_1_inner", "i_1_outer", "i_inner", "i_outer"]


@needs_gfortran
def test_volume_kernel_fix_parameters_and_tags(tmp_path, cl_queue):
    nq, ne = 4, 19
    result = _check("volume.floopy", "volumeKernel",
                    [ne, nq, 3, 3, farray((nq, nq), seed=7),
                     farray((nq, nq, nq, 9, ne), seed=8), farray((nq, nq, nq, 3, ne), seed=9),
                     np.zeros((nq, nq, nq, 3, ne), np.float32, order="F")],
                    tmp_path, cl_queue, ulps=64)
    (knl,) = result.kernels
    assert {a.name: a.fixed_value for a in knl.args
            if a.fixed_value is not None} == {
        "Nq": 4, "Ndim": 3, "Nfields": 3}
    assert {n: str(t) for n, t in knl.iname_tags.items()} == {
        "e_outer": "g.0", "e_inner": "l.0", "d": "unr", "n": "unr", "i": "unr"}


@needs_gfortran
def test_two_kernels_from_a_dict_result(tmp_path, cl_queue):
    nx, ny = 13, 10
    u = farray((nx + 2, ny + 2), np.float64, seed=10)
    source = (FLOOPY / "stencil.floopy").read_text()
    module, result = _translate("stencil.floopy", tmp_path)
    assert [k.name for k in result.kernels] == ["jacobi", "residual"]
    ref = fortran_reference(source, filename="stencil.f90")
    unew = np.zeros((nx + 2, ny + 2), np.float64, order="F")
    run_both(source, "jacobi", [nx, ny, u, unew], tmp_path, cl_queue, module=module,
             reference=ref, filename="stencil.f90")
    run_both(source, "residual",
             [nx, ny, u, farray((nx + 2, ny + 2), np.float64, seed=11),
              np.zeros((nx, ny), np.float64, order="F")],
             tmp_path, cl_queue, module=module, reference=ref, filename="stencil.f90")


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("name", sorted(p.name for p in FLOOPY.glob("*.floopy")))
def test_every_floopy_file_translates_with_the_cli(name, tmp_path):
    from click.testing import CliRunner

    from f2loopy.cli import main
    src = tmp_path / name
    src.write_text((FLOOPY / name).read_text())
    res = CliRunner().invoke(main, ["translate", str(src)])
    assert res.exit_code == 0, res.output
    assert (tmp_path / f"{name.split('.')[0]}.cl").exists()
