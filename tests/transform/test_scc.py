"""The single-column mapping (:mod:`f2loopy.transform.scc`, ``--transform
scc``, and ``--transform auto``'s ``scc`` plan) and the demotion of column
temporaries to private variables, on the column routines of
``samples/columns`` (IR facts, exact messages, code shape, and PoCL against
gfortran)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.codegen import generate_code
from f2loopy.diagnostics import TransformError
from f2loopy.frontend import parse_fortran
from f2loopy.transform.iname import rename_iname
from f2loopy.transform.scc import (
    demotable_temporaries, demote_temporaries, horizontal_loops, scc)

from util import needs_gfortran

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ROOT / "samples" / "columns" / "column_physics.f90"
SIZES = ["--size", "klon=13", "--size", "kidia=2", "--size", "kfdia=9", "--size", "klev=9"]


@pytest.fixture(scope="module")
def unit():
    return parse_fortran(COLUMNS.read_text(), COLUMNS.name)


def test_horizontal_loops(unit):
    assert horizontal_loops(unit["cond_scalars"]) == ("jl", "jl_1")
    assert horizontal_loops(unit["species_order"]) == ("jl", "jl_1", "jl_2", "jl_3", "jl_4")
    assert horizontal_loops(unit["species_order"], index="JL") == \
        ("jl", "jl_1", "jl_2", "jl_3", "jl_4")
    assert horizontal_loops(unit["cond_scalars"], bounds=("KIDIA", "KFDIA")) == ("jl", "jl_1")
    assert horizontal_loops(unit["cond_scalars"], bounds=("kfdia", "kidia")) == ()
    # the level loops run from a constant: not horizontal
    assert horizontal_loops(unit["cond_scalars"], index="jk") == ()


@pytest.mark.parametrize("options, message", [
    ({"index": "j l"}, "scc: the horizontal index is a Fortran name, not 'j l'"),
    ({"bounds": ("kidia",)}, "scc: the horizontal bounds are two Fortran names (start, end), "
                             "not ('kidia',)"),
    ({"block": 0}, "scc: block is an integer from 1 to 1024, not 0"),
    ({"demote": "yes"}, "scc: demote is True or False, not 'yes'"),
    ({"index": "jk"}, "scc: kernel 'cond_scalars' has no horizontal loops (loops from one "
                      "scalar argument to another, e.g. DO JL = KIDIA, KFDIA, with the index "
                      "and bounds asked for)"),
])
def test_option_errors(unit, options, message):
    with pytest.raises(TransformError) as exc:
        scc(unit["cond_scalars"], **options)
    assert exc.value.message == message


def test_a_column_loop_that_carries_a_dependence_is_named():
    knl = parse_fortran("""subroutine t(klon, kidia, kfdia, pt, pout)
  implicit none
  integer, intent(in) :: klon, kidia, kfdia
  double precision, intent(in) :: pt(klon)
  double precision, intent(out) :: pout(klon)
  double precision :: zlast
  integer :: jl
  do jl = kidia, kfdia
    if (pt(jl) > 0.5d0) zlast = pt(jl)
    pout(jl) = zlast
  end do
