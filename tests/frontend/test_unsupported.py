"""Every construct f2loopy rejects (issue 3): the exact located message, the
source line and caret, exit code 1 from ``f2loopy translate`` and no file
written; ``f2loopy show`` lists every unsupported statement of a file."""

import pytest
from click.testing import CliRunner

from f2loopy import FortranError, UnsupportedFeatureError, parse_fortran
from f2loopy.cli import main

STMT = """subroutine s(n, a, x)
  implicit none
  integer n, i
  real a(n), x
  {}
end subroutine
"""

DECL = """subroutine s(n, a, x)
  implicit none
  integer n
  real a(n), x
  {}
  x = 1
end subroutine
"""

# (statement, expected diagnostic, caret line); the statement is on line 5
STATEMENTS = [
    ("print '(z8.3)', x", "t.f90:5:3: error: edit descriptor 'z8.3' in 'print '(z8.3)', x' cannot be translated: a kernel "
     "prints only list-directed output to the screen (write(*,*), write(6,*) or print *), or output with a "
     "constant format of simple edit descriptors (a, i, f, e, es, g, l, x, /), of "
     "scalars and constant text, with OpenCL printf (write the values to an argument and "
     "print them after the call)", "^~~~~"),
    ("write(10,*) x", "t.f90:5:3: error: 'write(10,*) x' cannot be translated: a kernel "
     "prints only list-directed output to the screen (write(*,*), write(6,*) or print *), or output with a "
     "constant format of simple edit descriptors (a, i, f, e, es, g, l, x, /), of "
     "scalars and constant text, with OpenCL printf (write the values to an argument and "
     "print them after the call)", "^~~~~"),
    ("read(*,*) x", "t.f90:5:3: error: 'read' statements are not supported (kernels cannot do "
     "I/O)", "^~~~"),
    ("open(unit=10, file='f')", "t.f90:5:3: error: 'open' statements are not supported "
     "(kernels cannot do I/O)", "^~~~"),
    ("close(10)", "t.f90:5:3: error: 'close' statements are not supported (kernels cannot do "
     "I/O)", "^~~~~"),
    ("go to 10", "t.f90:5:3: error: 'go to 10' does not jump to a later statement of the "
     "same or an enclosing block (only such a forward goto is supported)", "^~~~~"),
    ("goto (10, 20) n", "t.f90:5:3: error: 'goto 10' does not jump to a later statement of "
     "the same or an enclosing block (only such a forward goto is supported)", "^~~~"),
    ("exit outer", "t.f90:5:8: error: 'exit outer': no enclosing loop is called 'outer' "
     "(leaving other constructs is not supported)", "^~~~~"),
    ("error stop x", "t.f90:5:14: error: only a constant text or number can be a stop code in "
     "a kernel", "^"),
    ("stop n", "t.f90:5:8: error: only a constant text or number can be a stop code in a "
     "kernel", "^"),
    ("do i = 1, n, x\n    a(i) = 0\n  end do", "t.f90:5:16: error: loop step must be an "
     "integer", "^"),
    ("do i = 1, n, 0\n    a(i) = 0\n  end do", "t.f90:5:16: error: loop step is zero", "^"),
    ("where (a > 0) x = 1.0", "t.f90:5:17: error: an assignment in a 'where' must assign an "
     "array (or an array section)", "^"),
    ("where (a + 1.0) a = 0", "t.f90:5:10: error: the mask of a 'where' must be logical",
     "^~~~~~~"),
    ("where (x > 0)\n    a = 0\n  end where", "t.f90:5:10: error: the mask of a 'where' must "
     "be an array expression", "^~~~~"),
    ("where (a(1:3) > 0)\n    a(1:4) = 0\n    a(2:4) = 1\n  end where", "t.f90:6:5: error: "
     "array shapes do not conform: dimension 1 of the mask has 3 elements, of the assignment "
     "4", "^~~~~~~~~~"),
    ("forall (i=1:n)\n    a(i) = 0\n  end forall", "t.f90:5:3: error: 'forall' constructs "
     "are not supported (use 'do concurrent')", "^~~~~~"),
    ("associate (y => a(1:2))\n  end associate", "t.f90:5:14: error: associating 'y' with an "
     "array element or section is not supported (associate a variable, a component or a "
     "scalar expression)", "^"),
    ("block\n  end block", "t.f90:5:3: error: 'block' constructs are not supported", "^~~~~"),
    ("nullify(x)", "t.f90:5:3: error: 'nullify' is not supported", "^~~~~~~"),
    ("rewind(10)", "t.f90:5:3: error: 'rewind' is not supported", "^~~~~~"),
    ("allocate(a(10))", "t.f90:5:3: error: 'allocate' is not supported in a kernel "
     "(kernels cannot allocate memory): allocate the module array before the call (from "
     "Python assign a Fortran-ordered numpy array to glue.<module>.<array>, from Fortran "
     "allocate it as before) and deallocate it after", "^~~~~~~~"),
    ("deallocate(a)", "t.f90:5:3: error: 'deallocate' is not supported in a kernel "
     "(kernels cannot allocate memory): allocate the module array before the call (from "
     "Python assign a Fortran-ordered numpy array to glue.<module>.<array>, from Fortran "
     "allocate it as before) and deallocate it after", "^~~~~~~~~~"),
    ("x = 'abc'", "t.f90:5:7: error: character strings are not supported", "^~~~~"),
    ("a(1:3) = [1.0, 2.0]", "t.f90:5:3: error: array shapes do not conform: dimension 1 of "
     "'constructor' has 2 elements, of 'a' 3", "^~~~~~~~~~~~~~~~~~~"),
    ("x = a", "t.f90:5:7: error: whole-array use of 'a' is not supported here (write an "
     "explicit loop or index it)", "^"),
    ("x = a(1:2)", "t.f90:5:7: error: array section of 'a' is not supported here", "^"),
    ("a(int(a(1:n))) = 0.0", "t.f90:5:3: error: array section of 'a' is not supported here",
     "^"),
    ("x = sum(a, dim=2)", "t.f90:5:7: error: dimension 2 of the argument of 'sum' does not "
     "exist (it has 1)", "^~~"),
    ("x = sum(a, mask=x > 0)", "t.f90:5:14: error: the 'mask' argument of 'sum' must be an "
     "array of the shape of the array argument", "^~~~"),
    ("x = count(a)", "t.f90:5:7: error: the argument of 'count' must be logical", "^~~~~"),
    ("x = matmul(a, a)", "t.f90:5:7: error: 'matmul' of arrays of rank 1 and 1 (one must be a "
     "matrix, neither of rank above 2)", "^~~~~~"),
    ("a = transpose(a)", "t.f90:5:7: error: the argument of 'transpose' must have rank 2, not "
     "1", "^~~~~~~~~"),
    ("x = maxloc(a)", "t.f90:5:7: error: the result of 'maxloc' is an array: use it in an "
     "array assignment or an array expression", "^~~~~~"),
    ("a = maxloc(a, 1, a > 0.0, 4)", "t.f90:5:7: error: the 'kind' and 'back' arguments of "
     "'maxloc' are not supported", "^~~~~~"),
    ("a = cshift(a, 1, 2)", "t.f90:5:7: error: dimension 2 of the argument of 'cshift' does "
     "not exist (it has 1)", "^~~~~~"),
    ("x = (/ 1.0, 2.0 /)", "t.f90:5:7: error: an array constructor is an array: use it in an "
     "array assignment or an array expression", "^~"),
    ("a(1:4) = [((a(i)*i, i = 1, 2), i = 1, 2)]", "t.f90:5:12: error: an implied-do in an "
     "array constructor may have one value, not a list or another implied-do", "^"),
    ("x = merge(x, 1.0d0, n > 0)", "t.f90:5:7: error: arguments of 'merge' differ in type "
     "(real(4) and real(8)): gfortran rejects this", "^~~~~"),
    ("x = ishft(x, 2)", "t.f90:5:7: error: arguments of 'ishft' must be integers", "^~~~~"),
    ("x = tan((1.0, 2.0))", "t.f90:5:7: error: intrinsic 'tan' of a complex argument is not "
     "supported", "^~~"),
    ("x = max(n, 2.0)", "t.f90:5:7: error: arguments of 'max' mix integer and real values "
     "(convert them with real() or int())", "^~~"),
    ("x = sign(x, n)", "t.f90:5:7: error: arguments of 'sign' mix integer and real values "
     "(convert them with real() or int())", "^~~~"),
    ("x = mod(x, 2)", "t.f90:5:7: error: arguments of 'mod' mix integer and real values "
     "(convert them with real() or int())", "^~~"),
    ("i = n / 2; a(2:i) = a(1:i-1) + a(3:i+1)", "t.f90:5:14: error: the right-hand side "
     "reads elements of 'a' that the assignment changes, and the temporary array this needs "
     "would have a size that depends on 'i' (assign through a temporary array of your own)",
     "^"),
    ("x = 1.0e39", "t.f90:5:7: error: real constant 1.0E39 overflows its kind", "^~~~~~"),
    ("i = 2**31", "t.f90:5:3: error: arithmetic overflow or invalid operation in a constant "
     "expression (the compiler would reject it)", "^~~~~~~~~"),
    ("x = 1.0d300 * 1.0d300", "t.f90:5:7: error: arithmetic overflow or invalid operation in "
     "a constant expression (the compiler would reject it)", "^~~~~~~~~~~~~~~~~"),
    ("i = 10000000000", "t.f90:5:3: error: the value 10000000000 does not fit in integer",
     "^"),
    ("call ext(x)", "t.f90:5:8: error: subroutine 'ext' is not defined in this file and no "
     "search path was given (name the file that defines it on the command line, or its "
     "directory with -I DIR)", "^~~"),
    ("select case (x)\n  case (1)\n    x = 0\n  end select", "t.f90:5:16: error: 'select "
     "case' is only supported on integer expressions", "^"),
]

