"""Diagnostic WRITE/PRINT in kernels (issue 27, cause 10): list-directed
output of integers, logicals and constant text becomes OpenCL printf, spelled
as gfortran spells it; other output is a located error."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from util import needs_gfortran, translate_and_load

CHECK = """subroutine check_signs(n, x, bad, big)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: x(n)
  integer, intent(out) :: bad
  integer(8), intent(in) :: big
  integer :: i
  integer(2) :: short
  logical :: flag
  bad = 0
  short = 7
  do i = 1, n
    if (x(i) < 0) then
      write(*,*) 'negative at', i, 'of', n
      bad = bad + 1
    end if
  end do
  flag = bad > 1
  print *, 'done:', bad, flag, 'x', '', 'y'
  write(6,*) big, short, -bad
  print *
  print *, ''
  print *, 'a%d 100% "q"'
end subroutine
"""


def test_output_statements_become_print_sites():
    from f2loopy.codegen import generate_code
    k = parse_fortran(CHECK, "c.f90")["check_signs"]
    assert [s.items for s in k.prints] == [
        (("text", "negative at"), ("integer", 4), ("text", "of"), ("integer", 4)),
        (("text", "done:"), ("integer", 4), ("logical", 4), ("text", "x"), ("text", ""),
         ("text", "y")),
        (("integer", 8), ("integer", 2), ("integer", 4)), (), (("text", ""),),
        (("text", 'a%d 100% "q"'),)]
    assert [s.span.line for s in k.prints] == [14, 19, 20, 21, 22, 23]
    code = generate_code(k).source
    assert [line.strip() for line in code.splitlines() if "printf" in line] == [
        'printf(" negative at%12d of%12d\\n", i, n);',
        'printf(" done:%12d %c xy\\n", bad[0], (flag) ? \'T\' : \'F\');',
        'printf("%21ld%7d%12d\\n", big, (int)short_, -bad[0]);', 'printf("\\n");',
        'printf(" \\n");', 'printf(" a%%d 100%% \\"q\\"\\n");']
    from f2loopy.ir.serialize import decode_kernel, encode_kernel
    assert decode_kernel(encode_kernel(k)).prints == k.prints


#: the end of each message about output a kernel cannot print
WHAT = (
    'a kernel prints only list-directed output to the screen (write(*,*), write(6,*) '
    'or print *), or output with a constant format of simple edit descriptors (a, i, '
    'f, e, es, g, l, x, /), of scalars and constant text, with OpenCL printf (write t'
    'he values to an argument and print them after the call)'
)


@pytest.mark.parametrize("stmt, message", [
    ('write(10, *) n', "c.f90:4:3: error: " + "'write(10, *) n' cannot be translated: " + WHAT),
    ("write(*, '(i5)') x(1)", "c.f90:4:3: error: " + "'x(1)' in 'write(*, '(i5)') x(1)' cannot be translated: " + WHAT),
    ("print '(a)', n", "c.f90:4:3: error: " + "'n' in 'print '(a)', n' cannot be translated: " + WHAT),
    ("write(*, '(3x)') n", "c.f90:4:3: error: " + "'write(*, '(3x)') n' cannot be translated: " + WHAT),
    ("write(*, '(b8)') n", "c.f90:4:3: error: " + "edit descriptor 'b8' in 'write(*, '(b8)') n' cannot be translated: " + WHAT),
    ("write(*, '(i3,1p,e12.4)') n", "c.f90:4:3: error: " + "edit descriptor '1p' in 'write(*, '(i3,1p,e12.4)') n' cannot be translated: " + WHAT),
    ("write(*, '(i3,en12.3)') n, x(1)", "c.f90:4:3: error: " + "edit descriptor 'en12.3' in 'write(*, '(i3,en12.3)') n, x(1)' cannot be translated: " + WHAT),
    ("write(*, '(i3,t10,i3)') n", "c.f90:4:3: error: " + "edit descriptor 't10' in 'write(*, '(i3,t10,i3)') n' cannot be translated: " + WHAT),
    ("write(*, '(a,2(i3,1x))') n", "c.f90:4:3: error: " + "'n' in 'write(*, '(a,2(i3,1x))') n' cannot be translated: " + WHAT),
    ("write(*, '(i3,2(1x,i2)') n", "c.f90:4:3: error: " + "edit descriptor '(i3,2(1x,i2)' in 'write(*, '(i3,2(1x,i2)') n' cannot be translated: " + WHAT),
    ('print *, x(1:n)', "c.f90:4:3: error: " + "'x(1 : n)' in 'print *, x(1:n)' cannot be translated: " + WHAT),
    ("print '(3f6.2)', x(2:3)", "c.f90:4:3: error: " + "'x(2 : 3)' in 'print '(3f6.2)', x(2:3)' cannot be translated: " + WHAT),
    ('write(*, *, iostat=n) n', "c.f90:4:3: error: " + "'write(*, *, iostat=n) n' cannot be translated: " + WHAT),
])
def test_other_output_is_a_located_error(stmt, message):
    source = ("subroutine s(n, x)\n  integer :: n\n  real :: x(3)\n  " + stmt +
              "\nend subroutine\n")
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "c.f90")
    assert e.value.format().splitlines()[0] == message


@needs_gfortran
def test_printed_text_is_gfortran_s(tmp_path, cl_queue, capfd):
    """The glue's stdout is the original's, byte for byte."""
    x = np.array([1.0, -2.0, 3.0, -4.0, -0.5])
    main = tmp_path / "main.f90"
    main.write_text(CHECK + """program main
  implicit none
  real(8) :: x(5) = [1d0, -2d0, 3d0, -4d0, -0.5d0]
  integer :: bad
  call check_signs(5, x, bad, 1234567890123_8)
  call check_signs(2, x, bad, -1_8)
