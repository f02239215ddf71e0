"""``f2loopy check`` never crashes and never blames a translation wrongly
(issue 26, items 7 to 15): inputs fit the subscripts the original computes,
an access it could not size is reported (the original runs with
``-fcheck=bounds``), and the other crash and honesty cases of the issue."""

import re
import subprocess
import sys

import pytest
from check_util import check_process as _check_process
from check_util import check_text as _check
from check_util import BIG, needs_check
from click.testing import CliRunner

from f2loopy.cli import main

pytestmark = [needs_check, pytest.mark.differential]


# {{{ item 7: subscripts computed into a scalar first

OFFSET = """subroutine shift(n, off, a, buf)
  integer n, off, j, idx
  real a(n), buf(n + 3)
  do j = 1, n
    idx = off + j
    buf(idx) = a(j)
  end do
end subroutine
"""


def test_offset_computed_into_a_scalar_is_sized(tmp_path):
    # off may only be 0..3: the drawn value must keep buf(off + j) in bounds
    for seed in range(4):
        _, res = _check(tmp_path, OFFSET, "--seed", str(seed))
        assert res.exit_code == 0, res.output
        drawn = re.search(r"\boff=(-?\d+)", res.output.splitlines()[0])
        assert drawn and 0 <= int(drawn.group(1)) <= 3, res.output
        assert res.output.splitlines()[-1] == \
            "ok: 1 output(s) of 1 kernel(s) match the original Fortran"


INDIRECT = """subroutine gather(n, m, col, x, y)
  integer n, m, j, c
  integer col(n)
  real x(m), y(n)
  do j = 1, n
    c = col(j)
    y(j) = x(c)
  end do
end subroutine
"""


def test_index_array_read_into_a_scalar_is_ranged(tmp_path):
    _, res = _check(tmp_path, INDIRECT, "--size", "m=2", "--size", "n=30")
    assert res.exit_code == 0, res.output


PACKED = """subroutine pack(n, m, depth, a, buf)
  integer n, m, depth
  real a(n, m), buf(n*m)
  integer j, k, idx
  do k = 1, m
    do j = 1, n
      idx = j + (k-1)*depth
      buf(idx) = a(j, k)
    end do
  end do
end subroutine
"""


def test_access_that_cannot_be_sized_is_reported_not_a_crash(tmp_path):
    # depth*k is no affine subscript: with depth > n the original writes past
    # buf; with the sizes drawn isl sees it, and neither side runs on them
    proc = _check_process(tmp_path, PACKED, "--size", "n=3", "--size", "m=50",
                          "--range", "depth=20:30")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert "k.f90:8:7: error: the original reaches past the end of 'buf' with the sizes drawn " \
           "(n=3, m=50, depth=" in proc.stderr, proc.stderr
    assert "its subscript multiplies or divides sizes" in proc.stderr

# }}}


# {{{ item 9: a module on -I calls an external procedure of another file

def test_module_calling_an_external_procedure_of_another_file(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "ops.f90").write_text("""module ops
contains
  subroutine scale_all(n, x)
    integer n, i
    real x(n)
    do i = 1, n
      x(i) = 3.0 * x(i)
    end do
  end subroutine
  subroutine log_all(n, x)
    integer n
    real x(n)
    call report(n, x)
  end subroutine
end module
""")
    (lib / "report.f90").write_text("""subroutine report(n, x)
  integer n
  real x(n)
  print *, x
end subroutine
""")
    _, res = _check(tmp_path, """subroutine k(n, x)
  use ops
  integer n
  real x(n)
  call scale_all(n, x)
end subroutine
""", "-I", str(lib))
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == \
        "ok: 1 output(s) of 1 kernel(s) match the original Fortran"


def test_stubs_of_missing_procedures():
    from f2loopy.verify.fortran import STUB_MARK, _stub_source, _undefined_procedures
    err = ("/usr/bin/ld: /tmp/x/ops.o: in function `__ops_MOD_log_all':\n"
           "ops.f90:(.text+0x1b): undefined reference to `report_'\n"
           "collect2: error: ld returned 1 exit status\n")
    assert _undefined_procedures(err) == ["report_"]
    assert _undefined_procedures(err + "x.f90:3:4: Error: bad\nfoo: error: other\n") is None
    assert _undefined_procedures("undefined reference to `a\"b'\n") is None
    assert f'fputs("{STUB_MARK}report_\\n", stderr);' in _stub_source(["report_"])

# }}}


# {{{ item 10: the glue checks arguments against the kernel before every launch

