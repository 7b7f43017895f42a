"""Average and complete linkage worked out in the condensed matrix itself, for a coordinator short of memory.

scipy's ``linkage`` runs the nearest-neighbour chain on its own copy of the
m(m-1)/2 distances (twice the matrix at its peak); this runs the same
algorithm, with the same ties broken the same way, in the caller's array,
which it overwrites. Only single linkage needs neither: scipy reads it in place.
"""

from __future__ import annotations

import numpy as np

from coordinator.condensed import condensed_index

#: Lance-Williams updates: the distance from cluster i to x merged into y, from d(i, x), d(i, y) and the sizes.
UPDATES = {
    "average": lambda dx, dy, nx, ny: (nx * dx + ny * dy) / (nx + ny),
    "complete": lambda dx, dy, nx, ny: np.maximum(dx, dy),
}


def merges_in_place(d: np.ndarray, n: int, method: str) -> np.ndarray:
    """The nearest-neighbour chain's merges as (x, y, distance) rows, sorted by distance (stable), like scipy.

    ``x`` and ``y`` are the lowest-numbered records of the two clusters merged
    (scipy's slots, before it relabels them). ``d`` (condensed, float64) is
    overwritten.
    """
    update = UPDATES[method]
    size = np.ones(n, dtype=np.int64)
    alive = np.arange(n)  # slots still holding a cluster, in increasing order
    out = np.empty((n - 1, 3))
    chain: list[int] = []

    def row(x: int) -> tuple[np.ndarray, np.ndarray]:
        """Positions in ``d`` of x's distances to the live clusters, and the distances (inf to itself)."""
        at = int(np.searchsorted(alive, x))
        lower, higher = alive[:at], alive[at + 1 :]
        where = np.empty(len(alive), dtype=np.int64)
        where[:at] = condensed_index(n, lower, x)  # a column of the triangle: one value per row above x
        where[at] = 0
        where[at + 1 :] = higher + (condensed_index(n, x, x + 1) - x - 1)  # x's own row, read in order
        values = d[where]
        values[at] = np.inf
        return where, values

    for k in range(n - 1):
        if not chain:
            chain.append(int(alive[0]))
        while True:
            x = chain[-1]
            where, values = row(x)
            nearest = int(np.argmin(values))
            y = int(alive[nearest])
            if len(chain) > 1:
                previous = chain[-2]
                at = int(np.searchsorted(alive, previous))
                if values[at] <= values[nearest]:  # the previous element wins ties
                    y = previous
                if y == previous:
                    break
            chain.append(y)
        chain.pop()
        chain.pop()
        distance = values[at]  # the loop ends only on y == previous, at position ``at``
        other = row(y)  # x's row is (where, values) already
        (_, dx), (where_y, dy) = ((where, values), other) if x < y else (other, (where, values))
        x, y = min(x, y), max(x, y)
        nx, ny = size[x], size[y]
        others = (alive != x) & (alive != y)
        d[where_y[others]] = update(dx[others], dy[others], nx, ny)
        out[k] = (x, y, distance)
        size[y] += nx
        alive = alive[alive != x]
    return out[np.argsort(out[:, 2], kind="mergesort")]
