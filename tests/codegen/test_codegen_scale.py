"""Code generation stays near linear in the number of parallel loops (issue 25,
item 4): a kernel with 200 loops, each split and tagged on its own (400
hardware inames), generates in seconds, and each statement keeps the guard
of its own loop only."""

from __future__ import annotations

from f2loopy.codegen import generate_code
from f2loopy.frontend import parse_fortran
from f2loopy.transform.iname import split_iname


def _many_loops(n: int):
    body = "\n".join(f"  do i{k} = 1, m\n    a(i{k}, {k + 1}) = a(i{k}, {k + 1}) + {k}.0d0\n"
                     f"  end do" for k in range(n))
    src = (f"subroutine t(m, a)\n  integer, intent(in) :: m\n"
           f"  double precision, intent(inout) :: a(m, {n})\n"
           f"  integer :: {', '.join(f'i{k}' for k in range(n))}\n{body}\nend subroutine t\n")
    knl = parse_fortran(src, "t.f90")["t"]
    for k in range(n):
        knl = split_iname(knl, f"i{k}", 64, outer_tag="g.0", inner_tag="l.0")
    return knl


def test_two_hundred_tagged_loops():
    src = generate_code(_many_loops(200)).source
    assert src.count("get_group_id(0)") == 200
    # statement k is guarded by its own loop's range, nothing else
    assert "    if (m >= i57_inner + 64 * i57_outer + 1)\n" \
           "        a[i57_inner + 64 * i57_outer + m * 57] = " \
           "a[i57_inner + 64 * i57_outer + m * 57] + 57.0;\n" in src


def test_guards_are_those_of_a_kernel_with_one_loop():
    one = generate_code(_many_loops(1)).source
    many = generate_code(_many_loops(3)).source
    guard = "    if (m >= i0_inner + 64 * i0_outer + 1)\n"
    assert guard in one and guard in many