DECLARATIONS = [
    ("integer, parameter :: t(2, 2) = reshape([1, 2, 3], [2, 2])", "t.f90:5:35: error: "
     "'reshape' needs 4 values but its source has 3 (and no pad)", "^~~~~~~"),
    ("integer, parameter :: t(2, 2) = reshape([1, 2, 3, 4], [4, 1])", "t.f90:5:35: error: "
     "'reshape' gives shape (4, 1) but 't' is declared with shape (2, 2)", "^~~~~~~"),
    ("integer, parameter :: t(2, 2) = reshape([1, 2, 3, 4], [2, 2], order=[1, 1])",
     "t.f90:5:35: error: the order of 'reshape' must be a permutation of 1 to 2", "^~~~~~~"),
    ("integer, parameter :: t(3) = [(k, k = 1, 3, 0)]", "t.f90:5:37: error: the step of an "
     "implied-do is zero", "^~~~~~~~~~~"),
    ("integer, parameter :: t(3) = [(k, k = 1, 2000000000)]", "t.f90:5:25: error: the "
     "initializer of 't' has more than 1048576 values", "^"),
    ("type(point) :: p", "t.f90:5:8: error: type 'point' is not defined (define it in this "
     "unit or in a module the unit uses)", "^~~~~"),
    ("real, pointer :: p", "t.f90:5:20: error: pointer local variable 'p' is not supported "
     "(pointer assignment is not translated): use the array it would point to directly (e.g. "
     "u(:, k) where 'p => u(:, k)'), or pass that array as an argument", "^"),
    ("real, volatile, asynchronous :: p", "t.f90:5:19: error: attribute 'asynchronous' is "
     "not supported", "^~~~~~~~~~~~"),
    ("real, allocatable :: b", "t.f90:5:24: error: allocatable scalar 'b' is not supported "
     "(only allocatable arrays are: use a plain variable)", "^"),
    ("real :: b(:)", "t.f90:5:11: error: 'b' has an assumed shape ('(:)') but is neither a "
     "dummy argument nor allocatable (declare explicit extents)", "^"),
    ("common y", "t.f90:5:3: error: blank 'common' is not supported (name the block: "
     "common /name/ ...)", "^~~~~~"),
    ("real, save :: y(n)", "t.f90:5:17: error: saved array 'y' must have constant bounds",
     "^"),
    ("real, optional :: y", "t.f90:5:21: error: 'y' is declared optional but is not a dummy "
     "argument", "^"),
    ("integer*3 k", "t.f90:5:3: error: integer of kind 3 is not supported (kinds: 1, 2, 4, 8)",
     "^~~~~~~"),
    ("real*16 q", "t.f90:5:3: error: real of kind 16 is not supported (kinds: 4, 8)", "^~~~"),
    ("logical*16 l", "t.f90:5:3: error: logical of kind 16 is not supported (kinds: 1, 2, 4, "
     "8)", "^~~~~~~"),
    ("namelist /nl/ n", "t.f90:5:3: error: 'namelist' is not supported (kernels cannot do I/O)",
     "^~~~~~~~"),
]