end program
""")
    subprocess.run(["gfortran", "-o", str(tmp_path / "prog"), str(main)], check=True,
                   cwd=tmp_path)
    expect = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True,
                            check=True).stdout
    glue, _ = translate_and_load(CHECK, tmp_path)
    capfd.readouterr()
    assert glue.check_signs(5, x, 0, 1234567890123, queue=cl_queue) == 3
    assert glue.check_signs(2, x[:2].copy(), 0, -1, queue=cl_queue) == 1
    cl_queue.finish()
    got = capfd.readouterr().out
    assert got == expect
    assert expect.splitlines()[:2] == [" negative at           2 of           5",
                                       " negative at           4 of           5"]


FORMATTED = """subroutine report(n, alpha, k8, flag)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: alpha
  integer(8), intent(in) :: k8
  logical, intent(in) :: flag
  write ( *, '(a)' ) ' '
  write ( *, '(a,g14.6)' ) '  Stability condition ALPHA = ', alpha
  write ( *, '(a,i8,2x,i4.3,a)' ) '  N = ', n, n, ' done'
  write ( *, '(2x,a5,i0,1x,l2)' ) 'abc', n, flag
  write ( *, '(a2,a,f10.4)' ) 'xyz', 'f: ', alpha
  print '(a,i6)', 'print with format', n
  write ( *, '(a,i14,a)' ) 'k8 = ', k8
  write ( *, "(a,' it''s',i3/a)" ) 'quoted 100%', n, 'next line'
