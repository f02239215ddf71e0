"""What :func:`f2loopy.verify.inputs.plan_inputs` decides, and drawing inputs
from it: the arguments' specifications, the value ranges, and
:meth:`InputPlan.generate`, which draws random values (Fortran order) within
them.  The planning itself (sizes from isl sets, ranges of index arrays) is
:mod:`f2loopy.verify.inputs`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: default value range of real and complex data
DEFAULT_REAL_RANGE = (0.5, 1.5)
#: default value range of integer data (and of integer scalars that are no size)
DEFAULT_INT_RANGE = (1, 9)
#: how the values without a range are drawn (:meth:`InputPlan.generate`):
#: ``default`` (the ranges above), ``signed`` (reals from -1.5..1.5, free
#: integers from -9..9 without 0), ``wide`` (reals of either sign and
#: magnitudes 1e-3..1e3, free integers as for ``signed``), ``zeros`` (as
#: ``signed``, but about a third of the real elements exactly 0 and a third
#: exactly 1: a land mask's 0, equal neighbours, a difference that is 0)
VALUE_STYLES = ("default", "signed", "wide", "zeros")
#: the ``signed`` style's range of real and complex data
SIGNED_REAL_RANGE = (-1.5, 1.5)


@dataclass
class ArgSpec:
    """One argument of the subroutines (merged over the kernels that share it)."""

    name: str
    dtype: np.dtype
    is_array: bool
    shape: tuple = ()
    lower_bounds: tuple = ()
    written: bool = False
    span: object = None
    intent: str | None = None


@dataclass
class ValueRange:
    lo: float
    hi: float
    nondecreasing: bool = False
    why: str = ""

    def intersect(self, other: "ValueRange") -> "ValueRange":
        return ValueRange(max(self.lo, other.lo), min(self.hi, other.hi),
                          self.nondecreasing or other.nondecreasing,
                          "; ".join(w for w in (self.why, other.why) if w))


@dataclass
class InputPlan:
    """Everything needed to draw inputs (see :meth:`generate`)."""

    args: dict                       # name -> ArgSpec, in order of first appearance
    values: dict                     # name -> value of scalars decided here (sizes, fixed)
    shapes: dict                     # name -> tuple of ints (arrays)
    lower_bounds: dict               # name -> tuple of ints (arrays)
    ranges: dict = field(default_factory=dict)   # name -> ValueRange
    chosen: list = field(default_factory=list)   # names of sizes chosen here (not given)

    def describe(self) -> str:
        """``n=7, m=4`` for the scalars decided here (sizes and fixed values)."""
        return ", ".join(f"{n}={_show(v)}" for n, v in self.values.items())

    def generate(self, seed: int = 0, *, style: str = "default") -> dict:
        """Random inputs: name -> numpy array (Fortran order) or numpy scalar.

        *style* (one of :data:`VALUE_STYLES`) changes only the values that
        neither the plan (sizes, fixed values, subscript ranges) nor the
        user (``--range``) bound: those are data, whose sign and magnitude
        decide only which branches run."""
        if style not in VALUE_STYLES:
            raise ValueError(f"unknown value style {style!r}")
        rng = np.random.default_rng(seed)
        out = {}
        for name, spec in self.args.items():
            if name in self.values:
                out[name] = np.dtype(spec.dtype).type(self.values[name])
                continue
            rng_range = self.ranges.get(name)
            shape = self.shapes.get(name, ())
            if rng_range is None and style != "default":
                out[name] = _free_values(rng, spec.dtype, shape if spec.is_array else None,
                                         style)
                continue
            out[name] = _random_values(rng, spec.dtype, shape if spec.is_array else None,
                                       rng_range)
        return out


def nearest_first(pref, lo, hi):
    """*pref*, then the integers of [*lo*, *hi*] nearest to it, alternately
    above and below (the order sizes are tried in)."""
    yield pref
    for d in range(1, hi - lo + 1):
        if pref + d <= hi:
            yield pref + d
        if pref - d >= lo:
            yield pref - d
        if pref + d > hi and pref - d < lo:
            return


def _show(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return ".true." if v else ".false."
    if isinstance(v, np.floating):
        return str(v)
    return str(v)


def _free_values(rng, dtype, shape, style: str):
    """Values of an argument nothing bounds, drawn in *style* (``signed``,
    ``wide`` or ``zeros``): logicals as always; integers from -9..9 without
    0 (no integer division by zero that the default range avoids); reals and
    complex parts from :data:`SIGNED_REAL_RANGE` (``signed``), with a
    random sign and a magnitude 10**u, u in -3..3 (``wide``), or from
    :data:`SIGNED_REAL_RANGE` with each element 0 or 1 with probability 1/3
    each (``zeros``)."""
    dt = np.dtype(dtype)
    size = int(np.prod(shape)) if shape is not None else 1

    def reals():
        if style == "signed":
            return rng.uniform(*SIGNED_REAL_RANGE, size)
        if style == "zeros":
            pick = rng.integers(0, 3, size)
            return np.where(pick == 0, 0.0, np.where(pick == 1, 1.0,
                                                     rng.uniform(*SIGNED_REAL_RANGE, size)))
        return rng.choice([-1.0, 1.0], size) * 10.0 ** rng.uniform(-3.0, 3.0, size)
    if dt.kind == "b":
        return _random_values(rng, dtype, shape, None)
    if dt.kind in "iu":
        if dt.kind == "u":
            return _random_values(rng, dtype, shape, None)
        vals = rng.integers(1, 10, size=size) * rng.choice([-1, 1], size)
        vals = vals.astype(dt)
    elif dt.kind == "c":
        vals = (reals() + 1j * reals()).astype(dt)
    else:
        vals = reals().astype(dt)
    if shape is None:
        return vals[0]
    return np.asfortranarray(vals.reshape(shape, order="F"))


def _random_values(rng, dtype, shape, vrange: ValueRange | None):
    dt = np.dtype(dtype)
    size = int(np.prod(shape)) if shape is not None else 1
    if dt.kind == "b":
        vals = rng.integers(0, 2, size=size).astype(bool)
    elif dt.kind in "iu":
        lo, hi = (vrange.lo, vrange.hi) if vrange else DEFAULT_INT_RANGE
        lo, hi = int(np.ceil(lo)), int(np.floor(hi))
        info = np.iinfo(dt)
        lo, hi = max(lo, info.min), min(hi, info.max)
        vals = rng.integers(lo, hi + 1, size=size, dtype=np.int64)
        if vrange is not None and vrange.nondecreasing:
            vals = np.sort(vals)
        vals = vals.astype(dt)
    elif dt.kind == "c":
        lo, hi = (vrange.lo, vrange.hi) if vrange else DEFAULT_REAL_RANGE
        vals = (rng.uniform(lo, hi, size) + 1j * rng.uniform(lo, hi, size)).astype(dt)
    else:
        lo, hi = (vrange.lo, vrange.hi) if vrange else DEFAULT_REAL_RANGE
        vals = rng.uniform(lo, hi, size).astype(dt)
        if vrange is not None and vrange.nondecreasing:
            vals = np.sort(vals)
    if shape is None:
        return vals[0]
    return np.asfortranarray(vals.reshape(shape, order="F"))
