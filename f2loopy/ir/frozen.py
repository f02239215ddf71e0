"""A small immutable mapping used throughout the IR."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class FrozenMap(Mapping, Generic[K, V]):
    """An immutable, hashable mapping that keeps insertion order.

    Updates return new maps: ``m.set(k, v)``, ``m.remove(k)``, ``m.update(d)``.
    """

    __slots__ = ("_d", "_hash")

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()):
        self._d = dict(items)
        self._hash: int | None = None

    def __getitem__(self, key: K) -> V:
        return self._d[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    # the dict's own lookups: Mapping's versions go through __getitem__ and a
    # KeyError for every miss (``name in kernel.substitutions`` is asked often)
    def __contains__(self, key) -> bool:
        return key in self._d

    def get(self, key, default=None):
        return self._d.get(key, default)

    def to_dict(self) -> dict[K, V]:
        """A new dict of the items (a copy at the dict's own speed: ``dict(m)``
        goes through :meth:`__getitem__` for every key)."""
        return dict(self._d)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._d.items()))
        return self._hash

    def __eq__(self, other) -> bool:
        if isinstance(other, FrozenMap):
            return self._d == other._d
        if isinstance(other, Mapping):
            return self._d == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMap({self._d!r})"

    def set(self, key: K, value: V) -> "FrozenMap[K, V]":
        d = dict(self._d)
        d[key] = value
        return FrozenMap(d)

    def remove(self, *keys: K) -> "FrozenMap[K, V]":
        return FrozenMap((k, v) for k, v in self._d.items() if k not in keys)

    def update(self, other: Mapping[K, V] | Iterable[tuple[K, V]]) -> "FrozenMap[K, V]":
        d = dict(self._d)
        d.update(other)
        return FrozenMap(d)


def identity_memo(maxsize: int):
    """Memoize a one-argument function of immutable IR objects by object
    identity.  IR expressions and rules are shared between the versions of a
    kernel, so identity hits are common, and a lookup costs no deep equality
    test (which a hash-keyed cache pays on every hit).  The cache holds its
    keys, so an id is never reused while cached; it is emptied when full.

    The table is keyed by the object's hash (pymbolic caches it), not by
    ``id()``: inside the sandbox every ``id()`` call is an audit event that
    the sandbox's hook inspects, which made this cache the script's largest
    cost.  Nor by the object itself: a lookup of an equal but distinct object
    then runs the deep equality test of the whole expression tree, which was
    a third of the paper script's time.  A hit requires the identical object;
    any other object with that hash is computed afresh and replaces the
    entry."""
    def decorate(fn):
        cache: dict = {}

        @functools.wraps(fn)
        def memoized(obj):
            try:
                key = hash(obj)
            except (TypeError, RecursionError):     # unhashable: not cached
                return fn(obj)
            hit = cache.get(key)
            if hit is not None and hit[0] is obj:
                return hit[1]
            value = fn(obj)
            if len(cache) >= maxsize:
                cache.clear()
            cache[key] = (obj, value)
            return value

        memoized.cache_clear = cache.clear  # type: ignore[attr-defined]
        return memoized
    return decorate
