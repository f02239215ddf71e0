"""Message dummies (issue 27, CCPP physics): ``character(len=*),
intent(out) :: errmsg`` assigned constant texts becomes an int32 code of the
text assigned (0: none); the Python glue returns the text, ``f2loopy check``
compares it.  Unit tests (IR facts, exact messages) and differential tests
against gfortran on Fortran written in the style of the CCPP ``_run``
subroutines."""

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError, RaceError
from f2loopy.frontend import parse_fortran
from f2loopy.ir.roles import Character, Dummy
from f2loopy.verify.honesty import MESSAGE_INPUT
from f2loopy.verify.runs import _compare_text
from util import fortran_reference, needs_gfortran, translate_and_load

SCHEME = """module damp_scheme
  implicit none
  character(len=*), parameter :: myname = 'damp_run'
contains
  subroutine damp_run(im, km, dt, t, q, errmsg, errflg)
    integer, intent(in) :: im, km
    real(8), intent(in) :: dt
    real(8), intent(inout) :: t(im, km)
    real(8), intent(out) :: q(im, km)
    character(len=*), intent(out) :: errmsg
    integer, intent(out) :: errflg
    integer :: i, k
    errmsg = ''
    errflg = 0
    if (dt <= 0.0d0) then
      errmsg = myname // ': time step must be positive'
      errflg = 1
      return
    end if
    do k = 1, km
      do i = 1, im
        if (t(i, k) < -0.5d0) then
          errmsg = 'damp_run: temperature below -0.5 at some point'
          errflg = 2
        else if (t(i, k) > 0.5d0) then
          errmsg = "damp_run: temperature above 0.5 (it's hot)"
          errflg = 3
        end if
        q(i, k) = dt * t(i, k)
        t(i, k) = t(i, k) - q(i, k)
      end do
    end do
  end subroutine damp_run

  subroutine keep_run(n, x, errmsg, errflg)
    integer, intent(in) :: n
    real(8), intent(inout) :: x(n)
    character(len=*), intent(inout) :: errmsg
    integer, intent(inout) :: errflg
    integer :: i
    do i = 1, n
      if (x(i) < 0.0d0) then
        errmsg = 'keep_run: negative'
        errflg = 1
      end if
      x(i) = 2.0d0 * x(i)
    end do
  end subroutine keep_run
end module damp_scheme
"""

TEXTS = ("", "damp_run: time step must be positive",
         "damp_run: temperature below -0.5 at some point",
         "damp_run: temperature above 0.5 (it's hot)")


def test_message_dummy_in_the_ir():
    tu = parse_fortran(SCHEME, "damp.f90")
    arg = tu["damp_run"].arg_dict["errmsg"]
    assert arg.dtype == np.int32 and arg.intent == "out"
    assert arg.role == Dummy(character=Character(length=None, messages=TEXTS))
    text = str(tu["damp_run"])
    assert "errmsg = 1  {id=errmsg}" in text
    assert "if (dt <= 0.0) errmsg = 2" in text
    keep = tu["keep_run"].arg_dict["errmsg"]
    assert keep.intent == "inout"
    assert keep.role == Dummy(character=Character(messages=("keep_run: negative",)))


def test_message_table_survives_the_cache_format():
    from f2loopy.ir.serialize import roundtrip
    k = parse_fortran(SCHEME, "damp.f90")["damp_run"]
    assert roundtrip(k).arg_dict["errmsg"].role.character.messages == TEXTS


def test_a_loop_assigning_messages_stays_sequential():
    # two iterations may assign different texts: the last in the original
    # order is the one left, so the loop must not run in parallel
    from f2loopy.codegen import generate_code
    code = generate_code(parse_fortran(SCHEME, "damp.f90")["damp_run"]).source
    assert "reqd_work_group_size(1, 1, 1)" in code
    assert "errmsg[0] = 3;" in code and "errmsg[0] = 4;" in code


