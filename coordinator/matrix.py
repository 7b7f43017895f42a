"""The matrix the coordinator clusters, filled in place as the parties' feature chunks arrive.

Feature uploads (rows, e.g. ``drbt``, ``none``) are written straight into one
m x (k_1 + ... + k_p) matrix, each party into its own columns, in the session's party order and in the dtype the
parties sent; the matrix is allocated once every party has announced its
upload (its header), and a party whose chunks came before that moves what it
has into its columns at its next chunk and gives its own buffer back. When
every party holds the same ids in the same order (the join is then the
identity), that matrix is what is clustered, with no copy
(``combine.combine``, ``whole``); otherwise the join copies rows out of it as
before. The coordinator's peak memory for features then stays near one
matrix, whatever the number of parties (``bench/scaling.py``).

When the coordinator keeps the uploads (for ``sent/`` and the observer), each
party's kept arrays are views of its columns there, not a buffer each beside
the matrix; the clustering then works on a copy (``keep``), so that they stay
exactly as sent. At 1,000,000 DRBT records (a 305 MiB matrix, ``ppc run
--no-eval`` keeping ``sent/``) the coordinator's peak fell from 1,473 to
1,175 MiB.

A refused upload leaves nothing behind that matters: its party's columns are
written again, from the start, by its next upload.
"""

from __future__ import annotations

import threading

import numpy as np

#: A feature upload's shape as the matrix holds it: (records, columns of each array, dtype); None for an upload
#: that is not rows of one dtype (coordinator.protocols.upload.UploadPlan.widths).
Widths = tuple[int, tuple[int, ...], str] | None


def place(block: np.ndarray, first: int, values: np.ndarray) -> None:
    """Write ``values``, elements ``first`` onwards of a row-major (rows, k) array, into ``block`` (rows, k)."""
    k = block.shape[1]
    row, col = divmod(first, k)
    i, n = 0, len(values)
    if col and n:
        take = min(k - col, n)
        block[row, col : col + take] = values[:take]
        i, row = take, row + 1
    full = (n - i) // k
    if full:
        block[row : row + full] = values[i : i + full * k].reshape(full, k)
        i, row = i + full * k, row + full
    if i < n:
        block[row, : n - i] = values[i:]


class FeatureMatrix:
    """One session's matrix of features, shared by its parties' uploads (see the module docstring)."""

    def __init__(self, parties: tuple[str, ...]):
        self.parties = parties
        self._lock = threading.Lock()
        self._announced: dict[str, tuple[int, tuple[int, ...], str] | None] = {}
        self._layout: dict[str, tuple[int, tuple[int, ...], str]] = {}  # what the matrix was allocated for
        self._start: dict[str, int] = {}  # each party's first column
        self.matrix: np.ndarray | None = None

    def announce(self, party: str, widths: Widths) -> None:
        """Note the ``widths`` a party's upload header announced; once every party's are in, allocate the matrix
        if they all fit one."""
        with self._lock:
            self._announced[party] = widths
            if self.matrix is not None or len(self._announced) < len(self.parties):
                return
            shapes = [self._announced.get(p) for p in self.parties]
            if any(s is None for s in shapes):
                return
            layouts = [s for s in shapes if s is not None]
            if len({(n, dtype) for n, _, dtype in layouts}) != 1:
                return
            column = 0
            for p, layout in zip(self.parties, layouts):
                self._layout[p], self._start[p] = layout, column
                column += sum(layout[1])
            n, _, dtype = layouts[0]
            self.matrix = np.empty((n, column), dtype=dtype)  # committed by the operating system as it is written

    def block(self, party: str, widths: Widths, array: int) -> np.ndarray | None:
        """The columns of the party's ``array`` in the matrix (a view), or None when there is no matrix (yet) or
        it was not allocated for these ``widths``."""
        with self._lock:
            if self.matrix is None or self._layout.get(party) != widths:
                return None
            columns = self._layout[party][1]
            start = self._start[party] + sum(columns[:array])
            return self.matrix[:, start : start + columns[array]]


    def adopt(self, contributions: list) -> None:
        """Copy into their columns the arrays of finished uploads that are not written there yet (an upload that
        ended before the last party announced its own), party by party, giving each party's buffers back once
        copied; every party's rows must be in the joined order already (the caller checks)."""
        if self.matrix is None:
            return
        for c in contributions:
            layout = self._layout.get(c.party)
            if layout is None or len(c.arrays) != len(layout[1]):
                return
            n, widths, dtype = layout
            moved = False
            for i, (name, values) in enumerate(list(c.arrays.items())):
                start = self._start[c.party] + sum(widths[:i])
                block = self.matrix[:, start : start + widths[i]]
                if values.shape != (n, widths[i]) or np.dtype(values.dtype).str != np.dtype(dtype).str:
                    return
                if not np.shares_memory(values, block):
                    block[...] = values
                    c.arrays[name], moved = block, True
            if moved and c.release is not None:
                c.release()


def whole(blocks: list[np.ndarray]) -> np.ndarray | None:
    """The matrix ``blocks`` tile exactly, side by side in order, when they are column views of one C-contiguous
    matrix (a FeatureMatrix's); else None."""
    matrix = blocks[0].base if blocks else None
    if not isinstance(matrix, np.ndarray) or any(b.base is not matrix for b in blocks) or matrix.ndim != 2 \
            or not matrix.flags.c_contiguous:
        return None
    origin = matrix.__array_interface__["data"][0]
    column = 0
    for b in blocks:
        if (b.shape[0] != matrix.shape[0] or b.strides != matrix.strides or b.dtype != matrix.dtype
                or b.__array_interface__["data"][0] != origin + column * matrix.itemsize):
            return None
        column += b.shape[1]
    return matrix if column == matrix.shape[1] else None
