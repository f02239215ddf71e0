"""Comparing results with per-dtype tolerances."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: default (relative, absolute-scale, ulp) tolerances per dtype kind
DEFAULT_RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12,
                np.dtype(np.complex64): 1e-5, np.dtype(np.complex128): 1e-12}


@dataclass(frozen=True)
class Tolerance:
    """An element passes if ``|got - want| <= atol + rtol * |want|`` or if they
    differ by at most *ulps* units in the last place.

    *atol* defaults to ``rtol * max|want|`` over the array, which absorbs
    cancellation in values that are small relative to the data.
    """

    rtol: float = 0.0
    atol: float | None = None
    ulps: int = 0

    @staticmethod
    def for_dtype(dtype, rtol=None, atol=None, ulps=None) -> "Tolerance":
        dt = np.dtype(dtype)
        if dt.kind in "iub":
            return Tolerance(0.0, 0.0, 0)
        return Tolerance(DEFAULT_RTOL.get(dt, 1e-5) if rtol is None else rtol, atol,
                         4 if ulps is None else ulps)


@dataclass(frozen=True)
class Mismatch:
    name: str
    max_error: float
    where: tuple | None        # Fortran (1-based) index of the worst element
    got: object
    want: object
    count: int
    total: int

    def __str__(self) -> str:
        loc = "" if self.where is None else "(" + ", ".join(map(str, self.where)) + ")"
        return (f"{self.name}{loc}: got {self.got!r}, expected {self.want!r} "
                f"({self.count} of {self.total} elements differ, max error {self.max_error:.3g})")


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units in the last place between *a* and *b* (inf across signs)."""
    a = np.atleast_1d(a)
    b = np.atleast_1d(b)
    if a.dtype == np.float32:
        ia, ib = a.view(np.int32).astype(np.int64), b.view(np.int32).astype(np.int64)
    elif a.dtype == np.float64:
        ia, ib = a.view(np.int64), b.view(np.int64)
    else:
        return np.full(a.shape, np.inf)
    same_sign = (ia < 0) == (ib < 0)
    with np.errstate(over="ignore"):
        d = np.abs(np.where(same_sign, ia - ib, 0)).astype(float)
    d = np.where(same_sign, d, np.inf)
    # +0.0 and -0.0 are the same value
    d = np.where((a == 0) & (b == 0), 0.0, d)
    return d


def compare(name: str, got, want, tol: Tolerance | None = None,
            lower_bounds=None) -> Mismatch | None:
    """None if *got* matches *want*, else a :class:`Mismatch`.  (Infinities
    and NaNs are values to compare: numpy says nothing about them.)"""
    with np.errstate(all="ignore"):
        return _compare(name, got, want, tol, lower_bounds)


def _compare(name: str, got, want, tol: Tolerance | None, lower_bounds) -> Mismatch | None:
    got_a = np.asarray(got)
    want_a = np.asarray(want)
    if got_a.shape != want_a.shape:
        return Mismatch(name, float("inf"), None, got_a.shape, want_a.shape, 1, 1)
    tol = tol or Tolerance.for_dtype(want_a.dtype)
    if want_a.dtype.kind in "iub" or got_a.dtype.kind in "iub":
        bad = got_a != want_a
        err = np.where(bad, 1.0, 0.0)
    else:
        g = got_a.astype(want_a.dtype, copy=False)
        diff = np.abs(g - want_a)
        both_nan = np.isnan(g) & np.isnan(want_a) if want_a.dtype.kind in "fc" else False
        same_inf = (g == want_a)
        scale = np.max(np.abs(want_a[np.isfinite(want_a)])) if np.isfinite(want_a).any() else 0
        atol = tol.atol if tol.atol is not None else tol.rtol * float(scale)
        ok = (diff <= atol + tol.rtol * np.abs(want_a)) | both_nan | same_inf
        if tol.ulps and want_a.dtype.kind == "f":
            ok |= (_ulp_distance(g, want_a) <= tol.ulps).reshape(ok.shape)
        bad = ~ok
        err = np.where(bad, np.nan_to_num(diff, nan=np.inf, posinf=np.inf), 0.0)
    if not np.any(bad):
        return None
    flat = int(np.argmax(np.where(bad, err, -1.0)))
    idx = np.unravel_index(flat, want_a.shape) if want_a.shape else ()
    lbs = lower_bounds or [1] * len(idx)
    where = tuple(int(i) + int(lb) for i, lb in zip(idx, lbs, strict=True)) if idx else None
    return Mismatch(name, float(np.max(err)), where, got_a[idx].item() if idx else got_a.item(),
                    want_a[idx].item() if idx else want_a.item(), int(np.sum(bad)),
                    int(want_a.size))


def tolerance_for(dtype, tolerances: dict | None) -> Tolerance:
    opts = (tolerances or {}).get(np.dtype(dtype).name, {})
    return Tolerance.for_dtype(dtype, rtol=opts.get("rtol"), atol=opts.get("atol"),
                               ulps=opts.get("ulps"))
