"""``character`` flags: dummy arguments such as ``character trans``,
``character*1 uplo`` or ``character(len=*) side`` that a routine only
compares, as the BLAS and LAPACK do.

A kernel computes on numbers, so such an argument becomes an integer code
(:func:`character_code`): the character code of its first character, plus
256 when more non-blank characters follow.  That is exactly what comparing
the argument with a one-character constant needs (Fortran pads the shorter
operand with blanks: ``side == 'L'`` holds for ``'L'`` and ``'L  '``, not for
``'Left'``), and all that ``lsame`` and ``ichar`` look at.  The host glue
computes the code from the caller's string (a Python ``str``, a Fortran
``character``).

Supported uses: ``==``, ``/=`` (``.eq.``, ``.ne.``) with a one-character
constant or another one-character flag; ``select case`` on a flag with
one-character case values (ranges only on a ``character*1`` flag);
``ichar``/``iachar``; ``lsame`` (the BLAS function, recognised by name when
the file does not define it, or any function of the file, inlined, whose
character dummy arguments are used in these ways); passing a flag on to such
a function.  Anything else that needs the characters themselves stays a
located error.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.diagnostics import UnsupportedFeatureError

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_host import LoweringHost as _Host
else:
    _Host = object


#: the code's bit saying that more non-blank characters follow the first
LONG = 256


def character_dtype(length) -> np.dtype:
    """The dtype of a character variable of *length* (an int or ``"*"``):
    int32, the type of its code in the kernel, marked as a character."""
    return np.dtype(np.int32, metadata={"character": length})


def character_length(dtype):
    """The declared length of a character dtype (int or ``"*"``), else None."""
    if dtype is None:
        return None
    meta = np.dtype(dtype).metadata
    return meta.get("character") if meta else None


def is_character(dtype) -> bool:
    return character_length(dtype) is not None


def length_from_selector(selector):
    """The length a ``character`` type spec's selector gives: an int, or
    ``"*"`` for an assumed or unknown length."""
    if selector is None:
        return 1
    text = re.sub(r"\s+", "", str(selector)).upper()
    text = text.lstrip("*").strip("()")
    for part in text.split(","):
        part = part.strip("()")
        if part.startswith("KIND="):
            continue
        part = part[4:] if part.startswith("LEN=") else part
        if part.isdigit():
            return int(part)
        return "*"
    return 1


def character_code(text: str) -> int:
    """The kernel's code for the string *text* (see the module docstring)."""
    if not text:
        return ord(" ")
    first = ord(text[0])
    if first > 255:
        raise ValueError(f"character {text[0]!r} is not a one-byte character")
    return first + (LONG if len(text.rstrip(" ")) > 1 else 0)


def literal_text(node) -> str:
    """The value of a character constant node (quotes removed, doubled
    quotes undone)."""
    text = str(node.items[0])
    quote = text[0]
    return text[1:-1].replace(quote * 2, quote)


def _upper(code):
    """The code of the first character in upper case (ASCII)."""
    if isinstance(code, (int, np.integer)):
        c = int(code) % LONG
        return c - 32 if ord("a") <= c <= ord("z") else c
    first = p.Call(p.Variable("mod"), (code, LONG))
    lower = p.LogicalAnd((p.Comparison(first, ">=", ord("a")),
                          p.Comparison(first, "<=", ord("z"))))
    return p.If(lower, p.Sum((first, -32)), first)


