"""Iname implementation tags (how a loop index is realised) and array axis tags."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class InameTag:
    """Base class of iname implementation tags."""

    #: True for tags that map the iname onto the OpenCL grid (no loop emitted).
    hardware = False
    #: True for tags whose loop must be the innermost one around its instructions.
    innermost = False

    def __str__(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError


@dataclass(frozen=True)
class SequentialTag(InameTag):
    """``for``: a plain sequential loop (the default)."""

    def __str__(self) -> str:
        return "for"


@dataclass(frozen=True)
class GroupAxisTag(InameTag):
    """``g.N``: work-group number along axis N."""

    axis: int
    hardware = True

    def __str__(self) -> str:
        return f"g.{self.axis}"


@dataclass(frozen=True)
class LocalAxisTag(InameTag):
    """``l.N``: work-item number within the group along axis N."""

    axis: int
    hardware = True

    def __str__(self) -> str:
        return f"l.{self.axis}"


@dataclass(frozen=True)
class AutoLocalAxisTag(InameTag):
    """``l.auto``: a local axis chosen at code generation time."""

    def __str__(self) -> str:
        return "l.auto"


@dataclass(frozen=True)
class UnrollTag(InameTag):
    """``unr``: fully unrolled loop (the length must be constant)."""

    def __str__(self) -> str:
        return "unr"


@dataclass(frozen=True)
class ILPTag(InameTag):
    """``ilp`` / ``ilp.unr`` (unrolled) and ``ilp.seq`` (innermost loop).

    Instruction-level parallelism: the iname is parallel (no dependence may
    cross it), private temporaries written inside get one copy per value.
    """

    unrolled: bool = True
    innermost = True

    def __str__(self) -> str:
        return "ilp.unr" if self.unrolled else "ilp.seq"


@dataclass(frozen=True)
class VectorizeTag(InameTag):
    """``vec``: realised as an OpenCL vector lane where possible, else unrolled."""

    innermost = True

    def __str__(self) -> str:
        return "vec"


_TAG_RE = re.compile(r"^(g|l)\.(\d+)$")


def parse_iname_tag(text: str | InameTag | None) -> InameTag:
    """Parse a tag as written by users (``"g.0"``, ``"l.1"``, ``"unr"``, ...).

    Raises ValueError with the list of valid tags for anything else.
    """
    if isinstance(text, InameTag):
        return text
    if text is None:
        return SequentialTag()
    t = text.strip()
    m = _TAG_RE.match(t)
    if m:
        axis = int(m.group(2))
        if axis > 2:
            raise ValueError(f"hardware axis {t!r} out of range (OpenCL has axes 0, 1, 2)")
        return GroupAxisTag(axis) if m.group(1) == "g" else LocalAxisTag(axis)
    simple = {
        "for": SequentialTag(), "none": SequentialTag(), "seq": SequentialTag(),
        "l.auto": AutoLocalAxisTag(), "unr": UnrollTag(),
        "ilp": ILPTag(True), "ilp.unr": ILPTag(True), "ilp.seq": ILPTag(False),
        "vec": VectorizeTag(),
    }
    try:
        return simple[t.lower()]
    except KeyError:
        raise ValueError(
            f"unknown iname tag {text!r} (valid: for, g.N, l.N, l.auto, unr, "
            "ilp, ilp.unr, ilp.seq, vec)") from None


# {{{ array axis tags

_AXIS_TAG_RE = re.compile(r"^N(\d+)$")


@dataclass(frozen=True)
class ArrayAxisTag:
    """How one array axis is laid out in memory.

    ``kind`` is ``"nest"`` (with ``order``: N0 is the fastest-varying axis),
    ``"vec"`` (an OpenCL vector lane) or ``"sep"`` (one separate array per
    index value).
    """

    kind: str
    order: int = 0

    def __str__(self) -> str:
        return f"N{self.order}" if self.kind == "nest" else self.kind


def parse_axis_tags(spec, ndim: int) -> tuple[ArrayAxisTag, ...]:
    """Parse ``"N0,N1"``, ``"c"``, ``"f"``, ``"vec,N0"`` etc. for *ndim* axes."""
    if isinstance(spec, str):
        s = spec.strip().lower()
        if s in ("c", "f"):
            orders = list(range(ndim - 1, -1, -1) if s == "c" else range(ndim))
            return tuple(ArrayAxisTag("nest", o) for o in orders)
        parts = [p.strip() for p in spec.split(",")]
    else:
        parts = [str(p).strip() for p in spec]
    if len(parts) != ndim:
        raise ValueError(f"{len(parts)} axis tags given for an array with {ndim} axes")
    tags: list = []      # ArrayAxisTag, or 'c'/'f' until _computed_orders resolves them
    computed = []        # per-axis 'c'/'f': the order comes from the axes' positions
    for p in parts:
        m = _AXIS_TAG_RE.match(p)
        if m:
            tags.append(ArrayAxisTag("nest", int(m.group(1))))
        elif p.lower() in ("vec", "sep"):
            tags.append(ArrayAxisTag(p.lower()))
        elif p.lower() in ("c", "f"):
            computed.append(len(tags))
            tags.append(p.lower())
        else:
            raise ValueError(f"unknown array axis tag {p!r} (valid: N0..Nk, vec, sep, or 'c'/'f')")
    if computed:
        tags = _computed_orders(tags, spec)
    orders = [t.order for t in tags if t.kind == "nest"]
    if len(set(orders)) != len(orders):
        raise ValueError(f"axis nesting orders repeat in {spec!r}")
    if sum(t.kind == "vec" for t in tags) > 1:
        raise ValueError("at most one axis can be tagged 'vec'")
    return tuple(tags)


def _computed_orders(tags: list, spec) -> list:
    """Per-axis 'c' and 'f', left to right: a 'c' axis varies faster than
    every stride axis before it, an 'f' axis slower ("c,c" is row-major,
    "f,f" column-major, "sep,c,c" a row-major array per index)."""
    if any(isinstance(t, ArrayAxisTag) and t.kind == "nest" for t in tags):
        raise ValueError(f"'c'/'f' and explicit N0..Nk cannot be mixed in {spec!r}")
    levels: dict = {}
    for k, t in enumerate(tags):
        if t in ("c", "f"):
            if not levels:
                levels[k] = 0
            elif t == "c":
                levels[k] = min(levels.values()) - 1
            else:
                levels[k] = max(levels.values()) + 1
    low = min(levels.values())
    return [ArrayAxisTag("nest", levels[k] - low) if k in levels else t
            for k, t in enumerate(tags)]


def fortran_axis_tags(ndim: int) -> tuple[ArrayAxisTag, ...]:
    return tuple(ArrayAxisTag("nest", i) for i in range(ndim))

# }}}
