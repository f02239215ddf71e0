"""Race checks on parallel tags (exact, with isl) and automatic barriers."""

import numpy as np
import pytest

import f2loopy
from f2loopy import RaceError
from util import farray, needs_gfortran, run_transformed


def kernel(src):
    return f2loopy.parse_fortran(src, "t.f90").kernels[0]


SHIFT = """subroutine shift(n, a)
  integer n, i
  real a(n+1)
  do i = 1, n
    a(i+1) = a(i) + 1
  end do
end
"""


def test_true_race_across_groups_is_refused_with_line():
    k = f2loopy.split_iname(kernel(SHIFT), "i", 16, outer_tag="g.0", inner_tag="l.0")
    with pytest.raises(RaceError) as info:
        f2loopy.generate_code(k)
    text = info.value.format()
    assert text.splitlines()[0] == (
        "t.f90:5:5: error: parallel inames 'i_outer' (g.0) carry a dependence on 'a': "
        "instruction 'a' (line 5) reads elements that its instances in other work-groups "
        "write")


def test_dependence_between_two_statements_names_both_lines():
    src = """subroutine two(n, a, b)
  integer n, i
  real a(n), b(n)
  do i = 2, n
    a(i) = b(i) * 2
    b(i - 1) = a(i) + 1
  end do
end
"""
    k = f2loopy.tag_inames(kernel(src), "i:g.0")
    with pytest.raises(RaceError) as info:
        f2loopy.generate_code(k)
    lines = info.value.format().splitlines()
    assert lines[0].startswith("t.f90:5:5: error: parallel inames 'i' (g.0) carry a "
                               "dependence on 'b': instructions 'a' (line 5) and 'b' (line 6)")
    assert lines[3].startswith("t.f90:6:5: note: the other access")


PRIVATE = """subroutine priv(n, a, b)
  integer n, i
  real a(n), b(n), s
  do i = 1, n
    s = a(i)
    b(i) = s * 2
  end do
end
"""


def test_private_temporary_is_not_a_false_alarm():
    k = f2loopy.split_iname(kernel(PRIVATE), "i", 16, outer_tag="g.0", inner_tag="l.0")
    code = f2loopy.generate_code(k).device_code
    assert "barrier" not in code


def test_accumulation_into_private_scalar_is_refused():
    src = """subroutine acc(a, b)
  integer i
  real a(16), b(16), s
  s = 0
  do i = 1, 16
    s = s + a(i)
    b(i) = s
  end do
end
"""
    k = f2loopy.tag_inames(kernel(src), "i:l.0")
    with pytest.raises(RaceError, match="the value of 's' written by 's_1' .* is read by "
                                        "'s_1' .* in another iteration of 'i'"):
        f2loopy.generate_code(k)


def test_statement_outside_parallel_loop_writing_global_is_refused():
    src = """subroutine tot(a, t)
  integer i
  real a(16), t
  t = 0
  do i = 1, 16
    a(i) = 1
  end do
end
"""
    k = f2loopy.tag_inames(kernel(src), "i:l.0")
    with pytest.raises(RaceError, match="outside the parallel loop.s. i, so every work-item"):
        f2loopy.generate_code(k)


def test_disjoint_halves_are_not_a_race():
    # a(i) and a(i + 8) for i in 1..8 never overlap: exact, not a false alarm
    src = """subroutine halves(a)
  integer i
  real a(16)
  do i = 1, 8
    a(i + 8) = a(i) * 2
  end do
end
"""
    k = f2loopy.tag_inames(kernel(src), "i:g.0")
    assert "get_group_id" in f2loopy.generate_code(k).device_code


def test_nosync_waives_the_check():
    k = f2loopy.split_iname(kernel(SHIFT), "i", 16, outer_tag="g.0", inner_tag="l.0")
    k = k.copy(instructions=tuple(i.copy(no_sync_with=frozenset({("a", "any")}))
                                  for i in k.instructions))
    f2loopy.generate_code(k)


EXCHANGE = """subroutine exch(a, b, c)
  integer i, i2, k
  real a(16), b(16), c(16, 4)
  do k = 1, 4
    do i = 1, 16
      b(i) = a(i) + k
    end do
    do i2 = 1, 16
      c(i2, k) = b(17 - i2)
    end do
  end do
end
"""


def test_barriers_inserted_between_writer_and_reader_and_around_the_loop():
    k = f2loopy.tag_inames(kernel(EXCHANGE), "i:l.0, i2:l.0")
    code = f2loopy.generate_code(k).device_code
    body = code[code.index("for (int k"):]
    assert body.count("barrier(") == 2
    assert body.index("b[i - 1] =") < body.index("barrier(") < body.index("c[i2 - 1")


@needs_gfortran
def test_barrier_kernel_matches_gfortran(tmp_path, cl_queue):
    run_transformed(EXCHANGE, "exch", lambda k: f2loopy.tag_inames(k, "i:l.0, i2:l.0"),
                    [farray(16, seed=1), farray(16, seed=2),
                     np.zeros((16, 4), np.float32, order="F")], tmp_path, cl_queue)
