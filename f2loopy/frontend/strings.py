"""Character strings of a known length: the local ``character*16 subnam``
of LAPACK's ``ilaenv``, the routine name ``'DGEQRF'`` it is passed, the
option string ``side // trans``.

Where :mod:`f2loopy.frontend.characters` keeps a character *flag* as one
integer code, a string is a tuple with one IR expression per character (its
character code): a Python ``int`` where it is known when translating, so that
comparisons with constants fold away.

- A local character variable of constant length ``n > 1`` (not an argument
  of the kernel, no initial value, not in a module or common block) is a
  private array of ``n`` int32 character codes, lower bound 1
  (``<name>_chars``).
- A character constant is the codes of its characters.
- A substring ``s(i:j)`` of such a variable or of a string bound to a
  dummy argument needs constant bounds, or ``s(i:i)`` with any ``i`` (one
  character), or bounds whose difference is constant.
- ``//`` joins two strings; ``char(i)``/``achar(i)`` is a string of one
  character; a one-character flag is a string of one character.
- A character dummy argument of an inlined procedure of length ``*`` or more
  than 1 is bound to the string the caller passes (a constant, such a
  variable, a concatenation, a one-character flag), padded with blanks or cut
  to its declared length.  Its flag code (:func:`~f2loopy.frontend.characters.character_code`)
  serves the uses of :mod:`~f2loopy.frontend.characters`.

Strings are compared with ``==``/``/=`` character by character, the shorter
padded with blanks (as Fortran does); ``len`` of a string is a constant;
assigning a string or a substring assigns its characters (padded or cut).
Other uses stay located errors (see ``refuse_character``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend.bindings import ScalarBinding
from f2loopy.frontend.characters import LONG, character_length
from f2loopy.ir.expressions import make_subscript
from f2loopy.ir.folding import fold_constants, normalize_integer

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_host import LoweringHost as _Host
else:
    _Host = object

#: the character code of a blank, which pads the shorter of two strings
BLANK = ord(" ")


@dataclass(eq=False)
class StringBinding(ScalarBinding):
    """A character dummy argument bound to a string of the caller: *chars*
    its character codes (``expr`` is its flag code)."""

    chars: tuple = ()


def flag_code(chars: tuple):
    """The flag code of a string (see :mod:`~f2loopy.frontend.characters`):
    its first character, plus ``LONG`` if a non-blank character follows."""
    if not chars:
        return np.int32(BLANK)
    first, rest = chars[0], chars[1:]
    if all(isinstance(c, (int, np.integer)) for c in rest):
        more = any(int(c) != BLANK for c in rest)
        if isinstance(first, (int, np.integer)):
            return np.int32(int(first) + (LONG if more else 0))
        return p.Sum((first, LONG)) if more else first
    nonblank = [p.Comparison(c, "!=", BLANK) for c in rest
                if not isinstance(c, (int, np.integer))]
    if any(isinstance(c, (int, np.integer)) and int(c) != BLANK for c in rest):
        return p.Sum((first, LONG))
    more = nonblank[0] if len(nonblank) == 1 else p.LogicalOr(tuple(nonblank))
    return p.Sum((first, p.If(more, LONG, 0)))


def fitted(chars: tuple, length: int) -> tuple:
    """*chars* cut or padded with blanks to *length*."""
    return tuple(chars[:length]) + (BLANK,) * max(0, length - len(chars))


def _known(c) -> bool:
    return isinstance(c, (int, np.integer))


def compare_strings(a: tuple, b: tuple, equal: bool):
    """``a == b`` (``a /= b`` unless *equal*), the shorter padded with
    blanks: a numpy bool where the characters decide it when translating."""
    n = max(len(a), len(b))
    terms = []
    for x, y in zip(fitted(a, n), fitted(b, n), strict=True):
        if _known(x) and _known(y):
            if int(x) != int(y):
                return np.bool_(not equal)
            continue
        terms.append(p.Comparison(x, "==", y))
    if not terms:
        return np.bool_(equal)
    same = terms[0] if len(terms) == 1 else p.LogicalAnd(tuple(terms))
    return same if equal else p.LogicalNot(same)


def _difference(hi, lo):
    """``hi - lo + 1``: an int where the terms cancel (``n+3`` and ``n``),
    else an expression."""
    count = fold_constants(p.Sum((hi, p.Product((-1, lo)), 1)))
    if _known(count):
        return count
    from pymbolic.mapper.distributor import DistributeMapper
    from pymbolic.mapper.flattener import flatten
    try:
        return flatten(DistributeMapper()(count))
    except (TypeError, ValueError, NotImplementedError, RuntimeError):
        return count


def _parenthesised(node):
    while isinstance(node, F.Parenthesis):
        node = node.items[1]
    return node


class StringsMixin(_Host):
    """Character strings of known length (mixed into UnitLowering)."""

    def string_symbol(self, name: str):
        """The symbol of *name* if it is a string variable (see the module
        docstring), else None."""
        sym = self.symtab.get(name)
        if sym is None or sym.is_array or sym.is_dummy or sym.is_parameter or \
                sym.is_initialized or sym.storage is not None:
            return None
        length = character_length(sym.dtype)
        if not isinstance(length, int) or length <= 1 or \
                self.bindings.get(name.lower()) is not None:
            return None
        return sym

    def string_storage(self, sym) -> str:
        """IR name of the private array of character codes of *sym*."""
        key = f"{sym.name.lower()}:chars"
        name = self.renames.get(key)
        if name is None:
            name = self.new_temporary(f"{sym.name}_chars", np.int32,
                                      shape=(character_length(sym.dtype),), lower_bounds=(1,))
            self.renames[key] = name
        return name

    def bound_string(self, name: str):
        b = self.bindings.get(name.lower())
        return b if isinstance(b, StringBinding) else None

    def is_string(self, node) -> bool:
        """Whether *node* is a string (not a flag nor a constant): a string
        variable, a dummy bound to a string, a substring of one, a
        concatenation or ``char(i)``."""
        node = _parenthesised(node)
        if isinstance(node, F.Level_3_Expr):
            return True
        if isinstance(node, F.Part_Ref):
            node = node.items[0]
        elif isinstance(node, F.Intrinsic_Function_Reference):
            return str(node.items[0]).lower() in ("char", "achar")
        if isinstance(node, F.Name):
            name = str(node)
            return self.loop_for(name) is None and (
                self.string_symbol(name) is not None or self.bound_string(name) is not None
                or self.string_constant(name) is not None)
        return False

    def string_constant(self, name: str) -> tuple | None:
        """The character codes of *name* if it is a character parameter
        longer than one character (:mod:`f2loopy.frontend.character_constants`),
        else None."""
        if self.bindings.get(name.lower()) is not None:
            return None
        sym = self.symtab.get(name)
        if sym is None or sym.text is None or len(sym.text) <= 1:
            return None
        return tuple(ord(c) for c in sym.text)

    def string_value(self, node) -> tuple | None:
        """The character codes of *node* if it is a string, a character
        constant or a flag of length 1; else None."""
        node = _parenthesised(node)
        if isinstance(node, F.Char_Literal_Constant):
            from f2loopy.frontend.characters import literal_text
            text = literal_text(node)
            bad = [c for c in text if ord(c) > 255]
            if bad:
                raise self.error(f"character {bad[0]!r} is not a one-byte character", str(node))
            return tuple(ord(c) for c in text)
        if isinstance(node, F.Level_3_Expr):
            left, _, right = node.items
            parts = []
            for part in (left, right):
                chars = self.string_value(part)
                if chars is None:
                    raise self.error(f"'{part}' in a concatenation is not a character of a "
                                     "known length (a constant, a local character variable, "
                                     "or a one-character argument)", "//",
                                     UnsupportedFeatureError)
                parts.append(chars)
            return parts[0] + parts[1]
        if isinstance(node, F.Intrinsic_Function_Reference) and \
                str(node.items[0]).lower() in ("char", "achar"):
            args = list(node.items[1].items) if node.items[1] is not None else []
            if len(args) != 1:
                raise self.error(f"'{node.items[0]}' takes one argument here", str(node))
            return (normalize_integer(self.expr(_arg_value(args[0]))),)
        if isinstance(node, F.Name):
            name = str(node)
            if self.loop_for(name) is not None:
                return None
            bound = self.bound_string(name)
            if bound is not None:
                return bound.chars
            constant = self.string_constant(name)
            if constant is not None:
                return constant
            sym = self.string_symbol(name)
            if sym is not None:
                store = self.string_storage(sym)
                return tuple(make_subscript(store, (k,))
                             for k in range(1, character_length(sym.dtype) + 1))
        if isinstance(node, F.Part_Ref) and isinstance(node.items[0], F.Name) and \
                self.is_string(node.items[0]):
            return self.substring(node)
        flag = self.char_operand(node)
        if flag is not None and flag[1] == 1:
            code = flag[0]
            return (np.int32(code % LONG) if _known(code) else code,)
        return None

    def known_string(self, node) -> tuple:
        """:meth:`string_value` of *node*, which :meth:`is_string` (or being a
        character constant) says is a string."""
        chars = self.string_value(node)
        if chars is None:
            raise TypeError(f"internal error: '{node}' is not a string")
        return chars

    def substring_positions(self, node, length: int):
        """The positions (1-based IR expressions) substring *node* of a string
        of *length* selects."""
        subs = list(node.items[1].items) if node.items[1] is not None else []
        text = str(node).replace(" ", "")
        if len(subs) != 1 or not isinstance(subs[0], F.Subscript_Triplet) or \
                subs[0].items[2] is not None:
            raise self.error(f"'{text}' is not a substring (write {node.items[0]}(i:j))",
                             str(node.items[0]))
        lo_node, hi_node, _ = subs[0].items
        lo = np.int32(1) if lo_node is None else normalize_integer(self.expr(lo_node))
        hi = np.int32(length) if hi_node is None else normalize_integer(self.expr(hi_node))
        count = np.int32(1) if lo == hi else _difference(hi, lo)
        if not _known(count):
            raise self.error(f"substring {text} is not supported: its length must be known "
                             f"when translating (constant bounds, or {node.items[0]}(i:i))",
                             str(node.items[0]), UnsupportedFeatureError)
        count = max(0, int(count))
        if _known(lo) and (int(lo) < 1 or int(lo) + count - 1 > length) and count:
            raise self.error(f"substring {text} is out of bounds (the string has {length} "
                             "character(s))", str(node.items[0]))
        return [fold_constants(p.Sum((lo, k))) if k else lo for k in range(count)]

    def substring(self, node) -> tuple:
        name = str(node.items[0])
        whole = self.string_value(node.items[0])
        if whole is None:              # is_string(node.items[0]) said it is one
            raise TypeError(f"internal error: '{name}' is not a string")
        positions = self.substring_positions(node, len(whole))
        sym = self.string_symbol(name)
        if sym is not None:
            store = self.string_storage(sym)
            return tuple(whole[int(k) - 1] if _known(k) else make_subscript(store, (k,))
                         for k in positions)
        out = []
        for k in positions:
            if _known(k):
                out.append(whole[int(k) - 1])
                continue
            # a position known only when running, in a bound string: choose
            value = whole[-1]
            for j in range(len(whole) - 1, 0, -1):
                value = p.If(p.Comparison(k, "==", j), whole[j - 1], value)
            out.append(value)
        return tuple(out)

    def string_comparison(self, rel: str, left, right):
        """``left rel right`` where an operand is a string, else None."""
        if not (self.is_string(left) or self.is_string(right)):
            return None
        a, b = self.string_value(left), self.string_value(right)
        if a is None or b is None:
            node = left if a is None else right
            raise self.error(f"'{node}' is compared with a string but is not a character "
                             "of a known length", str(node), UnsupportedFeatureError)
        if rel not in ("==", "!="):
            raise self.error(f"strings can only be compared with '==' and '/=' in a kernel, "
                             f"not '{rel}'", rel, UnsupportedFeatureError)
        return compare_strings(a, b, rel == "==")

    def string_operand(self, node):
        """The flag view ``(code, length, is_constant)`` of a string
        operand, else None."""
        if not self.is_string(node):
            return None
        chars = self.known_string(node)
        return flag_code(chars), len(chars), all(_known(c) for c in chars)

    def string_assignment(self, lhs_node, rhs_node) -> bool:
        """``s = ...`` or ``s(i:j) = ...`` for a string variable *s*: its
        characters are assigned; False if *lhs_node* is not one."""
        if isinstance(lhs_node, F.Part_Ref) and isinstance(lhs_node.items[0], F.Name):
            sym = self.string_symbol(str(lhs_node.items[0]))
            if sym is None:
                return False
            positions = self.substring_positions(lhs_node, character_length(sym.dtype))
        elif isinstance(lhs_node, F.Name):
            sym = self.string_symbol(str(lhs_node))
            if sym is None:
                return False
            positions = [np.int32(k) for k in range(1, character_length(sym.dtype) + 1)]
        else:
            return False
        chars = self.string_value(rhs_node)
        if chars is None:
            raise self.error(f"'{sym.name}' is a character: only a character of a known "
                             "length (a constant, a character variable, a substring, a "
                             "concatenation, char(i)) can be assigned to it in a kernel",
                             sym.name, UnsupportedFeatureError)
        store = self.string_storage(sym)
        values = fitted(chars, len(positions))
        if len(values) > 1:
            # s(1:3) = s(2:4): every character of the right-hand side is read
            # before any is written, as Fortran takes its value first
            values = tuple(v if _known(v) else p.Variable(self.hold(v)) for v in values)
        for k, value in zip(positions, values, strict=True):
            self.add_assignment(make_subscript(store, (k,)), np.dtype(np.int32), value,
                                sym.name)
        return True

    def hold(self, value) -> str:
        """A fresh scalar temporary assigned *value* now."""
        name = self.new_temporary("char_value", np.int32)
        self.add_raw_assignment(name, value)
        return name

    def string_length(self, arg_nodes):
        """``len(s)`` of a string or character constant: the constant, else None."""
        if len(arg_nodes) != 1:
            return None
        node = _parenthesised(_arg_value(arg_nodes[0]))
        if self.is_string(node) or isinstance(node, F.Char_Literal_Constant):
            return np.int32(len(self.known_string(node)))
        if isinstance(node, F.Name):
            sym = self.symtab.get(str(node))
            if sym is not None and not sym.is_array and \
                    isinstance(character_length(sym.dtype), int):
                return np.int32(character_length(sym.dtype))
        return None

    def bind_string(self, dsym, node):
        """The binding of character dummy *dsym* (of length ``*`` or more
        than 1) to a string, a constant or a one-character flag *node* of the
        caller, else None."""
        length = character_length(dsym.dtype)
        if length == 1:
            return None
        node = _parenthesised(_arg_value(node))
        if not (self.is_string(node) or isinstance(node, F.Char_Literal_Constant)):
            flag = self.char_operand(node)
            if flag is None or flag[1] != 1:
                return None       # a flag of unknown length: its code only
        chars = self.known_string(node)
        if isinstance(length, int):
            chars = fitted(chars, length)
        const = all(_known(c) for c in chars)
        return StringBinding(flag_code(chars), False,
                             "a character constant" if const else "a character argument",
                             chars=chars)


def _arg_value(node):
    return node.items[1] if isinstance(node, F.Actual_Arg_Spec) else node


__all__ = ["BLANK", "StringBinding", "StringsMixin", "compare_strings", "fitted", "flag_code"]