# whole files: (name, source, expected diagnostic, caret line)
FILES = [
    ("equivalence", """subroutine s(x)
  real x, y
  equivalence (x, y)
  x = 1
end subroutine
""", "t.f90:3:3: error: 'equivalence' is not supported", "^~~~~~~~~~~"),
    ("unknown_intrinsic_module", """subroutine s(x)
  use, intrinsic :: ieee_exceptions
  real x
  x = 1
end subroutine
""", "t.f90:2:21: error: intrinsic module 'ieee_exceptions' is not supported (only "
        "iso_fortran_env, iso_c_binding and ieee_arithmetic's ieee_support_inf/"
        "ieee_support_nan are)", "^~~~~~~~~~~~~~~"),
    ("other_ieee_arithmetic_procedure", """subroutine s(x)
  use, intrinsic :: ieee_arithmetic, only: ieee_support_nan, ieee_value
  real x
  x = 1
end subroutine
""", "t.f90:2:62: error: 'ieee_value' of intrinsic module ieee_arithmetic is not supported "
        "(only ieee_support_inf and ieee_support_nan are)", "^~~~~~~~~~"),
    ("unsupported_kind_from_intrinsic_module", """subroutine s(x)
  use iso_fortran_env, only: real128
  real(real128) x
  x = 1
end subroutine
""", "t.f90:3:3: error: real of kind 16 is not supported (kinds: 4, 8)", "^~~~"),
    ("use_of_unknown_module", """subroutine s(x)
  use nowhere
  real x
  x = 1
end subroutine
""", "t.f90:2:7: error: module 'nowhere' is not defined in this file and no search path was "
        "given (name the file that defines it on the command line, or its directory with -I "
        "DIR)", "^~~~~~~"),
    ("automatic_array_in_called_procedure_unbounded", """subroutine t(n, x)
  implicit none
  integer n
  real x, w(n)
  w(1) = x
  x = w(1)
end subroutine
subroutine s(n, x)
  integer n, k
  real x
  k = int(x)
  call t(k, x)
end subroutine
""", "t.f90:5:3: error: work array 'w' has an extent (axis 1) that depends on values the "
        "kernel computes, and f2loopy finds no largest value for it in terms of the kernel's "
        "arguments (a work array of run-time size is device memory the host allocates for "
        "each launch): pass the work array as an argument, or size it with the kernel's "
        "arguments", "^"),
    ("automatic_array_sized_by_assigned_argument", """subroutine s(n, a)
  implicit none
  integer n
  real a(10), w(n)
  w = a(1)
  n = n - 1
  a(1) = w(1)
end subroutine
""", "t.f90:4:15: error: upper bound of 'w' depends on 'n', which is not a scalar argument the "
        "subroutine leaves unchanged", "^"),
    # (a local with an initial value that an assignment, a call or a loop changes is
    # a saved local: tests/frontend/test_project_constants.py)
    ("initialised_variable_assigned_by_a_function", """subroutine s(x)
  real x
  real :: y = 1.0
  x = bump(y)
contains
  real function bump(v)
    real v
    v = v + 1
    bump = v
  end function
end subroutine
""", "t.f90:4:12: error: 'y' has an initial value (data statement or initialisation) and is "
        "assigned in a way f2loopy does not follow (an assignment, a call or a do loop makes "
        "it a saved local, as Fortran's implicit save does): declare it with 'save'", "^"),
    ("module_variable_without_bounds", """module m
  real counter(n)
end module
subroutine s(x)
  use m
  real x
  x = counter(1)
end subroutine
""", "t.f90:2:8: error: module array 'counter' must have constant bounds", "^~~~~~~"),
    ("internal_procedure_host_loop_variable", """subroutine s(x)
  real x
  integer i
  x = 1
  call t
contains
  subroutine t
    do i = 1, 3
      x = x + i
    end do
  end subroutine
end subroutine
""", "t.f90:8:8: error: internal procedure 't' uses 'i' of its host 's' (a loop variable of "
        "the host is not supported: declare it in 't')", "^"),
    ("assumed_shape_array_of_derived_type", """module pts
  type tp
    real(8) :: x
  end type
end module
subroutine s(p)
  use pts
  type(tp), intent(inout) :: p(:)
  p(1)%x = 2
end subroutine
""", "t.f90:8:30: error: assumed-shape arrays of derived type ('p') are not supported: "
        "declare its bounds (p(n))", "^"),
    ("alternate_return", """subroutine s(x, *)
  real x
  x = 1
end subroutine
""", "t.f90:1:17: error: alternate returns ('*' arguments) are not supported", "^"),
    ("recursion", """subroutine s(n, x)
  integer n
  real x
  if (n > 0) call s(n - 1, x)
  x = x + 1
end subroutine
""", "t.f90:4:19: error: recursive call of 's' is not supported", "^"),
    ("mutual_recursion", """subroutine s(n, x)
  integer n
  real x
  call t(n, x)
end subroutine
subroutine t(n, x)
  integer n
  real x
  if (n > 0) call s(n - 1, x)
end subroutine
""", "t.f90:9:19: error: recursive call of 's' is not supported", "^"),
    ("noncontiguous_section_argument", """subroutine t(n, v)
  integer n
  real v(n)
  v(1) = 0
end subroutine
subroutine s(n, a)
  integer n
  real a(n, n)
  call t(n, a(1:n:2, 1:2))
end subroutine
""", "t.f90:9:13: error: the section 'a(...)' passed to 't' is not contiguous and spans 2 "
        "axes; declare argument 'v' with an assumed shape (v(:, ...)) to pass it", "^"),
    ("expression_for_assigned_dummy", """subroutine t(v)
  real v
  v = 0
end subroutine
subroutine s(x)
  real x
  call t(x + 1.0)
end subroutine
""", "t.f90:7:10: error: 't' assigns argument 'v', but the actual argument is an expression",
        "^~~~~~~"),
    ("constant_table_for_assigned_dummy", """subroutine t(v)
  real v(3)
  v(1) = 0
end subroutine
subroutine s(x)
  real x
  real, parameter :: tab(3) = (/1., 2., 3./)
  call t(tab)
  x = tab(1)
end subroutine
""", "t.f90:8:10: error: 't' assigns argument 'v', but the actual argument is a constant",
        "^~~"),
    ("argument_type_mismatch", """subroutine t(v)
  real*8 v
  v = 0
end subroutine
subroutine s(x)
  real x
  call t(x)
end subroutine
""", "t.f90:7:8: error: argument 'v' of 't' is real(8), but the actual argument is real", "^"),
    ("argument_count", """subroutine t(v, w)
  real v, w
  v = w
end subroutine
subroutine s(x)
  real x
  call t(x)
end subroutine
""", "t.f90:7:8: error: 't' takes 2 argument(s), got 1", "^"),
    ("function_called_as_subroutine", """real function f(x)
  real x
  f = x
end function
subroutine s(x)
  real x
  call f(x)
end subroutine
""", "t.f90:7:8: error: 'f' is a function, not a subroutine", "^"),
    ("array_valued_function", """function f(x)
  real x, f(2)
  f = x
end function
subroutine s(x, z)
  real x, z
  z = f(x)
end subroutine
""", "t.f90:7:7: error: array-valued function 'f' is used in a scalar expression (use it in an "
     "array expression, e.g. assign it to an array)", "^"),
    ("elemental_call_on_sections", """real function f(x)
  real x
  f = 2 * x
end function
subroutine s(n, a, b)
  integer n
  real a(n), b(n), f
  b(:) = f(a(:))
end subroutine
""", "t.f90:8:10: error: 'f' is called with array arguments but is not elemental", "^"),
    ("assumed_size_passed_for_assumed_shape", """module m
contains
  subroutine t(x)
    real x(:)
    x(1) = 0
  end subroutine
  subroutine s(a)
    real a(*)
    call t(a)
  end subroutine
end module
""", "t.f90:9:12: error: assumed-size array 'a' cannot be passed for assumed-shape argument "
        "'x' of 't' (its size is unknown): pass a section", "^"),
    ("assumed_shape_rank_mismatch", """module m
contains
  subroutine t(x)
    real x(:, :)
    x(1, 1) = 0
  end subroutine
  subroutine s(a)
    real a(4, 4)
    call t(a(:, 2))
  end subroutine
end module
""", "t.f90:9:12: error: argument 'x' of 't' has 2 dimension(s), but the actual argument "
        "has 1", "^"),
    ("nonconforming_sections", """subroutine s(a, b)
  real a(10), b(5)
  a(1:4) = b(1:5)
end subroutine
""", "t.f90:3:12: error: array shapes do not conform: dimension 1 of 'b' has 5 elements, of "
        "'a' 4", "^"),
    ("dummy_procedure", """subroutine s(f, x)
  external f
  real x
  x = 1
end subroutine
""", "t.f90:1:14: error: dummy procedure 'f' of 's' needs a procedure to call (a kernel calls "
        "procedures known when it is translated): translate with --bind s:f=PROCEDURE (a "
        "subroutine or function of the file or of a module; the kernel then takes no argument "
        "for it)", "^"),
    # (a dummy only called, never declared: was "dummy argument 'rhs' has no type")
    ("called_dummy_procedure", """subroutine step(n, x, t, rhs, h)
  implicit none
  integer n
  real(8) x(n), t, h(n), f(n)
  call rhs(n, x, t, f)
  h = h + f
end subroutine
""", "t.f90:1:26: error: dummy procedure 'rhs' of 'step' needs a procedure to call (a kernel "
        "calls procedures known when it is translated): translate with --bind "
        "step:rhs=PROCEDURE (a subroutine or function of the file or of a module; the kernel "
        "then takes no argument for it)", "^~~"),
    ("procedure_declaration", """subroutine apply(n, x, g)
  implicit none
  integer n
  real(8) x(n)
  procedure(real(8)) :: g
  x(1) = g(x(1))
end subroutine
""", "t.f90:1:24: error: dummy procedure 'g' of 'apply' needs a procedure to call (a kernel "
        "calls procedures known when it is translated): translate with --bind "
        "apply:g=PROCEDURE (a subroutine or function of the file or of a module; the kernel "
        "then takes no argument for it)", "^"),
    ("procedure_pointer", """subroutine apply(n, x, g)
  implicit none
  integer n
  real(8) x(n)
  real(8), external :: g
  procedure(real(8)), pointer :: h
  h => g
  x(1) = h(x(1))
end subroutine
""", "t.f90:6:3: error: procedure pointers and procedure components are not supported (a kernel "
        "calls procedures known when it is translated): call the procedure by name, or make it "
        "a dummy procedure", "^~~~~~~~~"),
    ("preprocessor", """subroutine s(x)
  real x
#ifdef FOO
  x = 1
#endif
end subroutine
""", "t.f90:3:1: error: preprocessor directives are not supported (preprocess the file first, "
        "e.g. with 'gfortran -E -cpp')", "^~~~~~"),
    ("fixed_form_goto_after_continuation", """      subroutine s(n, x)
      real x
      integer n
      x = x +
     &    1.0
      if (n .gt. 0) goto 10
   10 continue
      goto 20
      end
""", "t.f:8:7: error: 'goto 20' does not jump to a later statement of the same or an "
        "enclosing block (only such a forward goto is supported)", "^~~~"),
]