end subroutine
"""


def test_formatted_output_becomes_printf_conversions():
    from f2loopy.ir.prints import printf_format
    k = parse_fortran(FORMATTED, "f.f90")["report"]
    got = [printf_format(site) for site in k.prints]
    assert got[1] == ("  Stability condition ALPHA = %14.6G\n", ("double",))
    assert got[2] == ("  N = %8d  %4.3d done\n", ("int", "int"))
    assert got[3] == ("    abc%d %2c\n", ("int", "logical"))
    assert got[6] == ("k8 = %14ld\n", ("long",))
    assert got[7] == ("quoted 100%% it's%3d\nnext line\n", ("int",))
    from f2loopy.ir.serialize import decode_kernel, encode_kernel
    assert decode_kernel(encode_kernel(k)).prints == k.prints


def test_a_cached_site_with_a_bad_conversion_is_refused():
    from f2loopy.ir.prints import PrintSite, printf_format
    with pytest.raises(ValueError):
        printf_format(PrintSite((("integer", 4),), None, ('%s"); evil("',), formatted=True))


@needs_gfortran
def test_formatted_text_and_integers_are_gfortran_s(tmp_path, cl_queue, capfd):
    """Text, integers and logicals byte for byte; reals in the same widths
    (the G-formatted one with C's digits)."""
    main = tmp_path / "main.f90"
    main.write_text(FORMATTED + """program main
  implicit none
  call report(42, 0.375d0, 123456789012_8, .true.)
  call report(-7, 1.5d0, -3_8, .false.)
end program
""")
    subprocess.run(["gfortran", "-o", str(tmp_path / "prog"), str(main)], check=True,
                   cwd=tmp_path)
    expect = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True,
                            check=True).stdout.splitlines()
    glue, _ = translate_and_load(FORMATTED, tmp_path)
    capfd.readouterr()
    glue.report(42, 0.375, 123456789012, True, queue=cl_queue)
    glue.report(-7, 1.5, -3, False, queue=cl_queue)
    cl_queue.finish()
    got = capfd.readouterr().out.splitlines()
    assert len(got) == len(expect) == 18
    for g, e in zip(got, expect, strict=True):
        if "ALPHA" in e:
            assert len(g) == len(e) and float(g.split("=")[1]) == float(e.split("=")[1])
        else:
            assert g == e


#: the Allen-Tildesley style overlap test: a warning to error_unit with a format
OVERLAP = """module hard_spheres
  use, intrinsic :: iso_fortran_env, only : error_unit
  implicit none
contains
  function overlap(n, r, box)
    logical :: overlap
    integer, intent(in) :: n
    real, intent(in) :: r(3, n), box
    integer :: i, j
    real :: rij(3), rij_sq, rij_mag
    overlap = .false.
    do i = 1, n - 1
      do j = i + 1, n
        rij(:) = r(:, i) - r(:, j)
        rij_sq = sum(rij**2) * box**2
        if (rij_sq < 1.0) then
          rij_mag = sqrt(rij_sq)
          write ( unit=error_unit, fmt='(a,2i5,f15.8)' ) 'Warning: i,j,rij = ', i, j, rij_mag
          write ( error_unit, '(i3,2x)' ) i, j, n
          write ( error_unit, '(a,i2,3x,"pair",4x)' ) 'i=', i
          write ( 0, '(a,l2,2x,a3/2x,a)' ) 'flag', .true., 'abcdef', 'next'
          overlap = .true.
        end if
      end do
    end do
  end function
end module
"""


def test_formatted_output_to_error_unit_stops_reverts_and_drops_trailing_blanks():
    from f2loopy.ir.prints import printf_format
    k = parse_fortran(OVERLAP, "o.f90")["overlap"]
    assert [printf_format(site) for site in k.prints] == [
        ("Warning: i,j,rij = %5d%5d%15.8f\n", ("int", "int", "double")),
        ("%3d\n%3d\n%3d\n", ("int", "int", "int")),
        ("i=%2d   pair\n", ("int",)),
        ("flag%2c  abc\n  next\n", ("logical",))]


@needs_gfortran
def test_formatted_output_to_error_unit_is_gfortran_s(tmp_path, cl_queue, capfd):
    """gfortran writes unit 0 to standard error; the kernel's printf writes the
    same text to standard output (exact reals: digits agree too)."""
    r = np.asfortranarray(np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 3.0, 0.0],
                                    [0.0, 3.0, 0.25]], dtype=np.float32).T)
    main = tmp_path / "main.f90"
    main.write_text(OVERLAP + """program main
  use hard_spheres
  implicit none
  real :: r(3, 4)
  r = reshape([0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 3.0, 0.25], [3, 4])
  print *, overlap(4, r, 1.0)
end program
""")
    subprocess.run(["gfortran", "-o", str(tmp_path / "prog"), str(main)], check=True,
                   cwd=tmp_path)
    ran = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, check=True)
    assert ran.stdout == " T\n"
    glue, _ = translate_and_load(OVERLAP, tmp_path)
    capfd.readouterr()
    assert glue.overlap(4, r, 1.0, queue=cl_queue)
    cl_queue.finish()
    got = capfd.readouterr().out
    assert got == ran.stderr
    assert got.splitlines()[:5] == ["Warning: i,j,rij =     1    2     0.50000000", "  1", "  2",
                                    "  4", "i= 1   pair"]