SORT = """subroutine sortcol(klon, nclv, kidia, kfdia, zsink, zval, iorder)
  integer klon, nclv, kidia, kfdia
  real zsink(klon, nclv), zval(klon, nclv)
  integer iorder(klon, nclv)
  integer jl, jm, jn, jo
  do jm = 1, nclv
    do jl = kidia, kfdia
      iorder(jl, jm) = jm
      zval(jl, jm) = zsink(jl, jm) * 2.0
    end do
  end do
  do jm = 1, nclv
    do jn = 1, nclv - 1
      do jl = kidia, kfdia
        if (zval(jl, iorder(jl, jn)) > zval(jl, iorder(jl, jn + 1))) then
          jo = iorder(jl, jn)
          iorder(jl, jn) = iorder(jl, jn + 1)
          iorder(jl, jn + 1) = jo
        end if
      end do
    end do
  end do
  do jm = 1, nclv
    do jl = kidia, kfdia
      zsink(jl, jm) = zval(jl, iorder(jl, jm))
    end do
  end do
end subroutine
"""

WRONG_LAUNCH = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import sortcol_cl as g
queue = g._default_queue()
knl = g._kernel(queue, 'sortcol', ())
n = np.int32(4)
for args in ([n, n, n, n, None, None, None], [n, n, n, n], [n, 4, n, n, None, None, None]):
    try:
        g._launch(queue, knl, args, (1, 1, 1), (1, 1, 1),
                  ('int32',) * 4 + ('buffer',) * 3)
    except g.KernelArgumentError as exc:
        print("refused:", exc)
"""


def test_auto_kernel_glue_refuses_wrong_arguments(tmp_path):
    path = tmp_path / "sortcol.f90"
    path.write_text(SORT)
    # the per-column sort is parallel now (its scalars are private): one launch
    res = CliRunner().invoke(main, ["check", "--transform", "auto", str(path)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", str(path)])
    assert res.exit_code == 0, res.output
    assert ") sortcol(int const klon, " in (tmp_path / "sortcol.cl").read_text()
    proc = subprocess.run([sys.executable, "-c", WRONG_LAUNCH, str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "refused: sortcol: argument 5 must be a device buffer, not NoneType",
        "refused: sortcol: 4 arguments for a kernel of 7 (the glue and the OpenCL "
        "program do not match: translate again)",
        "refused: sortcol: argument 2 must be a numpy int32 scalar, not int"]

# }}}


# {{{ item 11: no negative extents drawn

SEGMENT = """subroutine seg(kidia, kfdia, a, b)
  integer kidia, kfdia, jl
  real a(kidia:kfdia), b(kidia:kfdia)
  do jl = kidia, kfdia
    b(jl) = 2.0 * a(jl)
  end do
end subroutine
"""


def test_no_negative_extent_is_drawn(tmp_path):
    # seed 1 drew kidia=6, kfdia=4: a(6:4), extent -1, which the glue refuses
    for seed in (1, 4):
        _, res = _check(tmp_path, SEGMENT, "--seed", str(seed))
        assert "must have shape (-" not in res.output, res.output
        drawn = re.search(r"kidia=(\d+), kfdia=(\d+)", res.output)
        assert int(drawn.group(2)) >= int(drawn.group(1)) - 1, res.output
        assert "MISMATCH" not in res.output, res.output

# }}}


# {{{ item 12: MAX/MIN with a NaN argument is no translation error

NAN_MAX = """subroutine clampsq(n, lo, x, y)
  integer n, i
  real lo, x(n), y(n), s
  do i = 1, n
    s = sqrt(x(i) - 1.0)
    y(i) = max(lo, s)
  end do
