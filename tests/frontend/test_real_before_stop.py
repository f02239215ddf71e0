"""A real printed just before a ``stop`` (issue 27: the Allen-Tildesley
modules' ``write(unit=error_unit, fmt='(a,f15.6)') 'r_cut/box too large ',
r_cut_box`` then ``stop 'Error in force'``): the output is printed with OpenCL
printf where the kernel reaches it (as the diagnostic prints are; reals may
differ in their digits), then the kernel stops with the stop's message."""

from __future__ import annotations

import importlib.util
import subprocess

import numpy as np
import pytest

from f2loopy.frontend import parse_fortran
from f2loopy.pipeline import translate_text, write_outputs
from util import needs_gfortran

FORCE = """module md
  use, intrinsic :: iso_fortran_env, only : error_unit
  implicit none
contains
  subroutine force(n, r, box, f)
    integer, intent(in) :: n
    real(8), intent(in) :: r(n), box
    real(8), intent(out) :: f(n)
    real(8) :: r_cut_box
    integer :: i
    r_cut_box = 2.5d0 / box
    if (r_cut_box > 0.5d0) then
      write (unit=error_unit, fmt='(a,f15.6)') 'r_cut/box too large ', r_cut_box
      stop 'Error in force'
    end if
    do i = 1, n
      f(i) = r(i) * r_cut_box
    end do
  end subroutine force
end module md
"""


def test_the_real_is_a_print_site_and_the_stop_an_error_site():
    k = parse_fortran(FORCE, "md.f90")["force"]
    assert [s.items for s in k.prints] == [(("text", "r_cut/box too large "), ("real", 8))]
    assert [s.actions for s in k.error_sites] == [(("stop", "Error in force"),)]
    from f2loopy.codegen import generate_code
    assert 'printf("r_cut/box too large %15.6f\\n", r_cut_box);' in \
        generate_code(k).device_code
    # list-directed too, and print *
    k = parse_fortran(FORCE.replace("(unit=error_unit, fmt='(a,f15.6)')", "(*,*)"),
                      "md.f90")["force"]
    assert [s.items for s in k.prints] == [(("text", "r_cut/box too large "), ("real", 8))]
    assert [s.actions for s in k.error_sites] == [(("stop", "Error in force"),)]


def test_a_real_after_other_output_before_the_stop_is_refused_located():
    from f2loopy.diagnostics import FortranError
    src = FORCE.replace("      write (unit", "      write (*,*) 'n =', n\n      write (unit")
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "md.f90")
    assert info.value.format().splitlines()[0] == (
        "md.f90:14:72: error: 'r_cut_box' is not an integer: output before a 'stop' that "
        "prints a real must be the only output there (it is printed with printf, the other "
        "output after the kernel); print the integers in the same statement or drop them")


@needs_gfortran
@pytest.mark.usefixtures("opencl_device")
def test_the_kernel_prints_the_real_and_stops_as_gfortran_does(tmp_path, cl_queue, capfd):
    main = tmp_path / "main.f90"
    main.write_text(FORCE + """program main
  use md
  implicit none
  real(8) :: r(3) = [1d0, 2d0, 3d0], f(3)
  call force(3, r, 2d0, f)
end program
""")
    subprocess.run(["gfortran", "-o", str(tmp_path / "prog"), str(main)], check=True,
                   cwd=tmp_path)
    ran = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True)
    assert ran.stderr.startswith("r_cut/box too large        1.250000\nSTOP Error in force")
    path = tmp_path / "md.f90"
    path.write_text(FORCE)
    write_outputs(translate_text(FORCE, path).outputs)
    spec = importlib.util.spec_from_file_location("md_cl", tmp_path / "md_cl.py")
    glue = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(glue)
    capfd.readouterr()
    f = np.zeros(3)
    glue.force(3, np.array([1.0, 2.0, 3.0]), 10.0, f, queue=cl_queue)
    assert np.allclose(f, [0.25, 0.5, 0.75])
    with pytest.raises(glue.KernelStopError) as info:
        glue.force(3, np.array([1.0, 2.0, 3.0]), 2.0, f, queue=cl_queue)
    cl_queue.finish()
    # the printf's text on stdout (gfortran writes it to error_unit), then the stop
    assert capfd.readouterr().out == "r_cut/box too large        1.250000\n"
    assert str(info.value) == f"force: {info.value.where}: STOP Error in force"