def _error(body, decls=""):
    src = ("subroutine s(n, errmsg, errflg)\n  integer, intent(in) :: n\n"
           "  character(len=*), intent(out) :: errmsg\n  integer, intent(out) :: errflg\n"
           f"  character(len=8) :: name\n{decls}  errflg = 0\n{body}end subroutine\n")
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "s.f90")
    return info.value.format().splitlines()[0]


@pytest.mark.parametrize("body, message", [
    ("  name = 'x'\n  errmsg = 'bad n: ' // name\n", "s.f90:8:25: error: 'errmsg' is assigned "
     "a text computed at run time (name): a kernel only returns which of its constant "
     "messages it assigned; assign a character constant (or a concatenation of constants) "
     "and return the value in an integer argument"),
    ("  write(errmsg, '(a,i0)') 'bad n ', n\n", "s.f90:7:9: error: 'write' into character "
     "variable 'errmsg' (an internal write) is not supported: a kernel cannot build text at "
     "run time; assign a constant message (errmsg = 'text') and return the values in numeric "
     "arguments"),
    ("  errmsg = ''\n  if (errmsg == 'x') errflg = 1\n", "s.f90:8:7: error: 'errmsg' is a "
     "character argument the kernel assigns (a message): a kernel only records which "
     "constant text it assigned, so it can only assign 'errmsg', not read, compare or pass "
     "it"),
    ("  errmsg = trim('a')\n", "s.f90:7:12: error: 'errmsg' is assigned a text computed at "
     "run time (TRIM('a')): a kernel only returns which of its constant messages it "
     "assigned; assign a character constant (or a concatenation of constants) and return "
     "the value in an integer argument"),
])
def test_run_time_texts_and_reads_are_located_errors(body, message):
    assert _error(body) == message


CALLEE = """module step_scheme
  implicit none
contains
  subroutine check_dt(dt, msg, flag)
    real(8), intent(in) :: dt
    character(len=*), intent(inout) :: msg
    integer, intent(inout) :: flag
    if (dt <= 0.0d0) then
      msg = 'step_run: bad time step'
      flag = 1
    end if
  end subroutine check_dt
  subroutine step_run(n, dt, x, errmsg, errflg)
    integer, intent(in) :: n
    real(8), intent(in) :: dt
    real(8), intent(inout) :: x(n)
    character(len=*), intent(out) :: errmsg
    integer, intent(out) :: errflg
    integer :: i
    errmsg = ''
    errflg = 0
    call check_dt(dt, errmsg, errflg)
    if (errflg /= 0) return
    do i = 1, n
      x(i) = x(i) * dt
    end do
  end subroutine step_run
end module step_scheme
"""


def test_a_called_procedure_may_assign_the_message():
    # CCPP schemes pass errmsg on to helpers that set it: the helper's
    # texts join the kernel's table
    k = parse_fortran(CALLEE, "step.f90")["step_run"]
    assert k.arg_dict["errmsg"].role == Dummy(character=Character(
        messages=("", "step_run: bad time step")))
    assert "if (dt <= 0.0) errmsg = 2" in str(k)


def test_a_called_procedure_reading_the_message_is_refused():
    src = ("subroutine s(n, errmsg)\n  integer n\n  character(len=*) errmsg\n"
           "  errmsg = 'a'\n  call look(errmsg, n)\ncontains\n  subroutine look(m, k)\n"
           "    character(len=*) m\n    integer k\n    if (m == 'a') k = 1\n"
           "  end subroutine\nend subroutine\n")
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "s.f90")
    assert info.value.format().splitlines()[0] == (
        "s.f90:5:13: error: 'errmsg' is a character argument the kernel assigns (a message): "
        "a kernel only records which constant text it assigned, so it can only assign "
        "'errmsg', not read, compare or pass it")


