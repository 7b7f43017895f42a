"""Dissimilarity uploads summed as their chunks arrive (004 §4.4).

What the coordinator needs from OSBR parties is only the sum, over parties, of
each condensed array (squared distances for eq. 3, eq. 5's numerators and
denominators, eq. 4's counts). Adding each chunk into one running sum as it
arrives means the coordinator holds one condensed matrix per summed quantity,
not one per party: m(m-1)/2 values, whatever the number of parties.
"""

from __future__ import annotations

import mmap
import threading

import numpy as np

from coordinator.condensed import condensed_index, reorder_condensed
from coordinator.join import positions, same_ids


class PairSums:
    """Running sums, by array name, of condensed arrays over one reference order of record ids.

    The first party to attach fixes the reference order. A party with the same
    ids in the same order (the common case) adds its chunks in place; any other
    party's values go to the reference positions of its pairs, and pairs with an
    id the reference lacks are skipped (the inner join drops them anyway).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.ids: np.ndarray | None = None
        self._sums: dict[str, np.ndarray] = {}
        self.attached = 0  # adders handed out and not detached

    @property
    def m(self) -> int:
        return 0 if self.ids is None else len(self.ids)

    def attach(self, ids: np.ndarray) -> PartySums:
        """The adder for one party's upload over ``ids`` (distinct)."""
        with self._lock:
            if self.ids is None:
                self.ids = ids
            reference = self.ids
            self.attached += 1
        if same_ids(ids, reference):
            return PartySums(self, None)
        return PartySums(self, positions(reference, ids))

    def _sum(self, name: str) -> np.ndarray:
        """The running sum for ``name``, in memory that the operating system commits as it is written."""
        if name not in self._sums:
            n = self.m * (self.m - 1) // 2
            self._sums[name] = np.frombuffer(mmap.mmap(-1, n * 8), dtype=np.float64) if n else np.zeros(0)
        return self._sums[name]

    def add(self, name: str, start: int, values: np.ndarray, mapping: np.ndarray | None, starts: np.ndarray | None):
        """Add ``values``, the elements ``start``... of one party's condensed array ``name``."""
        if mapping is None:
            with self._lock:
                target = self._sum(name)[start : start + len(values)]
                target += values
            return
        if starts is None:
            raise ValueError("a party's mapping comes with its rows' starts (PartySums)")
        e = np.arange(start, start + len(values), dtype=np.int64)
        i = np.searchsorted(starts, e, side="right") - 1  # the row of each element, then its column
        j = e - starts[i] + i + 1
        a, b = mapping[i], mapping[j]
        keep = (a >= 0) & (b >= 0)
        where = condensed_index(self.m, a[keep], b[keep])
        with self._lock:
            self._sum(name)[where] += values[keep]  # one party's pairs land on distinct positions

    def detach(self) -> None:
        """An adder that added nothing is given up (its upload was refused before any chunk passed its checks):
        if it was the only one, the sums are as if it never came, and the next party fixes the reference."""
        with self._lock:
            self.attached -= 1
            if not self.attached and not self._sums:
                self.ids = None

    def release(self) -> None:
        """Let go of every running sum (once combined: what the combination still needs, it holds itself)."""
        with self._lock:
            self._sums = {}

    def joined(self, name: str, ids: np.ndarray) -> np.ndarray:
        """The sum for ``name`` over ``ids`` (a subset of the reference ids), in that order."""
        total = self._sum(name)
        if self.ids is None:
            raise ValueError("no party has attached: the sums have no record ids")
        if same_ids(ids, self.ids):
            return total
        return reorder_condensed(total, self.m, positions(self.ids, ids))


class PartySums:
    """Adds one party's chunks, arriving in order, to the session's PairSums."""

    def __init__(self, sums: PairSums, mapping: np.ndarray | None):
        self.sums, self.mapping = sums, mapping
        n = len(mapping) if mapping is not None else 0
        rows = np.arange(n, dtype=np.int64)
        # where each row of the party's triangle starts: its pair (i, i + 1)
        self.starts = condensed_index(n, rows, rows + 1) if mapping is not None else None

    def add(self, name: str, start: int, values: np.ndarray) -> None:
        self.sums.add(name, start, values, self.mapping, self.starts)
