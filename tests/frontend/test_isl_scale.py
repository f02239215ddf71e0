"""isl work on real kernels stays in bounds (issue 27 item 12): the kernel
assumptions of conforming operands of allocatable module arrays (an ocean
model's friction kernel: 32 disjoint pieces made code generation exceed the
isl operation limit), and the program-order conflict tests of a routine that
inlines many BLAS-style loops on one work array (LAPACK's condition
estimators: tens of thousands of tests)."""

from __future__ import annotations

import islpy as isl
import pytest

from f2loopy.analysis.accesses import AccessAnalysis, instruction_accesses
from f2loopy.frontend import parse_fortran

FRICTION = """module grid
  implicit none
  integer :: is_pe, ie_pe, js_pe, je_pe, onx, nz
  real(8), allocatable :: flux(:,:,:), du(:,:,:), mask(:,:,:), visc(:,:,:)
  real(8), allocatable :: dv(:,:,:), heat(:,:,:), area(:,:)
end module
subroutine friction(dz)
  use grid
  implicit none
  real(8), intent(in) :: dz
  integer :: k
  real(8) :: work(is_pe-onx:ie_pe+onx, js_pe-onx:je_pe+onx, nz)
  du(:,:,1) = flux(:,:,1) / dz * mask(:,:,1)
  do k = 2, nz
    du(:,:,k) = (flux(:,:,k) - flux(:,:,k-1)) / dz * mask(:,:,k)
    dv(:,:,k) = du(:,:,k) + mask(:,:,k)
  end do
  work = 0.5d0 * visc
  heat = heat + work
  area(:,1) = work(:,js_pe,1)
end subroutine
"""


def test_conforming_allocatable_extents_are_plain_equalities():
    """An allocatable array's extent is never negative, so conformance of
    ``du(:,:,k)`` and ``flux(:,:,k)`` is ``du_n1 = flux_n1``, not
    ``max(0, du_n1) = max(0, flux_n1)`` (two pieces each, multiplied over
    every pair); only the automatic array's extents (which may be empty)
    split the assumptions."""
    k = parse_fortran(FRICTION, "friction.f90")["friction"]
    a = k.assumptions
    names = set(a.get_var_names(isl.dim_type.param))
    assert {"du_n1", "flux_n1", "mask_n1", "dv_n1"} <= names
    plain = isl.Set(
        "[du_n1, flux_n1, mask_n1, dv_n1, du_n2, flux_n2, mask_n2, dv_n2] -> "
        "{ : du_n1 = flux_n1 = mask_n1 = dv_n1 and du_n2 = flux_n2 = mask_n2 = dv_n2 }")
    a2, plain2 = a.align_params(plain.get_space()), plain.align_params(a.get_space())
    assert a2.is_subset(plain2)
    # three axes of the automatic array, each empty or not: at most 2**3
    # pieces (there were 32 with every extent split)
    assert a.n_basic_set() <= 8, a.n_basic_set()


WORK = """subroutine estimate(n, kase, work, x, isave)
  implicit none
  integer, intent(in) :: n
  integer, intent(inout) :: kase, isave(3)
  double precision, intent(inout) :: work(3*n+2), x(n)
  integer :: i, j
  double precision :: s
  if (kase == 0) then
    do i = 1, n
      x(i) = 1d0 / n
    end do
    kase = 1
    isave(1) = 1
    return
  end if
  do i = 1, n
    work(n + i) = x(i)
  end do
  do i = 2, n, 2
    work(2*n + i) = work(i - 1) + work(n + i)
  end do
  do j = 1, n
    do i = j, n
      work(i) = work(i) + work(2*n + j) * x(i)
    end do
  end do
  s = 0
  do i = 1, 3*n + 2, 3
    s = s + abs(work(i))
  end do
  work(3*n + 1) = s
  work(3*n + 2) = work(isave(2))
  do i = n, 1, -1
    x(i) = work(i + isave(3)) - work(n + 1)
  end do
  isave(1) = 2
end subroutine
"""


def _by_definition(analysis: AccessAnalysis, a, b) -> bool:
    """Whether some instances of *a* and *b* touch the same element, from the
    pairs of their instances (:meth:`AccessAnalysis.conflict_set`)."""
    if a.index is None or b.index is None or a.index == b.index:
        return True
    s = analysis.conflict_set(a, b)
    return s is None or not s.is_empty()


