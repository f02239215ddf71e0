"""gfortran's kind-selecting intrinsics, evaluated in declarations."""

from __future__ import annotations


def selected_real_kind(p, r) -> int:
    """gfortran's ``selected_real_kind(p, r)``: the smallest kind with at
    least *p* decimal digits and a decimal exponent range of at least *r*
    (None: not asked); -1, -2, -3 when there is none for p, r, both."""
    kinds = ((4, 6, 37), (8, 15, 307), (10, 18, 4931), (16, 33, 4931))
    p = 0 if p is None else p
    r = 0 if r is None else r
    for kind, digits, span in kinds:
        if p <= digits and r <= span:
            return kind
    return -3 if p > 33 and r > 4931 else (-1 if p > 33 else -2)


def selected_int_kind(r: int) -> int:
    """gfortran's ``selected_int_kind(r)``: the smallest integer kind holding
    every value in (-10**r, 10**r); -1 when there is none."""
    for kind, span in ((1, 2), (2, 4), (4, 9), (8, 18), (16, 38)):
        if r <= span:
            return kind
    return -1