end subroutine t
""", "t.f90")["t"]
    with pytest.raises(TransformError) as exc:
        scc(knl)
    assert exc.value.message == (
        "scc: the horizontal loop 'jl' carries a dependence on 'zlast': line 10 may read "
        "the value of an earlier iteration (the assignment at line 9 before it does not "
        "cover every case)")


def test_mapping_and_demotion_shape(unit):
    knl = scc(unit["species_order"], block=32)
    assert str(knl.iname_tags["jl_outer"]) == "g.0"
    assert str(knl.iname_tags["jl_inner"]) == "l.0"
    assert set(knl.all_inames()) == {"jm", "jl_outer", "jl_inner", "jn", "jm_1", "jn_1"}
    src = generate_code(knl).source
    assert "reqd_work_group_size(32, 1, 1)" in src
    # zmin(klon) and llindex(klon, nclv) are private to the work-item
    assert "    double zmin;\n    int llindex[5];\n" in src
    assert "llindex[iorder[jl_inner + 32 * jl_outer + kidia - 1 + klon * (jn - 1)] - 1] = 0;" \
        in src
    # the species loops are sequential inside the work-item
    assert "for (int jm_1 = 1; jm_1 <= 5; ++jm_1)" in src
    kept = scc(unit["species_order"], block=32, demote=False)
    assert "zmin" not in generate_code(kept).source.split("{")[1].split("get_group_id")[0]


def test_demotable_temporaries():
    knl = parse_fortran("""subroutine t(klon, klev, kidia, kfdia, pt, pout)
  implicit none
  integer, intent(in) :: klon, klev, kidia, kfdia
  double precision, intent(in) :: pt(klon, klev)
  double precision, intent(out) :: pout(klon)
  double precision :: za(klon, 3), zb(klon, klev), zc(klon), zd(klon)
  integer :: jl, jk
  do jl = kidia, kfdia
    za(jl, 1) = pt(jl, 1)
    zb(jl, 1) = pt(jl, 1)
    zc(jl) = 0.0d0
    zd(jl) = 1.0d0
  end do
  zd(kidia) = 2.0d0
  do jl = kidia, kfdia
    pout(jl) = za(jl, 1) + zb(jl, 1) + zc(jl) + zd(jl)
  end do