def test_conflict_tests_on_touched_elements_agree_with_the_pairs_of_instances():
    """may_conflict decides on the elements each access touches; on every
    pair of accesses to one array of a routine with offsets, strides,
    triangular loops, a subscript read from an array and one from a loop
    bound, it answers as the pairs of instances do (both ways occur)."""
    k = parse_fortran(WORK, "estimate.f90").kernels[0]
    stripped = k.copy(instructions=tuple(i.copy(depends_on=frozenset())
                                         for i in k.instructions))
    fast, slow = AccessAnalysis(stripped), AccessAnalysis(stripped)
    accs = [a for i in stripped.instructions for a in instruction_accesses(stripped, i)
            if a.name in ("work", "x")]
    answers = []
    for pos, a in enumerate(accs):
        for b in accs[pos:]:
            if a.name == b.name:
                expected = _by_definition(slow, a, b)
                assert fast.may_conflict(a, b) == expected, (a, b)
                assert fast.may_conflict(b, a) == expected, (b, a)
                answers.append(expected)
    assert True in answers and False in answers
    assert len(answers) > 60


def test_touched_elements_are_computed_once_per_loops_and_subscripts():
    """The element sets are cached: as many as there are distinct (loops,
    subscripts), however many pairs are tested."""
    k = parse_fortran(WORK, "estimate.f90").kernels[0]
    analysis = AccessAnalysis(k)
    accs = [a for i in k.instructions for a in instruction_accesses(k, i) if a.name == "work"]
    for a in accs:
        for b in accs:
            analysis.may_conflict(a, b)
    distinct = {(frozenset(analysis.id_to_insn[a.insn_id].within_inames), a.index)
                for a in accs if a.index is not None}
    assert 0 < len(analysis._touched) <= len(distinct)


@pytest.mark.parametrize("subscript, other, meets", [
    ("i + n", "i", False),           # n is a parameter of both domains
    ("i + n", "2*i", True),
    ("2*i", "2*i - 1", False),       # even and odd elements
    ("m", "i", True),                # m: a scalar the routine writes: unknown
])
def test_a_subscript_in_names_of_neither_domain_may_conflict(subscript, other, meets):
    text = f"""subroutine t(n, a)
  implicit none
  integer, intent(in) :: n
  real, intent(inout) :: a(4*n)
  integer :: i, m
  m = n / 2
  do i = 1, n
    a({subscript}) = 1
  end do
  do i = 1, n
    a({other}) = a({other}) + 2
  end do
end subroutine
"""
    k = parse_fortran(text, "t.f90").kernels[0]
    analysis = AccessAnalysis(k)
    writes = [a for i in k.instructions for a in instruction_accesses(k, i)
              if a.name == "a" and a.is_write]
    assert len(writes) == 2
    assert analysis.may_conflict(writes[0], writes[1]) is meets
    assert _by_definition(AccessAnalysis(k), writes[0], writes[1]) is meets


def _closure(instructions, deps) -> dict:
    out: dict = {}
    for insn in instructions:                 # program order: deps point back
        reach: set = set()
        for d in deps[insn.id]:
            reach |= {d} | out[d]
        out[insn.id] = reach
    return out


def _chain(n: int) -> str:
    """*n* loops that each update the whole work array from its other half
    (as inlined BLAS calls on LAPACK's WORK do): every loop conflicts with
    every earlier one."""
    body = "".join(f"  do i = 1, n\n    work(i) = work(i) + {k + 1} * work(n + i)\n  end do\n"
                   f"  do i = 1, n\n    work(n + i) = work(i) - work(n + i)\n  end do\n"
                   for k in range(n))
    return ("subroutine chain(n, work)\n  implicit none\n  integer, intent(in) :: n\n"
            "  double precision, intent(inout) :: work(2*n)\n  integer :: i\n" + body +
            "end subroutine\n")


def test_an_access_whose_statement_is_already_ordered_is_not_tested(monkeypatch):
    """A statement that already follows another (through the dependences
    found so far) needs no test against it: on loops that each conflict
    with every earlier one, the tests grow linearly, not quadratically,
    and the dependences order the statements as every conflicting pair does."""
    from f2loopy.analysis import accesses
    calls = [0]
    original = accesses.AccessAnalysis.may_conflict

    def counting(self, a, b):
        calls[0] += 1
        return original(self, a, b)
    monkeypatch.setattr(accesses.AccessAnalysis, "may_conflict", counting)
    n = 30
    k = parse_fortran(_chain(n), "chain.f90").kernels[0]
    statements = 2 * n
    assert calls[0] <= 6 * statements, calls[0]
    monkeypatch.setattr(accesses.AccessAnalysis, "may_conflict", original)
    insns = k.instructions
    analysis = AccessAnalysis(k)
    accs = [(pos, a) for pos, i in enumerate(insns) for a in instruction_accesses(k, i)]
    every: dict = {i.id: set(i.depends_on) for i in insns}
    for pb, b in accs:
        for pa, a in accs:
            if pa < pb and a.name == b.name and (a.is_write or b.is_write) and \
                    analysis.may_conflict(a, b):
                every[b.insn_id].add(a.insn_id)
    kept = {i.id: set(i.depends_on) for i in insns}
    assert _closure(insns, kept) == _closure(insns, every)
    assert sum(map(len, every.values())) > 4 * sum(map(len, kept.values()))