#: the Allen-Tildesley mesh_function's guard: shape(r) and small arrays as output items
SHAPES = """subroutine mesh_guard(r, q, bad)
  implicit none
  real, dimension(:,:), intent(in) :: r
  real, dimension(:), intent(in) :: q
  integer, intent(out) :: bad
  integer :: n, nr(3)
  real :: w(2, 0:1)
  n = size(q)
  nr = [4, -5, 6]
  w(:, 0) = [1.5, 2.5]
  w(:, 1) = [3.5, -4.25]
  bad = 0
  if (any(shape(r) /= [3, n])) then
    write (*, '(a,4i15)') 'r shape error', shape(r), 3, n
    write (*, '(3i3/4f6.2)') nr, w
    print *, 'nr', nr, shape(w)
    bad = 1
  end if
end subroutine
"""


def test_shape_and_small_arrays_print_element_by_element():
    from f2loopy.ir.prints import printf_format
    k = parse_fortran(SHAPES, "s.f90")["mesh_guard"]
    assert [printf_format(site) for site in k.prints] == [
        ("r shape error%15d%15d%15d%15d\n", ("int",) * 4),
        ("%3d%3d%3d\n%6.2f%6.2f%6.2f%6.2f\n", ("int",) * 3 + ("double",) * 4),
        (" nr%12d%12d%12d%12d%12d\n", ("int",) * 5)]
    with pytest.raises(FortranError) as e:
        parse_fortran(SHAPES.replace("'(3i3/4f6.2)'", "'(3i3/2f6.2)'"), "s.f90")
    assert e.value.format().splitlines()[0] == (
        "s.f90:15:5: error: 'w' in 'write (*, '(3i3/2f6.2)') nr, w' cannot be translated: " + WHAT)


@needs_gfortran
def test_shape_and_small_arrays_print_as_gfortran_does(tmp_path, cl_queue, capfd):
    main = tmp_path / "main.f90"
    main.write_text("module guards\ncontains\n" + SHAPES + """end module
program main
  use guards
  implicit none
  real :: r(3, 5), q(4)
  integer :: bad
  r = 0
  q = 0
  call mesh_guard(r, q, bad)
  call mesh_guard(r(:, 1:4), q, bad)
end program
""")
    subprocess.run(["gfortran", "-o", str(tmp_path / "prog"), str(main)], check=True,
                   cwd=tmp_path)
    expect = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True,
                            check=True).stdout
    glue, _ = translate_and_load(SHAPES, tmp_path)
    capfd.readouterr()
    assert glue.mesh_guard(np.zeros((3, 5), np.float32, order="F"), np.zeros(4, np.float32), 0,
                           queue=cl_queue) == 1
    assert glue.mesh_guard(np.zeros((3, 4), np.float32, order="F"), np.zeros(4, np.float32), 0,
                           queue=cl_queue) == 0
    cl_queue.finish()
    got = capfd.readouterr().out
    assert got == expect
    assert got.splitlines()[0] == "r shape error" + "".join(f"{v:15d}" for v in (3, 5, 3, 4))