end subroutine t
""", "t.f90")["t"]
    merged = rename_iname(knl, "jl_1", "jl", existing_ok=True)
    # zb's other extent is not constant, zd is used outside the column loop
    assert demotable_temporaries(merged, "jl") == ("za", "zc")
    with pytest.raises(TransformError) as exc:
        demote_temporaries(merged, "jl", names=["zd"])
    assert exc.value.message == (
        "demote: temporary 'zd' is not indexed by 'jl' alone in its first subscript "
        "everywhere, or its other extents are not constant")
    out = demote_temporaries(merged, "jl")
    assert out.temporaries["za"].shape == (3,) and out.temporaries["zc"].shape == ()
    assert str(out.temporaries["za"].address_space) == "private"


@pytest.mark.usefixtures("sandbox_process")
def test_auto_takes_the_scc_plan_for_column_routines(tmp_path):
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-o", str(tmp_path),
                                    str(COLUMNS)])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines() == [
        "auto: kernel 'cond_scalars': plan scc, 2 horizontal loops (jl, jl_1) -> jl_outer "
        "(g.0, blocks of 128), jl_inner (l.0)",
        "auto: kernel 'early_exit': plan grid, jl -> g.0/l.0",
        "auto: kernel 'species_order': plan scc, 5 horizontal loops (jl, jl_1, jl_2, ...) -> "
        "jl_outer (g.0, blocks of 128), jl_inner (l.0); private column temporaries: "
        "llindex, zmin",
        "auto: kernel 'insertion_order': plan grid, jl -> g.0/l.0, jm -> g.1/l.1",
        "auto: kernel 'whole_fills': plan scc, 2 horizontal loops (jl, jl_1) -> jl_outer "
        "(g.0, blocks of 128), jl_inner (l.0); private column temporaries: zacc"]
    off = CliRunner().invoke(main, ["translate", "--transform", "auto", "-D", "columns=off",
                                    "-o", str(tmp_path), str(COLUMNS)])
    assert "plan scc" not in off.output


@needs_gfortran
@pytest.mark.opencl
@pytest.mark.parametrize("options", [["--transform", "scc", "-D", "block=4"],
                                     ["--transform", "scc", "-D", "demote=false"],
                                     ["--transform", "auto", "-D", "block=8"]])
def test_check_against_gfortran(options):
    res = CliRunner().invoke(main, ["check", *options, *SIZES, str(COLUMNS)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output


def test_whole_extent_fills_run_on_the_columns(unit):
    knl = scc(unit["whole_fills"], block=32)
    # the temporary's fill is narrowed to the columns (and zacc demoted); the
    # argument's columns outside kidia..kfdia get loops of their own
    assert sorted(i.id for i in knl.instructions if "jl_inner" not in i.within_inames) == \
        ["pflux_hi", "pflux_lo", "psum_hi", "psum_lo"]
    assert knl.temporaries["zacc"].shape == (3,)
    src = generate_code(knl).source
    assert "if (kidia >= psum_i1_lo_inner + 32 * psum_i1_lo_outer + 2)" in src


LEVELS = ROOT / "samples" / "columns" / "column_levels.f90"


@pytest.mark.parametrize("text, message", [
    ("KLEV", "auto: fix: 'KLEV' is not NAME=INTEGER (-D fix=KLEV=137 or "
             "-D fix=\"KLEV=137, NCLV=5\")"),
    ("KLEV=1.5", "auto: fix: 'KLEV=1.5' is not NAME=INTEGER (-D fix=KLEV=137 or "
                 "-D fix=\"KLEV=137, NCLV=5\")"),
    ("klev=9, KLEV=9", "auto: fix: 'KLEV' is given twice"),
])
def test_fixed_values_errors(text, message):
    from f2loopy.transform.parameters import parse_fixed_values
    assert parse_fixed_values(" KLEV = 137 ,nclv=-5") == {"KLEV": 137, "nclv": -5}
    with pytest.raises(TransformError) as exc:
        parse_fixed_values(text, who="auto: fix")
    assert exc.value.message == message


@pytest.mark.usefixtures("sandbox_process")
def test_fixed_levels_make_level_temporaries_private(tmp_path):
    """With KLEV a run-time size (and no runtime specialisation), only the
    temporary of constant other extents is private; -D fix=klev=9 makes the level-dimensioned ones
    private arrays too (and the kernel no longer takes them as buffers)."""
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-D",
                                    "specialize=false", "-o", str(tmp_path / "a"), str(LEVELS)])
    assert res.exit_code == 0, res.output
    assert res.output.endswith("; private column temporaries: zneg; level loops fused: jk_2 "
                               "into jk_1 (guarded)\n"), res.output
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-D", "fix=klev=9",
                                    "-o", str(tmp_path / "b"), str(LEVELS)])
    assert res.exit_code == 0, res.output
    assert res.output.endswith("; private column temporaries: zdp, zfall, zneg, zqx\n")
    src = (tmp_path / "b" / "column_levels.cl").read_text()
    assert "double zqx[27];" in src and "double zfall[10];" in src
    assert "__global double *zqx" not in src
    # the glue still takes klev and refuses any other value
    glue = (tmp_path / "b" / "column_levels_cl.py").read_text()
    assert "argument 'klev' was fixed to 9 when the kernel was translated" in glue
    res = CliRunner().invoke(main, ["translate", "--transform", "scc", "-D", "fix=nlev=9",
                                    "-o", str(tmp_path / "c"), str(LEVELS)])
    assert res.exit_code == 1 and "'nlev' is not an argument of kernel" in res.output
    assert not (tmp_path / "c").exists()


@needs_gfortran
@pytest.mark.opencl
@pytest.mark.parametrize("options", [["--transform", "auto", "-D", "fix=klev=9", "-D", "block=4"],
                                     ["--transform", "scc", "-D", "fix=KLEV=9"],
                                     ["--transform", "auto"]])
def test_fixed_levels_check_against_gfortran(options):
    res = CliRunner().invoke(main, ["check", *options, *SIZES[:4], "--size", "kfdia=12",
                                    "--size", "klev=9", str(LEVELS)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output


# {{{ runtime specialisation: compiled per value of KLEV

def test_specialize_parameters_errors(unit):
    from f2loopy.transform.parameters import fix_parameters, specialize_parameters
    knl = unit["cond_scalars"]
    out = specialize_parameters(knl, names=["KLEV"])
    assert out.options.specialized == ("klev",)
    assert specialize_parameters(out, names=("klev",)) is out
    for names, message in [
            (["pt"], "specialize_parameters: 'pt' is not an integer scalar argument of "
                     "kernel 'cond_scalars'"),
            (["nope"], "specialize_parameters: 'nope' is not an integer scalar argument of "
                       "kernel 'cond_scalars'"),
            ("klev", "specialize_parameters: names is a list of argument names, not 'klev'")]:
        with pytest.raises(TransformError) as exc:
            specialize_parameters(knl, names=names)
        assert exc.value.message == message
    with pytest.raises(TransformError) as exc:
        specialize_parameters(fix_parameters(knl, klev=9), names=["klev"])
    assert exc.value.message == "specialize_parameters: 'klev' is fixed to 9 already"
    shaped = parse_fortran("subroutine s(a, b)\n  integer, intent(in) :: a(:, :)\n"
                           "  integer, intent(out) :: b\n  b = size(a, 2)\nend subroutine\n",
                           "s.f90")["s"]
    with pytest.raises(TransformError) as exc:
        specialize_parameters(shaped, names=["a_n2"])
    assert exc.value.message == ("specialize_parameters: 'a_n2' is the extent of axis 2 of "
                                 "argument 'a', not a dummy argument the caller passes")


@pytest.mark.usefixtures("sandbox_process")
def test_auto_compiles_per_level_count(tmp_path):
    """Plain auto makes the level-dimensioned temporaries private arrays
    without fixing KLEV: the kernel reads klev as a macro that the glue
    defines when it builds the program, one program per value."""
    from f2loopy.transform.scc import specializable_extents
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-o", str(tmp_path),
                                    str(LEVELS)])
    assert res.exit_code == 0, res.output
    assert res.output.endswith("; private column temporaries: zfall, zneg, zqx; level loops "
                               "fused: jk_2 into jk_1 (guarded); levels cached: zdp; compiled "
                               "per value of klev\n"), res.output
    src = (tmp_path / "column_levels.cl").read_text()
    macro = "F2L_SPEC_level_temps_klev"
    assert f"#if defined({macro})\n__kernel void" in src
    assert f"{{\n#define klev ({macro})\n" in src and "#undef klev\n}\n#endif" in src
    assert "double zqx[klev * 3];" in src and "double zfall[klev + 1];" in src
    # zdp is kept as its current level (k-cached) since the level loops are fused
    assert "__global double *zdp" not in src and "__global double *zqx" not in src
    # the kernel still takes klev (the glue passes it as before)
    assert "int const klev," in src
    glue = (tmp_path / "column_levels_cl.py").read_text()
    assert f"_kernel(queue, 'level_temps', () + ('-D{macro}=' + str(int(klev)),))" in glue
    # (continuation lines joined)
    f90 = (tmp_path / "column_levels_cl.f90").read_text().replace("&\n        &", "")
    assert "if (f2l_spec_built .and. (int(klev, c_int64_t) /= f2l_spec_1)) " \
        "f2l_kernel = c_null_ptr" in f90
    assert f'" -D{macro}="' in f90 and "f2l_to_string(klev)" in f90
    c_glue = (tmp_path / "column_levels_cl.c").read_text()
    assert (f"/* Kernel level_temps is compiled per value of klev: build the program with "
            f"-D{macro}=<klev>. */") in c_glue
    knl = parse_fortran(LEVELS.read_text(), LEVELS.name)["level_temps"]
    assert specializable_extents(knl, "jl") == ()     # other loops touch them too
    for x in horizontal_loops(knl)[1:]:
        knl = rename_iname(knl, x, "jl", existing_ok=True)
    assert specializable_extents(knl, "jl") == ("klev",)


@pytest.mark.opencl
def test_specialized_glue_builds_one_program_per_value(tmp_path):
    """The Python glue of a specialised kernel on PoCL, called with two level
    counts and again with the first: right results each time, one program
    per value (built the first time it is called with it)."""
    import importlib.util

    import numpy as np
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-D", "block=8",
                                    "-o", str(tmp_path), str(LEVELS)])
    assert res.exit_code == 0, res.output
    spec = importlib.util.spec_from_file_location("column_levels_cl",
                                                  tmp_path / "column_levels_cl.py")
    glue = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(glue)
    rng = np.random.default_rng(5)
    klon, kidia, kfdia = 21, 3, 19
    programs = []
    for klev in (6, 9, 6):
        pt = np.asfortranarray(rng.random((klon, klev)))
        pq = np.asfortranarray(rng.random((klon, klev, 3)))
        paph = np.asfortranarray(np.cumsum(rng.random((klon, klev + 1)), axis=1))
        ptend = np.asfortranarray(rng.random((klon, klev, 3)))
        pflux = np.asfortranarray(np.zeros((klon, klev + 1)))
        want_tend, want_flux = _levels_reference(kidia, kfdia, klev, pt, pq, paph,
                                                 ptend.copy(order="F"))
        glue.level_temps(klon, klev, kidia, kfdia, pt, pq, paph, ptend, pflux)
        cols = slice(kidia - 1, kfdia)
        np.testing.assert_allclose(ptend[cols], want_tend[cols], rtol=1e-13)
        np.testing.assert_allclose(pflux[cols], want_flux[cols], rtol=1e-13)
        programs.append(len(glue._programs))
    assert programs == [1, 2, 2]


@pytest.mark.opencl
def test_specialized_kernel_called_in_memory():
    """A specialised kernel called from Python without glue files
    (run_kernel, what knl(queue, ...) and check's reference runs use) builds
    its program per level count too, and agrees with the kernel whose level
    temporaries stay global buffers."""
    import numpy as np
    import pyopencl as cl

    from f2loopy.glue.call import run_kernel
    knl = parse_fortran(LEVELS.read_text(), LEVELS.name)["level_temps"]
    spec, plain = scc(knl, block=8, specialize=True), scc(knl, block=8)
    assert spec.options.specialized == ("klev",) and not plain.options.specialized
    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    rng = np.random.default_rng(7)
    klon = 13
    for klev in (5, 8):
        args = {"klon": klon, "klev": klev, "kidia": 2, "kfdia": 12,
                "pt": rng.random((klon, klev)), "pq": rng.random((klon, klev, 3)),
                "paph": rng.random((klon, klev + 1)), "ptend": rng.random((klon, klev, 3))}
        args = {k: np.asfortranarray(v) if isinstance(v, np.ndarray) else v
                for k, v in args.items()}
        got = run_kernel(spec, queue, **{k: (v.copy(order="F") if isinstance(v, np.ndarray)
                                             else v) for k, v in args.items()})
        want = run_kernel(plain, queue, **args)
        for name in ("ptend", "pflux"):
            np.testing.assert_allclose(got[name][1:12], want[name][1:12], rtol=1e-14)


def _levels_reference(kidia, kfdia, klev, pt, pq, paph, ptend):
    """level_temps of samples/columns/column_levels.f90 in numpy (columns
    kidia..kfdia; 0-based levels)."""
    import numpy as np
    c = slice(kidia - 1, kfdia)
    zqx = pq[c] * pt[c][:, :, None]
    zdp = paph[c, 1:] - paph[c, :-1]
    n = zqx.shape[0]
    zneg = np.zeros((n, 3))
    zfall = np.zeros((n, klev + 1))
    for jk in range(1, klev):
        for jm in range(3):
            low = zqx[:, jk, jm] < 0.5
            zneg[low, jm] += zqx[low, jk, jm]
            zqx[low, jk, jm] = zqx[low, jk - 1, jm] * 0.5
        zfall[:, jk] = zfall[:, jk - 1] + zdp[:, jk] * zqx[:, jk, 0]
    zfall[:, klev] = zfall[:, klev - 1] + zneg[:, 1]
    pflux = np.zeros((pt.shape[0], klev + 1))
    for jk in range(klev - 1, -1, -1):
        ptend[c, jk, :] += zqx[:, jk, :] - zneg
        pflux[c, jk + 1] = zfall[:, jk + 1] + zqx[:, jk, :].sum(axis=1)
    pflux[c, 0] = zfall[:, 0]
    return ptend, pflux

# }}}


# {{{ the column guard tested once per region (hoist_guards)

HOISTED = """
subroutine hoisted(klon, klev, kidia, kfdia, pa, pedge, pout)
  implicit none
  integer, intent(in) :: klon, klev, kidia, kfdia
  double precision, intent(in) :: pa(klon, klev)
  double precision, intent(inout) :: pedge(klon)
  double precision, intent(out) :: pout(klon, klev)
  double precision :: zfac, zscale, zrow(klon, 4)
  integer :: jl, jk, jm, iord(klon, 4)
  zscale = 3.0d0
  zfac = 2.0d0
  pedge(:) = zscale
  do jk = 1, klev
    do jl = kidia, kfdia
      do jm = 1, 4
        zrow(jl, jm) = pa(jl, jk) * jm
        iord(jl, jm) = 5 - jm
      end do
      if (pa(jl, jk) > 0.5d0) iord(jl, 1) = 2
      pout(jl, jk) = 0.0d0
      do jm = 1, 4
        pout(jl, jk) = pout(jl, jk) + zrow(jl, iord(jl, jm)) * zfac * jm
      end do
    end do
    do jl = kidia, kfdia
      pedge(jl) = pedge(jl) + pout(jl, jk)
    end do
  end do
end subroutine hoisted
"""


def test_column_guard_is_tested_once_per_region(tmp_path):
    """The scc plan tests the column guard once around the statements of the
    columns (not on each statement); zfac, read only by the columns, joins
    that block; zscale, which the fills of pedge's other columns read, stays
    outside it."""
    from f2loopy.codegen.guards import hoist_info
    path = tmp_path / "hoisted.f90"
    path.write_text(HOISTED)
    knl = scc(parse_fortran(HOISTED, path.name)["hoisted"])
    assert knl.options.hoist_guards
    src = generate_code(knl).source
    guard = "if (kfdia >= jl_inner + 128 * jl_outer + kidia)"
    body = src[src.index("    zscale = 3.0;\n"):]
    assert body.count(guard) == 2, body
    assert body.startswith(f"    zscale = 3.0;\n    {guard}\n    {{\n        zfac = 2.0;\n"
                           "        pedge[jl_inner"), body
    block = body[body.rindex(guard):]
    assert block.startswith(guard + "\n    {\n        for (int jk = 1;"), block
    assert "if (kidia >= pedge_i1_lo_inner" in body[:body.rindex(guard)]
    free = hoist_info(knl, {"jl_inner", "jl_outer"}, {}).free
    assert [knl.insn(i).assignee_name for i in free] == ["zfac"]
    # without the option the guard is tested per block of statements
    plain = generate_code(knl.copy(options=knl.options.copy(hoist_guards=False))).source
    assert plain.count(guard) >= 5


@needs_gfortran
@pytest.mark.opencl
def test_hoisted_guards_check_against_gfortran(tmp_path):
    path = tmp_path / "hoisted.f90"
    path.write_text(HOISTED)
    res = CliRunner().invoke(main, ["check", "--transform", "auto", "-D", "block=4",
                                    "--size", "klon=13", "--size", "kidia=3", "--size",
                                    "kfdia=11", "--size", "klev=5", str(path)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output

# }}}


@needs_gfortran
@pytest.mark.opencl
def test_bench_builds_a_specialized_kernel_for_its_sizes():
    """f2loopy bench builds the program itself: a kernel compiled per value
    of klev gets the value of --size klev (it had no kernel to take before)."""
    res = CliRunner().invoke(main, ["bench", "--transform", "auto", "--size", "klon=16",
                                    "--size", "kidia=2", "--size", "kfdia=15", "--size",
                                    "klev=7", str(LEVELS)])
    assert res.exit_code == 0, res.output
    assert "final" in res.output and "✓" in res.output