end subroutine
"""


def test_nan_only_difference_in_max_is_said(tmp_path):
    # gfortran -O0 gives max(lo, NaN) = NaN, OpenCL fmax gives lo
    _, res = _check(tmp_path, NAN_MAX)
    assert res.exit_code == 0, res.output
    assert "translation error" not in res.output.replace("not a translation error", "")
    assert "a NaN-only difference in MAX/MIN" in res.output


def test_nan_explanation_needs_nan_only_and_max():
    import numpy as np

    from f2loopy.frontend import read_source, translate_source
    from f2loopy.verify.check import OutputCheck
    from f2loopy.verify.compare import Mismatch
    from f2loopy.verify.honesty import explain_nan_minmax
    with_max = list(translate_source(read_source(NAN_MAX, "k.f90")))
    without = list(translate_source(read_source(NAN_MAX.replace("max(lo, s)", "lo + s"),
                                                "k.f90")))
    want = {"y": np.array([np.nan, 1.0, 2.0], dtype=np.float32)}

    def outcome(got, kernels):
        o = OutputCheck("y", np.dtype(np.float32), (3,), 1.0, (1,),
                        Mismatch("y", 1.0, (1,), 0.0, 1.0, 1, 3))
        explain_nan_minmax([o], {"y": np.array(got, dtype=np.float32)}, want, kernels, None)
        return o.mismatch is None
    assert outcome([0.5, 1.0, 2.0], with_max)
    assert not outcome([0.5, 1.0, 2.5], with_max)       # another element differs too
    assert not outcome([0.5, 1.0, 2.0], without)        # no MAX/MIN: a NaN is an error

# }}}


# {{{ item 13: a local array named like a procedure of another file is no call

LOCAL_ARRAY = """subroutine k(n, x, y)
  integer n, i
  real x(n), y(n)
  real viscosity(n)
  do i = 1, n
    viscosity(i) = 2.0 * x(i)
  end do
  do i = 1, n
    y(i) = viscosity(i) + 1.0
  end do
end subroutine
"""

LOCAL_SCALAR = """subroutine k(n, viscosity, x, y)
  integer n, i
  real x(n), y(n), viscosity, scale
  scale = 2.0
  do i = 1, n
    y(i) = viscosity * scale * x(i)
  end do
end subroutine
"""


def test_local_data_named_like_a_procedure_is_no_call(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    for name in ("viscosity", "scale"):
        (lib / f"{name}.f90").write_text(f"""subroutine {name}(n, v)
  use mpi
  integer n
  real v(n)
  v = 1.0
end subroutine
""")
    for text in (LOCAL_ARRAY, LOCAL_SCALAR):
        _, res = _check(tmp_path, text, "-I", str(lib))
        assert res.exit_code == 0, res.output
        res = CliRunner().invoke(main, ["translate", "-o", str(tmp_path / "out"), "--depfile",
                                        str(tmp_path / "k.d"), "-I", str(lib),
                                        str(tmp_path / "k.f90")])
        assert res.exit_code == 0, res.output
        assert "viscosity.f90" not in (tmp_path / "k.d").read_text()
        assert "scale.f90" not in (tmp_path / "k.d").read_text()

# }}}


# {{{ item 14: PRIVATE module entities

PRIVATE_MODULE = """module pm2
  implicit none
  private
  real :: g = 2.0
  logical :: flag = .true.
  real, dimension(3) :: tab
  public :: outer
contains
  subroutine outer(n, x)
    integer n
    real x(n)
    call inner(n, x)
  end subroutine
  subroutine inner(n, x)
    integer n, i
    real x(n)
    do i = 1, n
      if (flag) x(i) = g * x(i) + tab(1)
    end do
  end subroutine
end module
"""


def test_private_module_entities(tmp_path):
    from f2loopy.verify.fortran import module_access, private_procedures
    assert private_procedures(PRIVATE_MODULE) == {"inner"}
    assert module_access("module m\n  real, private :: a, b = 1.0\n  private :: c\n"
                         "end module\n")["m"][1] == {"a", "b", "c"}
    # private by the module's default only (issue 27: a shallow-water model's
    # kernels): the original's copy makes it public on its 'contains' line
    from f2loopy.verify.fortran import openable_procedures, with_public
    assert openable_procedures(PRIVATE_MODULE) == {"inner"}
    opened = with_public(PRIVATE_MODULE, {"inner"})
    assert opened.splitlines()[7] == "public :: inner; contains"
    assert opened.count("\n") == PRIVATE_MODULE.count("\n")
    _, res = _check(tmp_path, PRIVATE_MODULE, "--kernel", "inner")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[1:3] == ["inner", "  x(4) float32  max |error| 0  ok"]
    # named in a 'private' statement: it stays out of the harness's reach
    listed = PRIVATE_MODULE.replace("  private\n", "  private :: inner\n")
    assert openable_procedures(listed) == set() and private_procedures(listed) == {"inner"}
    _, res = _check(tmp_path, listed)
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[1:3] == [
        "inner",
        "  not checked: 'inner' is PRIVATE in its module, out of the reach of a harness (it is "
        "checked where a public procedure of the file calls it)"]
    assert "  x(4) float32  max |error| 0  ok" in res.output

# }}}


def test_module_closure_follows_ifdef(tmp_path):
    # consts.F90 uses mpi_wrap (which needs mpi.mod) only under USE_MPI
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "consts.F90").write_text("module consts\n#ifdef USE_MPI\n  use mpi_wrap\n#endif\n"
                                    "  real, parameter :: two = 2.0\nend module\n")
    (lib / "mpi_wrap.f90").write_text("module mpi_wrap\n  use mpi\nend module\n")
    (lib / "ops.F90").write_text("""module ops
  use consts
