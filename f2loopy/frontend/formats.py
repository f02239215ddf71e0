"""Constant formats of diagnostic output (``'(a,2i5,f15.8)'``,
``"(a,3(1x,f10.4))"``): the edit descriptors that
:mod:`f2loopy.frontend.prints` translates to printf conversions.

:func:`parse_format` flattens a format into its descriptors in order, groups
(``3(1x,f10.4)``, nested up to three deep) repeated, and says where format
reversion restarts: at the last group of the top level (with its repeat
count), or at the start when there is none, as Fortran does."""

from __future__ import annotations

import re

#: one edit descriptor (with its repeat count)
_DESCRIPTOR = re.compile(
    r"(?P<r>[1-9]\d{0,2})?(?:(?P<a>a)(?P<aw>[1-9]\d{0,2})?|(?P<i>i)(?P<iw>\d{1,3})(?:\.(?P<im>\d{1,3}))?"
    r"|(?P<rl>es|en|[feg])(?P<rw>[1-9]\d{0,2})\.(?P<rd>\d{1,3})|(?P<l>l)(?P<lw>[1-9]\d{0,2})"
    r"|(?P<x>x)|(?P<slash>/))", re.IGNORECASE)
#: the start of a group, with its repeat count
_GROUP = re.compile(r"([1-9]\d{0,2})?\(")
#: groups nested deeper are refused (the flattened format stays small)
_MAX_DEPTH = 3
#: a format whose flattened form is longer is refused
_MAX_DESCRIPTORS = 1000


class _Untranslatable(Exception):
    """A descriptor that cannot be translated (its text is the argument)."""


def parse_format(fmt: str) -> tuple[list, int] | str:
    """The edit descriptors of format *fmt*, in order, and the index where
    format reversion restarts: ``("text", s)``, ``("x", blanks)``,
    ``("newline", count)``, ``("a", width)``, ``("i", spec)``, ``("real",
    spec)``, ``("logical", spec)`` (*spec*: a printf conversion without its
    length letter); where the format has anything else, the first
    descriptor that cannot be translated, as written (``b8``, ``1p``)."""
    body = fmt.strip()
    if not body.startswith("("):
        return body
    try:
        out, end, revert = _group(body, 1, 0)
    except _Untranslatable as exc:
        return str(exc.args[0])
    if body[end:].strip():
        return body[end:].strip()
    return out, revert


def _group(body: str, k: int, depth: int) -> tuple[list, int, int]:
    """The descriptors from *k* to the ``)`` that closes the group, the index
    after it, and where reversion restarts (the last group's start)."""
    out: list = []
    revert = 0
    while True:
        if k >= len(body):
            raise _Untranslatable(body)
        ch = body[k]
        if ch == ")":
            return out, k + 1, revert
        if ch in ", ":
            k += 1
        elif ch == "/":
            out.append(("newline", 1))
            k += 1
        elif ch in "'\"":
            text, k = _quoted(body, k)
            out.append(("text", text))
        elif (m := _GROUP.match(body, k)) is not None:
            if depth + 1 >= _MAX_DEPTH:       # (named up to its first ')')
                raise _Untranslatable(body[k:body.find(")", k) + 1 or len(body)])
            inner, k, _ = _group(body, m.end(), depth + 1)
            if depth == 0:
                revert = len(out)
            out += inner * int(m.group(1) or 1)
        else:
            m = _DESCRIPTOR.match(body, k)
            if m is None or m.end() == k or (m.end() < len(body) and
                                             body[m.end()] not in ",/ )"):
                raise _Untranslatable(re.split(r"[,/ )]", body[k:], maxsplit=1)[0])
            out += _expand(m)
            k = m.end()
        if len(out) > _MAX_DESCRIPTORS:
            raise _Untranslatable(body)


def _quoted(body: str, k: int) -> tuple[str, int]:
    """The text of the quoted string at *k* (a doubled quote is one) and the
    index after it."""
    quote = body[k]
    text = []
    end = k + 1
    while end < len(body):
        if body[end] == quote:
            if body[end + 1:end + 2] == quote:
                text.append(quote)
                end += 2
                continue
            return "".join(text), end + 1
        text.append(body[end])
        end += 1
    raise _Untranslatable(body[k:])


def _expand(m: re.Match[str]) -> list:
    count = int(m.group("r") or 1)
    if m.group("x"):
        return [("x", count)]
    if m.group("slash"):
        return [("newline", count)]
    if m.group("a"):
        return [("a", int(m.group("aw")) if m.group("aw") else None)] * count
    if m.group("i"):
        width = int(m.group("iw"))
        digits = f".{int(m.group('im'))}" if m.group("im") else ""
        return [("i", f"%{width or ''}{digits}")] * count
    if m.group("rl"):
        if m.group("rl").lower() == "en":     # (engineering: C has no such conversion)
            raise _Untranslatable(m.group(0))
        # (e: Fortran's 0.dddE+xx, built from a mantissa and an exponent by the codegen)
        letter = {"f": "f", "e": "e", "es": "E", "g": "G"}[m.group("rl").lower()]
        return [("real", f"%{int(m.group('rw'))}.{int(m.group('rd'))}{letter}")] * count
    return [("logical", f"%{int(m.group('lw'))}c")] * count