class CharacterMixin(_Host):
    """Character flags (mixed into UnitLowering)."""

    def char_operand(self, node):
        """``(code, length, is_constant)`` if *node* is a character operand
        (a constant or a flag, or a string: :mod:`f2loopy.frontend.strings`),
        else None."""
        while isinstance(node, F.Parenthesis):
            node = node.items[1]
        string = self.string_operand(node)
        if string is not None:
            return string
        if isinstance(node, F.Char_Literal_Constant):
            text = literal_text(node)
            try:
                return character_code(text), max(1, len(text)), True
            except ValueError as exc:
                raise self.error(str(exc), str(node)) from None
        if isinstance(node, F.Part_Ref) and isinstance(node.items[0], F.Name):
            whole = self.char_operand(node.items[0])
            if whole is None:
                return None
            subs = list(node.items[1].items) if node.items[1] is not None else []
            if len(subs) != 1 or not isinstance(subs[0], F.Subscript_Triplet) or \
                    subs[0].items[2] is not None or \
                    str(subs[0].items[0] or "1").strip() != "1" or \
                    str(subs[0].items[1]).strip() != "1":
                text = str(node).replace(" ", "")
                raise self.error(f"substring {text} is not supported: a kernel only knows "
                                 "the first character of a character argument (use "
                                 f"{node.items[0]}(1:1))", str(node.items[0]),
                                 UnsupportedFeatureError)
            code = whole[0]
            return (code if whole[1] == 1 else p.Call(p.Variable("mod"), (code, LONG))), 1, \
                False
        if isinstance(node, F.Name):
            name = str(node)
            if self.loop_for(name) is not None:
                return None
            sym = self.symtab.get(name)
            if sym is None or not is_character(sym.dtype):
                return None
            if sym.is_array:
                raise self.error(f"character array '{name}' is not supported (only scalar "
                                 "character arguments used as flags are)", name,
                                 UnsupportedFeatureError)
            if sym.text is not None:            # a character parameter
                return sym.value, character_length(sym.dtype), True
            from f2loopy.frontend.messages import message_root, refuse_message_read
            if message_root(self, sym) is not None:
                raise refuse_message_read(self, name)
            if sym.is_parameter or character_length(sym.dtype) == "*" and not (
                    sym.is_dummy or self.bindings.get(name.lower())):
                raise self.error(f"character variable '{name}' is not supported (only "
                                 "character dummy arguments and local character variables "
                                 "used as flags are)", name, UnsupportedFeatureError)
            code = self.scalar_value(sym, name)
            if sym.is_dummy and character_length(sym.dtype) == 1 and \
                    not self.bindings.get(name.lower()):
                # the kernel's own character*1 argument: the glue's code of
                # the caller's string ('No transpose', as LAPACK passes to
                # CHARACTER TRANSA) says more characters follow, which the
                # dummy does not see
                code = p.Call(p.Variable("mod"), (code, LONG))
            return code, character_length(sym.dtype), False
        return None

    def char_comparison(self, op, left, right):
        """The comparison ``left op right`` if an operand is a character,
        else None."""
        rel = {".EQ.": "==", "==": "==", ".NE.": "!=", "/=": "!="}.get(str(op).upper())
        strings = self.string_comparison(rel or str(op), left, right)
        if strings is not None:
            return strings
        a, b = self.char_operand(left), self.char_operand(right)
        if a is None and b is None:
            return None
        if a is None or b is None:
            raise self.error("a character can only be compared with a character", str(op))
        if rel is None:
            raise self.error(f"characters can only be compared with '==' and '/=' in a "
                             f"kernel, not '{op}'", str(op), UnsupportedFeatureError)
        for (code, length, const), node in ((a, left), (b, right)):
            if const and length != 1:
                raise self.error(f"comparing with {node} is not supported: a kernel only "
                                 "knows the first character of a character argument "
                                 "(compare with one character)", str(node),
                                 UnsupportedFeatureError)
        if not a[2] and not b[2] and (a[1] != 1 or b[1] != 1):
            raise self.error("comparing two character arguments is only supported for "
                             "character*1 ones (a kernel only knows their first "
                             "character)", str(op), UnsupportedFeatureError)
        if a[2] and b[2]:
            return np.bool_((a[0] == b[0]) == (rel == "=="))
        return p.Comparison(a[0], rel, b[0])

    def char_function(self, name, arg_nodes, node):
        """``ichar``, ``iachar`` and the BLAS ``lsame`` on characters; None
        for anything else."""
        low = name.lower()
        sym = self.symtab.get(name)
        if sym is not None and is_character(sym.dtype):
            self.refuse_character(sym, name)          # a substring used as a value
        if low == "len" and not self.symtab.get(name):
            length = self.string_length(arg_nodes)
            if length is not None:
                return length
        if low in ("ichar", "iachar") and len(arg_nodes) == 1:
            arg = self.char_operand(_value(arg_nodes[0]))
            if arg is None:
                return None
            code, length, const = arg
            if const:
                return np.int32(code % LONG)
            return code if length == 1 else p.Call(p.Variable("mod"), (code, LONG))
        if low == "lsame" and self.defined_elsewhere(name):
            # the BLAS function (also Reference BLAS's lsame.f on the search
            # path: its ASCII/EBCDIC code compares letters case-insensitively,
            # as the built-in form does, which folds for constant flags)
            if len(arg_nodes) != 2:
                raise self.error(f"'lsame' takes 2 arguments, got {len(arg_nodes)}", name)
            args = [self.char_operand(_value(a)) for a in arg_nodes]
            for a, n in zip(args, arg_nodes, strict=True):
                if a is None:
                    raise self.error("the arguments of 'lsame' must be characters", str(n))
            (ca, _, ka), (cb, _, kb) = args
            if ka and kb:
                return np.bool_(_upper(ca) == _upper(cb))
            if kb or ka:
                var, const = (ca, cb) if kb else (cb, ca)
                var_len = args[0][1] if kb else args[1][1]
                upper = _upper(const)
                lower = upper + 32 if ord("A") <= upper <= ord("Z") else upper
                first = var if var_len == 1 else p.Call(p.Variable("mod"), (var, LONG))
                if lower == upper:
                    return p.Comparison(first, "==", upper)
                return p.LogicalOr((p.Comparison(first, "==", upper),
                                    p.Comparison(first, "==", lower)))
            return p.Comparison(_upper(ca), "==", _upper(cb))
        return None

    def char_assignment(self, lhs_node, rhs_node) -> bool:
        """``flag = 'T'`` or ``flag = other``: a local character variable set
        to a constant or another flag (LAPACK's ``TRANST``, ``NORM``) holds
        its code; False if *lhs_node* is not a character variable.  A string
        variable (:mod:`f2loopy.frontend.strings`) is assigned its
        characters."""
        if self.string_assignment(lhs_node, rhs_node):
            return True
        if not isinstance(lhs_node, F.Name):
            return False
        name = str(lhs_node)
        sym = self.symtab.get(name)
        if sym is None or not is_character(sym.dtype) or sym.is_array:
            return False
        from f2loopy.frontend.messages import assign_message, message_root
        if message_root(self, sym) is not None:
            assign_message(self, lhs_node, sym, rhs_node)
            return True
        if sym.is_dummy or self.bindings.get(name.lower()) is not None:
            raise self.error(f"assigning character argument '{name}' is not supported (a "
                             "kernel cannot return characters; return an integer code)",
                             name, UnsupportedFeatureError)
        value = self.char_operand(rhs_node)
        if value is None:
            raise self.error(f"'{name}' is a character: only a character constant or "
                             "another character variable can be assigned to it in a kernel",
                             name, UnsupportedFeatureError)
        code, length, const = value
        if character_length(sym.dtype) == 1 and length != 1:
            # a character*1 variable keeps the first character only
            code = np.int32(code % LONG) if const else p.Call(p.Variable("mod"), (code, LONG))
        assignee, dtype = self.lower_assignee(lhs_node)
        self.add_assignment(assignee, dtype, code, name)
        return True

    def char_selector(self, node):
        """``select case`` on a character flag: its code and length, else None."""
        arg = self.char_operand(node)
        if arg is None:
            return None
        if arg[2]:
            raise self.error("'select case' on a constant is not supported", str(node),
                             UnsupportedFeatureError)
        return arg[0], arg[1]

    def char_case_value(self, node, length, in_range: bool):
        """The code of a case value of a ``select case`` on a character flag
        of *length*."""
        arg = self.char_operand(node)
        if arg is None or not arg[2]:
            raise self.error("case values of a 'select case' on a character must be "
                             "character constants", str(node))
        if arg[1] != 1:
            raise self.error(f"case value {node} is not supported: a kernel only knows the "
                             "first character of a character argument (use one character)",
                             str(node), UnsupportedFeatureError)
        if in_range and length != 1:
            raise self.error("case ranges on a character argument are only supported for "
                             "character*1 ones", str(node), UnsupportedFeatureError)
        return np.int32(arg[0])

    def bind_character(self, proc, dsym, node):
        """The binding of character dummy argument *dsym* of *proc* to the
        actual argument *node* (a flag or a constant)."""
        from f2loopy.frontend.bindings import ScalarBinding
        string = self.bind_string(dsym, node)
        if string is not None:
            return string
        arg = self.char_operand(_value(node))
        if arg is None:
            raise self.error(f"argument '{dsym.name}' of '{proc.name}' is a character, but "
                             "the actual argument is not", proc.name)
        code, length, const = arg
        if character_length(dsym.dtype) == 1 and length != 1:
            # a character*1 dummy sees the first character only
            code = code % LONG if const else p.Call(p.Variable("mod"), (code, LONG))
        return ScalarBinding(code, False, "a character constant" if const
                             else "a character argument")

    def refuse_character(self, sym, name):
        raise self.error(f"character variable '{name}' can only be compared (==, /=), used "
                         "in 'select case', or passed to lsame or ichar in a kernel",
                         name, UnsupportedFeatureError)


def _value(node):
    return node.items[1] if isinstance(node, F.Actual_Arg_Spec) else node


__all__ = ["CharacterMixin", "character_code", "character_dtype", "character_length",
           "is_character", "length_from_selector"]