#ifdef USE_MPI
  use mpi_wrap
#endif
contains
  subroutine twice_all(n, x)
    integer n, i
    real x(n)
    do i = 1, n
      x(i) = two * x(i)
    end do
  end subroutine
end module
""")
    _, res = _check(tmp_path, "subroutine k(n, x)\n  use ops\n  integer n\n  real x(n)\n"
                    "  call twice_all(n, x)\nend subroutine\n", "-I", str(lib))
    assert res.exit_code == 0, res.output


SCALE = """subroutine scal(n, a, x)
  integer n, i
  real a, x(n)
  do i = 1, n
    x(i) = a * x(i)
  end do
end subroutine
"""


def test_range_of_a_size_is_honoured(tmp_path):
    for given, lo, hi in (("n=600:700", 600, 700), ("n=20:30", 20, 30)):
        _, res = _check(tmp_path, SCALE, "--range", given)
        assert res.exit_code == 0, res.output
        drawn = int(re.search(r"\bn=(\d+)", res.output.splitlines()[0]).group(1))
        assert lo <= drawn <= hi, res.output
    _, res = _check(tmp_path, SCALE, "--range", "n=-5:-1")
    assert res.exit_code == 1
    assert "error: --range n=-5:-1: no value in it fits the kernel's assumptions and keeps " \
           "every subscript in bounds (with the other sizes)" in res.output


FLAGGED = """subroutine flagged(trans, n, x)
  character trans
  integer n, i
  real x(n)
  do i = 1, n
    if (trans == 'T') then
      x(i) = 2.0 * x(i)
    else
      x(i) = x(i) + 1.0
    end if
  end do
end subroutine
"""


def test_character_flag_is_settable(tmp_path):
    where, res = _check(tmp_path, FLAGGED, "--size", "trans=T")
    assert res.exit_code == 1, res.output        # the other branch never ran: said
    lines = res.output.splitlines()
    assert f"  {where}:9: x(i) = x(i) + 1.0" in lines
    assert lines[-1] == ("NOT COVERED: 1 statement(s) never ran; give sizes or value ranges "
                         "that reach them (--size, --range)")
    _, res = _check(tmp_path, FLAGGED, "--size", "trans='N'")
    assert f"{where}:7: x(i) = 2.0 * x(i)" in res.output
    _, res = _check(tmp_path, FLAGGED, "--size", "n=T")
    assert res.exit_code == 1
    assert "error: --size n=T: 'n' is no CHARACTER argument of the checked subroutines (a " \
           "string sets only those)" in res.output


def test_not_covered_lines_are_the_files_lines(tmp_path):
    (tmp_path / "defs.h").write_text("! three lines\n! of comments\n! included\n")
    where, res = _check(tmp_path, "#include \"defs.h\"\n" + BIG, name="big.F90")
    named = [ln for ln in res.output.splitlines() if ln.startswith(f"  {where}:")]
    assert named == [f"  {where}:10: do i = 1, n", f"  {where}:11: y(i) = y(i) + 1"]



def test_no_numpy_warning_on_stderr(tmp_path):
    proc = _check_process(tmp_path, """subroutine blowup(n, x, y)
  integer n, i
  real x(n), y(n)
  do i = 1, n
    y(i) = 1.0 / (x(i) - x(i))
  end do
end subroutine
""")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""


def test_condition_on_a_computed_subscript_is_seen_through_it(tmp_path):
    # the guard idx <= n keeps buf(idx) in bounds: sizes must not be refused
    _, res = _check(tmp_path, """subroutine guarded(n, off, a, buf)
  integer n, off, j, idx
  real a(n), buf(n)
  do j = 1, n
    idx = off + j
    if (idx <= n) buf(idx) = a(j)
  end do
end subroutine
""")
    assert res.exit_code == 0, res.output


# {{{ PRIVATE derived-type module variables (issue 26, left from item 14)

PRIVATE_DERIVED = """module pstate
  implicit none
  private
  type grid_t
    real :: scale
    integer :: shift
    real :: w(3)
  end type
  type(grid_t) :: g
  public :: apply
contains
  subroutine apply(n, x, k)
    integer n, i
    real x(n)
    integer k(n)
    do i = 1, n
      x(i) = g%scale * x(i) + g%w(2)
      k(i) = k(i) + g%shift
      g%w(3) = g%w(3) + x(i)
    end do
  end subroutine
