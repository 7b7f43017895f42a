"""The secure-aggregation arbiter's own attack on what it saw: classical scaling of the anchors, multilateration.

In the distances mode the arbiter reads, in round 0, every joined record's
squared distance to each of the k centres, and those centres are k joined
records (``init``): so it also holds the k x k squared distances among them.
Classical scaling (Torgerson; the double-centred Gram matrix, as in 004
§2.2's dissimilarity matrices) places those k anchors, up to a rotation,
in at most k - 1 dimensions; multilateration (000 eqs 4.13-4.18, linearised:
subtracting the first anchor's equation from the others) then places every
record from its k squared distances. With k > d (d the joined columns) the
anchors span the data and every record is placed exactly up to a rigid
motion; with fewer, the arbiter gets the records' projection on the
anchors' span. No knowledge beyond what it saw is needed.

``placement_error`` measures what the arbiter got: the relative error of
its estimate, aligned to the joined normalised data by the best rotation
and translation (orthogonal Procrustes; the arbiter cannot know either, and
neither changes a distance).
"""

from __future__ import annotations

import numpy as np


def classical_scaling(squared: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Points (n x q) whose squared distances are ``squared`` (n x n), q the positive eigenvalues of the
    double-centred Gram matrix ``-J squared J / 2`` above ``tol`` times the largest."""
    n = len(squared)
    J = np.eye(n) - 1.0 / n
    B = -0.5 * J @ squared @ J
    values, vectors = np.linalg.eigh((B + B.T) / 2)
    keep = values > tol * max(float(values.max()), 0.0) if values.size and values.max() > 0 else np.zeros(n, bool)
    return vectors[:, keep] * np.sqrt(values[keep])


def multilaterate(anchors: np.ndarray, squared: np.ndarray) -> np.ndarray:
    """Every record (m x q) from its squared distances ``squared`` (m x k) to the k ``anchors`` (k x q), by the
    linearised least squares of 000 eqs 4.13-4.18: 2 (a_j - a_0) . x = |a_j|^2 - |a_0|^2 - s_j + s_0."""
    if anchors.shape[1] == 0:
        return np.zeros((len(squared), 0))
    A = 2.0 * (anchors[1:] - anchors[0])
    norms = np.einsum("ij,ij->i", anchors, anchors)
    b = (norms[1:] - norms[0])[None, :] - squared[:, 1:] + squared[:, :1]
    solution, *_ = np.linalg.lstsq(A, b.T, rcond=None)
    return solution.T


def place_from_round0(first: np.ndarray, init: np.ndarray) -> np.ndarray:
    """The arbiter's estimate of every joined record (m x q) from round 0's summed squared distances ``first``
    (m x k, in value units) to the k joined records ``init`` it drew as centres."""
    init = np.asarray(init, dtype=np.intp)
    among = first[init]  # the anchors' squared distances to each other, as the arbiter read them
    among = np.clip((among + among.T) / 2, 0, None)
    np.fill_diagonal(among, 0.0)
    return multilaterate(classical_scaling(among), first)


def place_from_labels(rounds: list[np.ndarray]) -> np.ndarray:
    """What an arbiter that learns labels only can make of them: classical scaling of the co-membership
    dissimilarity (the fraction of the given rounds' labels in which two records were apart), one point per
    record. It places clusters, not records; ``placement_error(..., scaled=True)`` scores it."""
    apart = np.mean([(labels[:, None] != labels[None, :]).astype(float) for labels in rounds], axis=0)
    return classical_scaling(apart)


def placement_error(estimate: np.ndarray, truth: np.ndarray, scaled: bool = False) -> float:
    """Relative error ``||R E + t - X||_F / ||X - mean(X)||_F`` of ``estimate`` E against ``truth`` X under the
    best rotation (or reflection) R and translation t (orthogonal Procrustes; with ``scaled``, times the best
    scale too, for an estimate in units of its own): 0 when the records are placed exactly up to a rigid
    motion, 1 when nothing is (E a point)."""
    X = truth - truth.mean(axis=0)
    E = estimate - estimate.mean(axis=0)
    width = max(X.shape[1], E.shape[1])
    X = np.pad(X, ((0, 0), (0, width - X.shape[1])))
    E = np.pad(E, ((0, 0), (0, width - E.shape[1])))
    U, S, Vt = np.linalg.svd(E.T @ X)
    aligned = E @ (U @ Vt)
    if scaled and np.any(E):
        aligned *= S.sum() / float((E**2).sum())
    total = float(np.linalg.norm(X))
    return float(np.linalg.norm(aligned - X) / total) if total > 0 else 0.0