def _all_cases():
    out = []
    for stmt, first, caret in STATEMENTS:
        out.append(pytest.param("t.f90", STMT.format(stmt), first, caret, id="stmt:" + stmt))
    for decl, first, caret in DECLARATIONS:
        out.append(pytest.param("t.f90", DECL.format(decl), first, caret, id="decl:" + decl))
    for name, source, first, caret in FILES:
        fn = "t.f" if name.startswith("fixed") else "t.f90"
        out.append(pytest.param(fn, source, first, caret, id=name))
    return out


CASES = _all_cases()


@pytest.mark.parametrize("filename, source, first, caret", CASES)
def test_located_message(filename, source, first, caret):
    with pytest.raises(FortranError) as info:
        parse_fortran(source, filename)
    lines = info.value.format().splitlines()
    line_no = int(first.split(":")[1])
    assert lines[0] == first
    assert lines[1] == "    " + source.splitlines()[line_no - 1]
    assert lines[2].strip() == caret
    assert isinstance(info.value, FortranError)


# the command preprocesses a file with # lines (tests/frontend/test_preprocess.py);
# parse_fortran on such text refuses them
CLI_CASES = [c for c in CASES if c.id != "preprocessor"]


@pytest.mark.parametrize("filename, source, first, caret", CLI_CASES)
def test_translate_exit_code_and_nothing_written(filename, source, first, caret, tmp_path):
    path = tmp_path / filename
    path.write_text(source)
    result = CliRunner().invoke(main, ["translate", str(path)])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == str(tmp_path / first)
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [filename]


