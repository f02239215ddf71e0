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


BRANCHES = """subroutine sgn(n, x, y)
  integer n, i, k
  real x(n), y(n), t
  do i = 1, n
    {}
    y(i) = t
  end do
end
"""


@needs_gfortran
@pytest.mark.parametrize("body", [
    "if (x(i) > 0.0) then\n      t = 1.0\n    else\n      t = -1.0\n    end if",
    "if (x(i) > 0.5) then\n      t = 1.0\n    else if (x(i) < -0.5) then\n      t = -1.0\n"
    "    else\n      t = 0.0\n    end if",
    "k = int(x(i) * 3)\n    select case (k)\n    case (:-1)\n      t = -1\n    case (0)\n"
    "      t = 0\n    case default\n      t = 1\n    end select",
])
def test_a_private_value_set_on_every_path_is_not_carried(body, tmp_path, cl_queue):
    # each iteration sets t on every branch: nothing flows between iterations
    src = BRANCHES.format(body)
    split = lambda k: f2loopy.split_iname(k, "i", 16, outer_tag="g.0", inner_tag="l.0")
    f2loopy.generate_code(split(kernel(src)))
    run_transformed(src, "sgn", split, [40, farray(40, seed=3), np.zeros(40, np.float32)],
                    tmp_path, cl_queue)


@pytest.mark.parametrize("body", [
    "if (x(i) > 0.0) t = 1.0",
    "if (x(i) > 0.5) then\n      t = 1.0\n    else if (x(i) < -0.5) then\n      t = -1.0\n"
    "    end if",
])
def test_a_private_value_set_on_some_paths_is_carried(body):
    # when no branch sets t, the value of the previous iteration is read
    k = f2loopy.split_iname(kernel(BRANCHES.format(body)), "i", 16, outer_tag="g.0",
                            inner_tag="l.0")
    with pytest.raises(RaceError, match="the value of 't' .* in another iteration"):
        f2loopy.generate_code(k)


TOTAL = """subroutine tot(a, t)
  integer i
  real a(16), t
  t = 0
  do i = 1, 16
    a(i) = {}
  end do
  t = t + 1
end
"""


def test_statement_outside_parallel_loops_writing_global_runs_once():
    # every work-item running 't = t + 1' would race (and add more than once):
    # the first work-item of the group, and the first group, run it
    k = f2loopy.split_iname(kernel(TOTAL.format("1")), "i", 4, outer_tag="g.0",
                            inner_tag="l.0")
    code = f2loopy.generate_code(k).device_code
    assert code.count("if (group0_g0 == 0 && lane0_l0 == 0)") == 2
    assert "barrier" not in code


def test_value_written_once_and_read_by_the_group_gets_a_barrier():
    k = f2loopy.tag_inames(kernel(TOTAL.format("t")), "i:l.0")
    code = f2loopy.generate_code(k).device_code
    assert code.count("if (lane0_l0 == 0)") == 2
    assert code.count("barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE); /* for t */") == 2


def test_value_written_once_and_read_by_other_groups_is_refused():
    # work-groups cannot wait for the one that writes t
    k = f2loopy.tag_inames(kernel(TOTAL.format("t")), "i:g.0")
    with pytest.raises(RaceError, match="write race on 't': instruction 't' .line 4. writes "
                                        "the same element from different work-groups"):
        f2loopy.generate_code(k)


@needs_gfortran
@pytest.mark.parametrize("tags", ["i:l.0", "i:g.0"])
def test_statements_run_once_give_fortrans_result(tags, tmp_path, cl_queue):
    src = TOTAL.format("2 * i")
    run_transformed(src, "tot", lambda k: f2loopy.tag_inames(k, tags),
                    [farray(16), np.float32(5)], tmp_path, cl_queue)


def test_groups_of_a_shorter_loop_are_guarded():
    # fused loops of 7 and 12 iterations on g.0: 12 groups, the first loop's
    # statement must not run in the last 5 (it wrote out of bounds before)
    src = """subroutine fa(a)
  integer i
  real a(7)
  do i = 1, 7
    a(i) = a(i) + 1
  end do
end subroutine
subroutine fb(b)
  integer j
  real b(12)
  do j = 1, 12
    b(j) = b(j) * 2
  end do
end subroutine
"""
    a, b = f2loopy.parse_fortran(src, "t.f90").kernels
    f = f2loopy.tag_inames(f2loopy.fuse_kernels([a, b]), "i:g.0, j:g.0")
    gk = f2loopy.generate_code(f)
    assert gk.grid.num_groups[0] == 12
    assert "if (i <= 7)\n        a[i - 1] = a[i - 1] + 1;" in gk.device_code
    assert "if (j" not in gk.device_code


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


# {{{ flags set and read under the same condition (exit, do while)

