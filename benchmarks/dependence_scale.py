"""Program-order dependences on routines whose loops all work on one array
(issue 27 item 12: LAPACK's condition estimators inline their BLAS calls on
one WORK array; dppcon needed 47,000 conflict tests and exceeded isl's
operation limit).

For routines of K loop pairs on one work array (every loop conflicts with
every earlier one), prints per K:

* now: the frontend's dependences (:func:`add_program_order_dependencies`):
  conflict tests made, seconds, dependences kept;
* every pair: each pair of accesses tested on the pairs of their instances
  (:meth:`AccessAnalysis.conflict_set`, what each test cost before), in the
  same run: tests, seconds;
* the ratio of the two times.

Both give the same order (the same transitive closure:
tests/frontend/test_isl_scale.py).  Run::

    python3 benchmarks/dependence_scale.py            # K = 10, 20, 40
    python3 benchmarks/dependence_scale.py 15 30      # other K
"""

from __future__ import annotations

import sys
import time


def routine(k: int) -> str:
    body = "".join(f"  do i = 1, n\n    work(i) = work(i) + {j + 1} * work(n + i)\n  end do\n"
                   f"  do i = 2, n, 2\n    work(n + i) = work(i - 1) - work(n + i)\n  end do\n"
                   for j in range(k))
    return ("subroutine chain(n, work)\n  implicit none\n  integer, intent(in) :: n\n"
            "  double precision, intent(inout) :: work(2*n)\n  integer :: i\n" + body +
            "end subroutine\n")


def now(kernel):
    from f2loopy.analysis import accesses
    from f2loopy.analysis.dependences import add_program_order_dependencies
    calls = [0]
    original = accesses.AccessAnalysis.may_conflict

    def counting(self, a, b):
        calls[0] += 1
        return original(self, a, b)
    accesses.AccessAnalysis.may_conflict = counting      # type: ignore[method-assign]
    try:
        start = time.perf_counter()
        out = add_program_order_dependencies(kernel)
        seconds = time.perf_counter() - start
    finally:
        accesses.AccessAnalysis.may_conflict = original  # type: ignore[method-assign]
    return calls[0], seconds, sum(len(i.depends_on) for i in out.instructions)


def every_pair(kernel):
    from f2loopy.analysis.accesses import AccessAnalysis, instruction_accesses
    analysis = AccessAnalysis(kernel)
    accs = [(pos, a) for pos, i in enumerate(kernel.instructions)
            for a in instruction_accesses(kernel, i)]
    tests = 0
    start = time.perf_counter()
    for pb, b in accs:
        for pa, a in accs:
            if pa < pb and a.name == b.name and (a.is_write or b.is_write) and \
                    a.index is not None and b.index is not None and a.index != b.index:
                tests += 1
                s = analysis.conflict_set(a, b)
                _ = s is None or not s.is_empty()
    return tests, time.perf_counter() - start


def main(sizes) -> None:
    from f2loopy.frontend import parse_fortran
    print(f"{'K':>4} {'stmts':>6} | {'tests':>7} {'s':>7} {'deps':>6} | "
          f"{'pairs':>7} {'s':>7} | {'ratio':>6}")
    for k in sizes:
        kernel = parse_fortran(routine(k), "chain.f90").kernels[0]
        stripped = kernel.copy(instructions=tuple(i.copy(depends_on=frozenset())
                                                  for i in kernel.instructions))
        tests, seconds, deps = now(stripped)
        pairs, base = every_pair(stripped)
        print(f"{k:>4} {len(kernel.instructions):>6} | {tests:>7} {seconds:>7.2f} {deps:>6} | "
              f"{pairs:>7} {base:>7.2f} | {base / max(seconds, 1e-9):>6.1f}x")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10, 20, 40])