end module
"""

# a public type, the variable PRIVATE by its attribute, no module procedure
# before the harness's (no 'contains'), fixed form
PRIVATE_DERIVED_FIXED = """      module pfix
      implicit none
      type pair_t
        double precision a, b
      end type
      type(pair_t), private :: p
      public :: setp, usep
      end module

      subroutine usep(n, y)
      use pfix
      integer n, i
      double precision y(n)
      end subroutine
"""


def test_private_derived_type_variable(tmp_path):
    # gfortran refused the harness's 'use pstate, only: f2l_s0 => g' (g is
    # PRIVATE); the harness now sets and reads g's components through
    # procedures it compiles inside the module, on its 'end module' line
    _, res = _check(tmp_path, PRIVATE_DERIVED)
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[1] == "apply"
    assert [ln.split()[0] for ln in lines[2:5]] == ["x(4)", "k(4)", "pstate.g.w(3)"]
    assert all(ln.endswith("  ok") for ln in lines[2:5]), res.output
    assert lines[5] == "ok: 3 output(s) of 1 kernel(s) match the original Fortran"


PRIVATE_TYPE_DUMMY = """module ptype
  implicit none
  private
  type pt
    real :: a
    real :: v(4)
  end type
  public :: scalev, plain
contains
  subroutine scalev(p, n, x)
    type(pt) :: p
    integer n, i
    real x(n)
    do i = 1, n
      x(i) = p%a * x(i) + p%v(1)
    end do
  end subroutine
  subroutine plain(n, x)
    integer n
    real x(n)
    x(1) = 2.0 * x(n)
  end subroutine
end module
"""


def test_private_type_of_a_dummy_is_a_note(tmp_path):
    # sibling: the harness's 'use ptype, only: f2l_t0 => pt' failed to compile
    # (a gfortran error for the whole file); now that kernel is named as not
    # checked and the others are checked
    _, res = _check(tmp_path, PRIVATE_TYPE_DUMMY)
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[1:3] == [
        "scalev",
        "  not checked: argument 'p' of 'scalev' has type 'pt', which is PRIVATE in its "
        "module: a harness outside the module cannot make one"]
    assert "ok: 1 output(s) of 2 kernel(s) match the original Fortran" in res.output


def test_accessors_keep_every_line():
    from f2loopy.verify.fortran import with_accessors
    text = PRIVATE_DERIVED_FIXED
    out = with_accessors(text, {"pfix": ["subroutine s() bind(c)", "end subroutine"]})
    assert len(out.splitlines()) == len(text.splitlines())
    assert out.splitlines()[7] == ("      contains; subroutine s() bind(c); end subroutine; "
                                   "end module")
    assert with_accessors(PRIVATE_DERIVED, {"pstate": ["x", "y"]}).splitlines()[-1] == \
        "x; y; end module"
    # a type's 'contains' (type-bound procedures) is not the module's
    assert with_accessors(TYPE_BOUND, {"tb": ["x"]}).splitlines()[-1] == \
        "contains; x; end module"


TYPE_BOUND = """module tb
  type, private :: t
    private
    real :: a
  contains
    procedure :: f
  end type
  type :: u
    sequence
    real b
  end type
  real, private :: hid
  public :: f
end module
"""


def test_a_types_own_private_and_contains_are_not_the_modules():
    # sibling: the type's 'private' made every entity of the module PRIVATE
    # (its public procedures 'not checked') and its 'contains' ended the
    # reading of the module's access statements ('hid' was public)
    from f2loopy.verify.fortran import module_access
    assert module_access(TYPE_BOUND)["tb"][:3] == ("public", {"t", "hid"}, {"f"})

# }}}


# {{{ the harness's own names (found by the check sweep: tests' unit 'a1')

SHIM_NAMES = """subroutine a1(n, x)
  integer n, i
  real x(n)
  do i = 1, n
    x(i) = 1
  end do
end
subroutine f2(n, l0, a0)
  integer n, i
  real l0(n), a0(n)
  do i = 2, n
    l0(i) = l0(i) + a0(i-1)
  end do
end
"""


def test_a_procedure_named_like_a_shim_argument(tmp_path):
    # the shim named its arguments a0, a1, ...: 'call a1(a0, a1)' did not compile
    _, res = _check(tmp_path, SHIM_NAMES)
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == "ok: 2 output(s) of 2 kernel(s) match the original Fortran"

# }}}