def test_statement_errors_are_unsupported_features():
    for stmt, _, _ in STATEMENTS[:10]:
        with pytest.raises(UnsupportedFeatureError):
            parse_fortran(STMT.format(stmt), "t.f90")


_PRINTF = ("cannot be translated: a kernel prints only list-directed output to the screen "
           "(write(*,*), write(6,*) or print *), or output with a "
     "constant format of simple edit descriptors (a, i, f, e, es, g, l, x, /), of scalars and constant text, with OpenCL "
           "printf (write the values to an argument and print them after the call)")

SEVERAL = """subroutine s(n, a, x)
  implicit none
  integer n, i
  real a(n), x
  print '(z8.3)', x
  do i = 1, n
    a(i) = 0
    write(10,*) a(i)
    if (x > 0) goto 10
  end do
  do while (x > 1)
    x = x / 2
    stop
  end do
10 continue
  goto 20
end subroutine

subroutine t(x)
  real x
  x = y(1)
  call foo(x)
end
"""


def test_show_lists_every_unsupported_statement(tmp_path):
    path = tmp_path / "t.f90"
    path.write_text(SEVERAL)
    result = CliRunner().invoke(main, ["show", str(path)])
    assert result.exit_code == 1
    heads = [line for line in result.stderr.splitlines() if ": error: " in line]
    where = str(path)
    assert heads == [
        f"{where}:5:3: error: edit descriptor 'z8.3' in 'print '(z8.3)', x' " + _PRINTF,
        f"{where}:8:5: error: 'write(10,*) a(i)' " + _PRINTF,
        f"{where}:16:3: error: 'goto 20' does not jump to a later statement of the same or an "
        "enclosing block (only such a forward goto is supported)",
        f"{where}:21:7: error: 'y' is neither an array nor a known function",
        f"{where}:22:8: error: subroutine 'foo' is not defined in this file and no search "
        "path was given (name the file that defines it on the command line, or its "
        "directory with -I DIR)",
    ]
    # (then which of the file's units translate: --kernel's note)
    assert result.stderr.splitlines()[-2:] == [
        f"{where}: 5 errors: these statements cannot be translated",
        f"{where}: note: none of the 2 units of this file translates"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.f90"]
    # translate stops with the first error and writes nothing
    result = CliRunner().invoke(main, ["translate", str(path)])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == heads[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.f90"]


def test_collecting_mode_lists_declaration_errors_too():
    src = DECL.format("common y\n  real, save :: z(n)") + "\n"
    src = src.replace("  x = 1\n", "  x = 1\n  print '(z8.3)', x\n")
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "t.f90", collect_errors=True)
    heads = [line for line in info.value.format().splitlines() if ": error: " in line]
    assert heads == [
        "t.f90:5:3: error: blank 'common' is not supported (name the block: common /name/ ...)",
        "t.f90:6:17: error: saved array 'z' must have constant bounds",
        "t.f90:8:3: error: edit descriptor 'z8.3' in 'print '(z8.3)', x' " + _PRINTF,
    ]