#: a loop left by 'exit' inside an 'if' inside the loop to parallelise: its
#: exit flag is set (and read) only when the condition holds, in the same
#: iteration
FIRST_ABOVE = """subroutine first_above(n, m, a, pos)
  integer n, m, i, j
  real a(m, n)
  integer pos(n)
  do i = 1, n
    pos(i) = 0
    if (a(1, i) < 0.9) then
      do j = 1, m
        if (a(j, i) > 0.5) then
          pos(i) = j
          exit
        end if
      end do
    end if
  end do
end
"""

#: the condition in a logical variable set before (the IFS style 'llo1 = ...;
#: if (llo1) then')
FLAGGED_ABOVE = """subroutine flagged_above(n, m, a, pos)
  integer n, m, i, j
  real a(m, n)
  integer pos(n)
  logical llo
  do i = 1, n
    pos(i) = 0
    llo = a(1, i) < 0.9
    if (llo) then
      do j = 1, m
        if (a(j, i) > 0.5) then
          pos(i) = j
          exit
        end if
      end do
    end if
  end do
end
"""

#: the same with a 'do while' loop: its counter is set under the condition
WHILE_ABOVE = """subroutine while_above(n, m, a, pos)
  integer n, m, i, j
  real a(m, n)
  integer pos(n)
  do i = 1, n
    pos(i) = 0
    if (a(1, i) < 0.9) then
      j = 1
      do while (a(j, i) <= 0.5 .and. j < m)
        j = j + 1
      end do
      pos(i) = j
    end if
  end do
end
"""

#: a real carried value: 'last' is set only when the condition holds but
#: read in every iteration (the previous iteration's value otherwise)
LAST_ABOVE = """subroutine last_above(n, m, a, pos)
  integer n, m, i, j, last
  real a(m, n)
  integer pos(n)
  last = 0
  do i = 1, n
    if (a(1, i) < 0.9) then
      do j = 1, m
        if (a(j, i) > 0.5) then
          last = j
          exit
        end if
      end do
    end if
    pos(i) = last
  end do
end
"""

def _SPLIT(k):
    return f2loopy.split_iname(k, "i", 8, outer_tag="g.0", inner_tag="l.0")


@pytest.mark.parametrize("src", [FIRST_ABOVE, WHILE_ABOVE, FLAGGED_ABOVE])
@pytest.mark.parametrize("tags", ["i:l.0", "i:g.0"])
def test_flag_set_and_read_under_one_condition_is_not_a_race(src, tags):
    code = f2loopy.generate_code(f2loopy.tag_inames(kernel(src), tags)).device_code
    assert "barrier" not in code


def test_exit_flag_under_parallel_tag_stays_private():
    code = f2loopy.generate_code(_SPLIT(kernel(FIRST_ABOVE))).device_code
    assert "    int exited;\n" in code          # one flag per work-item
    assert "j <= m && !exited;" in code


@pytest.mark.parametrize("tags", ["i:l.0", "i:g.0"])
def test_value_set_under_a_condition_and_read_always_is_still_a_race(tags):
    with pytest.raises(RaceError) as info:
        f2loopy.generate_code(f2loopy.tag_inames(kernel(LAST_ABOVE), tags))
    where = "work-item" if tags == "i:l.0" else "work-group"
    assert info.value.format().splitlines()[0] == (
        f"t.f90:15:5: error: iname 'i' is tagged {tags[2:]} but the value of 'last' written by "
        f"'last_1' (line 10) is read by 'pos' (line 15) in another iteration of 'i': 'last' is "
        f"private to the {where}, so the value would not arrive (do not parallelise 'i', or "
        "turn the accumulation into a reduction)")


@needs_gfortran
@pytest.mark.parametrize("src, name", [(FIRST_ABOVE, "first_above"),
                                       (WHILE_ABOVE, "while_above"),
                                       (FLAGGED_ABOVE, "flagged_above")])
def test_flags_under_parallel_tags_match_gfortran(src, name, tmp_path, cl_queue):
    a = farray((6, 37), seed=5, low=0.0, high=1.0)
    run_transformed(src, name, _SPLIT, [37, 6, a, np.zeros(37, np.int32)], tmp_path,
                    cl_queue)

# }}}


def test_condition_changed_between_set_and_read_is_still_a_race():
    # 'llo' is set again between the conditional write and the read: the
    # read may see the previous iteration's 'last'
    src = """subroutine r(n, a, pos)
  integer n, i, last
  real a(n)
  integer pos(n)
  logical llo
  last = 0
  do i = 1, n
    llo = a(i) < 0.9
    if (llo) last = i
    llo = .true.
    if (llo) pos(i) = last
  end do
end
"""
    with pytest.raises(RaceError, match="the value of 'last' written by 'last_1' .* is read by "
                                        "'pos' .* in another iteration of 'i'"):
        f2loopy.generate_code(f2loopy.tag_inames(kernel(src), "i:l.0"))
