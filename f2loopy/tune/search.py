"""Which variants ``f2loopy tune`` measures, in which order.

A *space* maps each tunable name to its choices (first choice = what
``translate`` uses until tuned).  :class:`Search` hands out assignments one at
a time and is told each one's time (None for a variant that a transform
refused or that failed its check):

* exhaustive, in product order starting from the default, when the space has
  at most *budget* points;
* otherwise budgeted: the default, then random distinct points (seeded) for
  half the budget, then greedy coordinate descent from the best point so far
  (every other choice of one tunable at a time, moving to any improvement),
  then random points again until the budget is spent.
"""

from __future__ import annotations

import itertools
import math
import random


def space_size(space: dict) -> int:
    return math.prod(len(c) for c in space.values()) if space else 1


class Search:
    def __init__(self, space: dict, *, budget: int = 64, seed: int = 0):
        if budget < 1:
            raise ValueError("the budget must be at least 1")
        self.space = {n: tuple(c) for n, c in space.items()}
        self.names = list(self.space)
        self.budget = budget
        self.size = space_size(self.space)
        self.exhaustive = self.size <= budget
        self.rng = random.Random(seed)
        self.times: dict[tuple, float | None] = {}     # point -> ms or None
        self.order: list[tuple] = []
        self._product = itertools.product(*(range(len(self.space[n])) for n in self.names))
        self._greedy_queue: list[tuple] = []
        self._greedy_from: tuple | None = None

    @property
    def strategy(self) -> str:
        return "exhaustive" if self.exhaustive else f"budgeted ({self.budget} of {self.size})"

    def values(self, point: tuple) -> dict:
        return {n: self.space[n][i] for n, i in zip(self.names, point, strict=True)}

    def best(self):
        """The fastest point timed so far (the earliest of equal times), or None."""
        timed = [(self.times[p], k, p) for k, p in enumerate(self.order)
                 if self.times.get(p) is not None]
        return min(timed)[2] if timed else None

    def report(self, point: tuple, ms: float | None):
        self.times[point] = ms

    def _fresh(self, point) -> bool:
        return point not in self.times and point not in self.order

    def _random_point(self):
        if len(self.order) >= self.size:
            return None
        for _ in range(1000):
            p = tuple(self.rng.randrange(len(self.space[n])) for n in self.names)
            if self._fresh(p):
                return p
        for p in itertools.product(*(range(len(self.space[n])) for n in self.names)):
            if self._fresh(p):
                return p
        return None

    def _greedy_point(self):
        best = self.best()
        if best is None:
            return None
        if best != self._greedy_from:
            self._greedy_from = best
            self._greedy_queue = []
            for d, n in enumerate(self.names):
                for i in range(len(self.space[n])):
                    if i != best[d]:
                        p = best[:d] + (i,) + best[d + 1:]
                        self._greedy_queue.append(p)
        while self._greedy_queue:
            p = self._greedy_queue.pop(0)
            if self._fresh(p):
                return p
        return None

    def next(self):
        """``(point, assignment)`` to measure next, or None when the search is
        over; report its time with :meth:`report`."""
        if len(self.order) >= min(self.budget, self.size):
            return None
        point = None
        if self.exhaustive:
            for p in self._product:
                if self._fresh(p):
                    point = p
                    break
        elif not self.order:
            point = tuple(0 for _ in self.names)
        elif len(self.order) < max(1, self.budget // 2):
            point = self._random_point()
        else:
            point = self._greedy_point() or self._random_point()
        if point is None:
            return None
        self.order.append(point)
        return point, self.values(point)