def test_shape_in_the_output_before_a_stop(tmp_path, cl_queue):
    """mesh_function's guard as written: the shape is part of the stop's message."""
    source = ("module guard_stop\n  use, intrinsic :: iso_fortran_env, only: error_unit\n"
              "contains\n" + SHAPES.replace(
                  "    write (*, '(3i3/4f6.2)') nr, w\n    print *, 'nr', nr, shape(w)\n",
                  "    stop 'Error in mesh_guard'\n").replace(
                  "write (*, '(a,4i15)')", "write (unit=error_unit, fmt='(a,4i15)')") +
              "end module\n")
    k = parse_fortran(source, "g.f90")["mesh_guard"]
    assert [s.actions for s in k.error_sites] == [
        (("write", "0", "(a,4i15)", (("text", "r shape error"),) + tuple(("value", v) for v in range(4))),
         ("stop", "Error in mesh_guard"))]
    glue, _ = translate_and_load(source, tmp_path)
    with pytest.raises(glue.KernelStopError) as info:
        glue.mesh_guard(np.zeros((3, 5), np.float32, order="F"), np.zeros(4, np.float32), 0,
                        queue=cl_queue)
    assert str(info.value).endswith(": r shape error 3 5 3 4; STOP Error in mesh_guard")
    assert list(info.value.values[:4]) == [3, 5, 3, 4]
    assert glue.mesh_guard(np.zeros((3, 4), np.float32, order="F"), np.zeros(4, np.float32), 0,
                           queue=cl_queue) == 0


#: formats with groups: repeated, nested, and reversion to the last top-level group
GROUPS = """subroutine groups(n, m, r, s)
  implicit none
  integer, intent(in) :: n, m
  real, intent(in) :: r, s
  write (*, '(a,2(1x,i3))') 'p', n, m
  write (*, '(a,2(1x,i3))') 'p', n, m, n, m, n
  write (*, '(a,3(1x,f6.2))') 'q', r, s
  write (*, '(i2,(1x,a,i3))') n, 'a', m, 'b', n
  write (*, '(2(i3,2(1x,f5.1)),a)') n, r, s, m, r, s, 'end'
  write (*, '(a,2(1x,i3)/)') 'z', n
end subroutine
"""


def test_format_groups_repeat_and_revert_to_the_last_group():
    from f2loopy.ir.prints import printf_format
    k = parse_fortran(GROUPS, "g.f90")["groups"]
    assert [printf_format(site)[0] for site in k.prints] == [
        "p %3d %3d\n", "p %3d %3d\n %3d %3d\n %3d\n", "q %6.2f %6.2f\n", "%2d a%3d\n b%3d\n",
        "%3d %5.1f %5.1f%3d %5.1f %5.1fend\n", "z %3d\n"]
    with pytest.raises(FortranError) as e:
        parse_fortran(GROUPS.replace("'(a,3(1x,f6.2))'", "'(a,3(1x,2(1x,3(f6.2))))'"), "g.f90")
    assert e.value.format().splitlines()[0] == (
        "g.f90:7:3: error: edit descriptor '3(f6.2)' in 'write (*, '(a,3(1x,2(1x,3(f6.2))))') "
        "'q', r, s' cannot be translated: " + WHAT)


@needs_gfortran
def test_format_groups_print_as_gfortran_does(tmp_path, cl_queue, capfd):
    main = tmp_path / "main.f90"
    main.write_text(GROUPS + """program main
  call groups(42, -7, 1.5, -2.5)
end program
""")
    subprocess.run(["gfortran", "-o", str(tmp_path / "prog"), str(main)], check=True,
                   cwd=tmp_path)
    expect = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True,
                            check=True).stdout
    glue, _ = translate_and_load(GROUPS, tmp_path)
    capfd.readouterr()
    glue.groups(42, -7, 1.5, -2.5, queue=cl_queue)
    cl_queue.finish()
    assert capfd.readouterr().out == expect


#: Fortran's Ew.d: a mantissa in [0.1, 1), as gfortran writes it (not C's %E)
E_FORMAT = """subroutine e_format(x, y)
  implicit none
  real, intent(in) :: x
  real(8), intent(in) :: y
  write (*, '(a,e12.4,1x,e15.6,es12.3)') 'e:', x, y, x
  write (*, '(e10.3)') x
end subroutine
"""


