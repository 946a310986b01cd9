"""Covering arrays: the fewest rows, among the compatible ones, that hold every
t-tuple of axis values some compatible row holds.

A pairwise tool (PICT, allpairspy) builds rows value by value and then asks
a filter whether they are allowed. Here the compatible rows are already
known, so covering is a set cover over them: greedily take the row that
holds the most tuples not yet covered, then drop any row whose tuples the
others all hold. Ties are broken by a shuffle seeded with `seed`, so the
same input gives the same rows, and another seed another choice.

>>> result = cover([(0, 0), (0, 1), (1, 0), (1, 1)], (2, 2), strength=1)
>>> result.rows, result.tuples, result.covered, result.uncoverable
([1, 2], 4, 4, [])
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

__all__ = ["Coverage", "cover", "tuples_of", "MAX_TUPLES"]

# Listing the tuples no compatible row holds means enumerating them all: past
# this many, the count is given and the list left out.
MAX_TUPLES = 2_000_000

Tuple = tuple[tuple[int, int], ...]  # ((axis, value index), ...), axes ascending


@dataclass
class Coverage:
    """What a covering array holds.

    `rows` indexes the compatible rows it keeps; `tuples` is how many
    t-tuples of axis values the axes make, `covered` how many the kept rows
    hold (every tuple some compatible row holds), and `uncoverable` those no
    compatible row holds (None when there are more than MAX_TUPLES tuples).
    """

    strength: int
    rows: list[int]
    tuples: int
    covered: int
    uncoverable: list[Tuple] | None


def tuples_of(row: Sequence[int], strength: int) -> Iterator[Tuple]:
    """The t-tuples a row holds.

    >>> list(tuples_of((4, 5, 6), 2))
    [((0, 4), (1, 5)), ((0, 4), (2, 6)), ((1, 5), (2, 6))]
    """
    return itertools.combinations(tuple(enumerate(row)), strength)


def cover(rows: Sequence[Sequence[int]], sizes: Sequence[int], *, strength: int = 2, seed: int = 0,
          wanted: Collection[Tuple] | None = None) -> Coverage:
    """Choose rows (each a value index per axis) that hold every t-tuple the
    rows hold (or, given `wanted`, every one of those the rows hold: to
    compare with a tool that covers fewer)."""
    if not 1 <= strength <= len(sizes):
        raise ValueError(f"strength must be between 1 and the number of axes ({len(sizes)}), not {strength}")
    holds = [frozenset(tuples_of(row, strength)) for row in rows]
    if wanted is not None:
        target = frozenset(wanted)
        holds = [h & target for h in holds]
    coverable = frozenset().union(*holds)
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    rank = {row: position for position, row in enumerate(order)}
    chosen = _greedy(holds, rank)
    chosen = _prune(chosen, holds)
    total = sum(math.prod(c) for c in itertools.combinations(sizes, strength))
    uncoverable = None
    if total <= MAX_TUPLES:
        uncoverable = [t for t in _all_tuples(sizes, strength) if t not in coverable]
    return Coverage(strength=strength, rows=sorted(chosen), tuples=total, covered=len(coverable),
                    uncoverable=uncoverable)


def _greedy(holds: Sequence[frozenset[Tuple]], rank: dict[int, int]) -> list[int]:
    """Lazy greedy set cover: a row's gain only shrinks as others are taken,
    so a row whose recomputed gain still tops the heap is the best one."""
    uncovered = set().union(*holds)
    heap = [(-len(h), rank[i], i) for i, h in enumerate(holds) if h]
    heapq.heapify(heap)
    chosen: list[int] = []
    while uncovered and heap:
        _, order, row = heapq.heappop(heap)
        gain = len(holds[row] & uncovered)
        if gain == 0:
            continue
        if heap and gain < -heap[0][0]:
            heapq.heappush(heap, (-gain, order, row))
            continue
        chosen.append(row)
        uncovered -= holds[row]
    return chosen


def _prune(chosen: list[int], holds: Sequence[frozenset[Tuple]]) -> list[int]:
    """Drop, latest first, each row whose every tuple another kept row holds too."""
    count: dict[Tuple, int] = {}
    for row in chosen:
        for t in holds[row]:
            count[t] = count.get(t, 0) + 1
    kept = list(chosen)
    for row in reversed(chosen):
        if all(count[t] > 1 for t in holds[row]):
            kept.remove(row)
            for t in holds[row]:
                count[t] -= 1
    return kept


def _all_tuples(sizes: Sequence[int], strength: int) -> Iterator[Tuple]:
    for axes in itertools.combinations(range(len(sizes)), strength):
        for values in itertools.product(*(range(sizes[a]) for a in axes)):
            yield tuple(zip(axes, values))