@needs_gfortran
@pytest.mark.usefixtures("opencl_device")
@pytest.mark.parametrize("dt", [0.5, 0.0])
def test_message_set_by_a_called_procedure_against_gfortran(dt, tmp_path, cl_queue):
    module, _ = translate_and_load(CALLEE, tmp_path, filename="step.f90")
    ref = fortran_reference(CALLEE, "step.f90")
    x0 = np.array([1.0, 2.0, 3.0])
    x_ref, x_cl = x0.copy(), x0.copy()
    out = ref.call_named("step_run", {"n": 3, "dt": dt, "x": x_ref, "errmsg": "z" * 30,
                                      "errflg": 0})
    text, flag = module.step_run(3, dt, x_cl, "z" * 30, 0, queue=cl_queue)
    assert text.ljust(30) == out["errmsg"] and flag == out["errflg"]
    assert text == ("" if dt > 0 else "step_run: bad time step")
    assert np.array_equal(x_cl, x_ref)


def test_check_compares_the_text_as_fortran_assignment_leaves_it():
    want = "damp_run: negative".ljust(24)
    assert _compare_text("errmsg", "damp_run: negative", want).passed
    assert _compare_text("errmsg", "damp_run: negative and more", want[:10]).passed
    bad = _compare_text("errmsg", "damp_run: positive", want)
    assert not bad.passed
    assert bad.note == ("the text differs: got 'damp_run: positive', expected "
                        "'damp_run: negative'")
    assert not _compare_text("errmsg", 3, want).passed
    assert len(MESSAGE_INPUT) == 64 and MESSAGE_INPUT not in TEXTS


@needs_gfortran
@pytest.mark.usefixtures("opencl_device")
@pytest.mark.parametrize("dt, tmax, tmin", [(0.1, 0.4, -0.4), (0.0, 0.4, -0.4),
                                            (0.1, 0.9, -0.4), (0.1, 0.4, -0.9),
                                            (0.1, 0.9, -0.9)])
def test_python_glue_returns_the_text_as_gfortran_assigns_it(dt, tmax, tmin, tmp_path, cl_queue):
    module, _ = translate_and_load(SCHEME, tmp_path, filename="damp.f90")
    ref = fortran_reference(SCHEME, "damp.f90")
    im, km = 5, 4
    t0 = np.linspace(tmin, tmax, im * km).reshape(im, km, order="F")
    if tmin < -0.5 and tmax > 0.5:
        t0 = t0[::-1, ::-1].copy(order="F")          # the last offender is the low one
    for caller in ("x" * 60, "short"):
        t_ref, q_ref = t0.copy(order="F"), np.zeros((im, km), order="F")
        out = ref.call_named("damp_run", {"im": im, "km": km, "dt": dt, "t": t_ref, "q": q_ref,
                                    "errmsg": caller, "errflg": 0})
        t_cl, q_cl = t0.copy(order="F"), np.zeros((im, km), order="F")
        text, flag = module.damp_run(im, km, dt, t_cl, q_cl, caller, 0, queue=cl_queue)
        assert isinstance(text, str) and text in TEXTS
        # Fortran's assignment pads the text to the caller's length or cuts it
        assert text[:len(caller)].ljust(len(caller)) == out["errmsg"]
        assert flag == out["errflg"]
        assert np.array_equal(t_cl, t_ref) and np.array_equal(q_cl, q_ref)


@needs_gfortran
@pytest.mark.usefixtures("opencl_device")
def test_inout_message_keeps_the_callers_text(tmp_path, cl_queue):
    module, _ = translate_and_load(SCHEME, tmp_path, filename="damp.f90")
    x = np.array([1.0, 2.0, 3.0])
    assert module.keep_run(3, x, "earlier scheme's text", 7, queue=cl_queue) == \
        ("earlier scheme's text", 7)
    x = np.array([1.0, -2.0, 3.0])
    assert module.keep_run(3, x, "earlier scheme's text", 0, queue=cl_queue) == \
        ("keep_run: negative", 1)
    with pytest.raises(module.KernelArgumentError) as info:
        module.keep_run(3, x, None, 0, queue=cl_queue)
    assert str(info.value) == "keep_run: argument 'errmsg' must be a character (str), got " \
        "NoneType"


DECLARED = """subroutine fixed_run(n, errmsg, errflg)
  integer, intent(in) :: n
  character(len=10), intent(out) :: errmsg
  integer, intent(out) :: errflg
  errmsg = ''
  errflg = 0
  if (n > 3) then
    errmsg = 'fixed_run: n is too large'
    errflg = 1
  end if
end subroutine
"""