def test_e_format_is_a_mantissa_and_an_exponent():
    from f2loopy.codegen import generate_code
    from f2loopy.ir.prints import printf_format
    k = parse_fortran(E_FORMAT, "e.f90")["e_format"]
    assert [printf_format(site) for site in k.prints] == [
        ("e:%8.4f%c%c%02d %11.6f%c%c%02d%12.3E\n", ("fortran_e4.4", "fortran_e8.6", "double")),
        ("%6.3f%c%c%02d\n", ("fortran_e4.3",))]
    code = generate_code(k).source
    assert ('printf("%6.3f%c%c%02d\\n", f2l_m0, (abs(f2l_e0) > 99) ? (f2l_e0 < 0 ? \'-\' : '
            "'+') : 'E', (abs(f2l_e0) > 99) ? '0' + abs(f2l_e0) / 100 : (f2l_e0 < 0 ? '-' : '+'), "
            "abs(f2l_e0) % 100); }") in code
    assert "f2l_e0 = (int)floor(log10(fabs(f2l_m0))) + 1;" in code


@needs_gfortran
def test_e_format_prints_as_gfortran_does(tmp_path, cl_queue, capfd):
    values = [(1.5, 6.02e23), (-0.00375, -1.0), (0.0, 0.0), (99999.0, 0.099999999),
              (2.5e-30, 1e-300)]
    main = tmp_path / "main.f90"
    main.write_text(E_FORMAT + "program main\n" + "".join(
        f"  call e_format({x!r}, {y!r}_8)\n" for x, y in values) + "end program\n")
    subprocess.run(["gfortran", "-o", str(tmp_path / "prog"), str(main)], check=True,
                   cwd=tmp_path)
    expect = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True,
                            check=True).stdout
    glue, _ = translate_and_load(E_FORMAT, tmp_path)
    capfd.readouterr()
    for x, y in values:
        glue.e_format(x, y, queue=cl_queue)
    cl_queue.finish()
    got = capfd.readouterr().out
    assert got == expect, (got, expect)


#: formats in 'format' statements (print 100, ...; write(*, 100); write(0, fmt=300))
LABELLED = """subroutine labelled(i, x)
  integer i
  real x
  print 100, 'i=', i, x
  write(*, 100) 'i=', i, x
  write(*, fmt=200) i
  if (i > 3) then
    write(0, 300) i
300 format('big ', i0, 1x, 'done')
  end if
100 format(a, i3, f6.2)
200 format(' ''q'' ', 2x, i4)
end
"""


def test_format_statements_give_the_format():
    from f2loopy.ir.prints import printf_format
    k = parse_fortran(LABELLED, "l.f90")["labelled"]
    assert [printf_format(site)[0] for site in k.prints] == [
        "i=%3d%6.2f\n", "i=%3d%6.2f\n", " 'q'   %4d\n", "big %d done\n"]
    with pytest.raises(FortranError) as e:
        parse_fortran(LABELLED.replace("write(*, fmt=200)", "write(*, fmt=201)"), "l.f90")
    assert e.value.format().splitlines()[0] == (
        "l.f90:6:3: error: format label '201' in 'write(*, fmt=201) i' cannot be translated: "
        + WHAT)


@needs_gfortran
def test_format_statements_print_as_gfortran_does(tmp_path, cl_queue, capfd):
    main = tmp_path / "main.f90"
    main.write_text(LABELLED + "program main\n  call labelled(5, 1.25)\n  call labelled(2, -3.5)\n"
                    "end program\n")
    subprocess.run(["gfortran", "-o", str(tmp_path / "prog"), str(main)], check=True,
                   cwd=tmp_path)
    ran = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, check=True)
    glue, _ = translate_and_load(LABELLED, tmp_path)
    capfd.readouterr()
    glue.labelled(5, 1.25, queue=cl_queue)
    glue.labelled(2, -3.5, queue=cl_queue)
    cl_queue.finish()
    got = capfd.readouterr().out.splitlines()
    expect = ran.stdout.splitlines()         # (unit 0: gfortran's stderr)
    assert [line for line in got if not line.startswith("big")] == expect
    assert [line for line in got if line.startswith("big")] == ran.stderr.splitlines() == [
        "big 5 done"]
