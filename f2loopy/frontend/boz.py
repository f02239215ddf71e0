"""BOZ constants (``z'1F'``, ``b'101'``, ``o'17'``, also double-quoted):
f2loopy reads them as the argument of ``int()`` only, where they are the
integer their digits spell.  Elsewhere (``real(z'3F800000')`` is a bit
pattern) the frontend refuses them as an unsupported expression."""

from __future__ import annotations

import re

import numpy as np

#: fparser's BOZ constant nodes -> their base
_BASES = {"Binary_Constant": 2, "Octal_Constant": 8, "Hex_Constant": 16}
_TEXT = re.compile(r"[BOZbOoZz]\s*(['\"])([0-9A-Fa-f]{1,64})\1")


def is_boz(node) -> bool:
    """Whether *node* is a BOZ constant."""
    return type(node).__name__ in _BASES


def boz_integer(node, target: np.dtype) -> np.generic:
    """The value of BOZ constant *node* as an integer of *target*; ValueError
    for one whose value sets the sign bit (a bit pattern: gfortran's value
    depends on the kind and on -fno-range-check) or that is malformed."""
    text = str(node)
    m = _TEXT.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"'{text}' is not a BOZ constant f2loopy reads")
    try:
        value = int(m.group(2), _BASES[type(node).__name__])
    except ValueError:
        raise ValueError(f"'{text}' has a digit outside its base") from None
    bits = 8 * np.dtype(target).itemsize
    if value >= 2 ** (bits - 1):
        raise ValueError(f"BOZ constant {text} sets the sign bit of an integer of kind "
                         f"{bits // 8} (a bit pattern, not supported)")
    return np.dtype(target).type(value)