@needs_gfortran
@pytest.mark.usefixtures("opencl_device")
def test_declared_length_message_holds_so_many_characters(tmp_path, cl_queue):
    module, _ = translate_and_load(DECLARED, tmp_path, filename="fixed.f90")
    ref = fortran_reference(DECLARED, "fixed.f90")
    out = ref.call_named("fixed_run", {"n": 5, "errmsg": "y" * 10, "errflg": 0})
    assert out["errmsg"] == "fixed_run:"
    assert module.fixed_run(5, "y" * 10, 0, queue=cl_queue) == ("fixed_run:", 1)
    assert module.fixed_run(1, "y" * 10, 0, queue=cl_queue) == ("", 0)


@pytest.mark.usefixtures("sandbox_process")
def test_a_transform_running_message_writes_in_parallel_is_refused(tmp_path):
    # two work-groups could assign different texts: not the sequential result
    from f2loopy.pipeline import translate_text
    src = """subroutine race_run(im, t, q, errmsg)
  integer, intent(in) :: im
  real(8), intent(in) :: t(im)
  real(8), intent(out) :: q(im)
  character(len=*), intent(out) :: errmsg
  integer :: i
  do i = 1, im
    if (t(i) < 0.0d0) errmsg = 'negative'
    if (t(i) > 1.0d0) errmsg = 'too large'
    q(i) = 0.5d0 * t(i)
  end do
end subroutine race_run
!$loopy begin
! (k,) = parse_fortran(SOURCE, FILENAME)
! RESULT = [tag_inames(k, {"i": "g.0"})]
!$loopy end
"""
    path = tmp_path / "race.f90"
    path.write_text(src)
    with pytest.raises(RaceError) as info:
        translate_text(src, path)
    assert info.value.format().splitlines()[0].endswith(
        "race.f90:8:23: error: write race on 'errmsg': instruction 'errmsg' (line 8) writes "
        "the same element from different work-groups along 'i' (g.0)")


HOSTILE = ('*/ "\\n\\" ??/ %s {0} \'\' \\\\ end', "x'); import os; ('", '"""', "é")


@pytest.mark.usefixtures("gcc", "gfortran", "opencl_headers")
def test_hostile_message_texts_stay_text_in_every_glue(tmp_path):
    # texts come from the file: each glue must hold them as data, exactly
    import ast
    import subprocess
    from f2loopy.pipeline import translate_text, write_outputs
    lines = "\n".join(f"  if (n == {k}) errmsg = {_fortran_literal(t)}"
                      for k, t in enumerate(HOSTILE))
    src = (f"subroutine hostile_run(n, errmsg)\n  integer, intent(in) :: n\n"
           f"  character(len=*), intent(out) :: errmsg\n{lines}\nend subroutine\n")
    path = tmp_path / "hostile.f90"
    path.write_text(src, encoding="utf-8")
    assert parse_fortran(src, "hostile.f90")["hostile_run"].arg_dict[
        "errmsg"].role.character.messages == HOSTILE
    write_outputs(translate_text(src, path).outputs)
    glue = (tmp_path / "hostile_cl.py").read_text(encoding="utf-8")
    tree = ast.parse(glue)
    tables = [ast.literal_eval(n) for n in ast.walk(tree)
              if isinstance(n, ast.Tuple) and n.elts and all(
                  isinstance(e, ast.Constant) and isinstance(e.value, str) for e in n.elts)
              and len(n.elts) == len(HOSTILE)]
    assert HOSTILE in tables
    subprocess.run(["gcc", "-std=c11", "-Wall", "-Werror", "-fsyntax-only",
                    str(tmp_path / "hostile_cl.c")], check=True, capture_output=True)
    from fortran_util import build_runtime
    runtime = build_runtime(tmp_path)
    subprocess.run(["gfortran", "-fsyntax-only", "-std=f2018", "-I", str(runtime),
                    str(tmp_path / "hostile_cl.f90")], check=True, capture_output=True,
                   cwd=tmp_path)


def _fortran_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
