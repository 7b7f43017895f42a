"""The attacks a data owner runs on its own disguise before it sends, which the observer runs after a run.

002 Algorithm 6.1 has the owner test each candidate perturbation against the
attacks of 002 §6.2 before it releases anything; the observer
(``ppcsim.evaluate``) scores what was sent with the same code. Here: the
input checks, 002's unified column privacy (§6.1.1), the ICA attack with known
column statistics (§6.2.2) and 002's known input-output estimator (§6.2.4).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.decomposition import FastICA
from sklearn.exceptions import ConvergenceWarning


def check_block(name: str, values, *, rows: int | None = None) -> np.ndarray:
    """``values`` as a finite 2-D float array (with ``rows`` rows when given); ValueError naming ``name`` otherwise."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (objects x columns), got shape {array.shape}")
    if rows is not None and array.shape[0] != rows:
        raise ValueError(f"{name} must have {rows} rows, one per object, got {array.shape[0]}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must hold only finite values")
    return array


def check_indices(name: str, values, m: int) -> np.ndarray:
    """Row indices given as integers or as a boolean mask of length m; unique, in range."""
    index = np.asarray(values)
    if index.dtype == bool:
        if index.shape != (m,):
            raise ValueError(f"{name} as a boolean mask must have length {m}, got shape {index.shape}")
        index = np.flatnonzero(index)
    if index.ndim != 1 or index.size == 0 or not np.issubdtype(index.dtype, np.integer):
        raise ValueError(f"{name} must be a non-empty 1-D array of row indices")
    if index.min() < -m or index.max() >= m:
        raise ValueError(f"{name} holds indices outside 0..{m - 1}")
    index = index % m
    if np.unique(index).size != index.size:
        raise ValueError(f"{name} must not repeat a row")
    return index


def known_pair(original, disguised, known) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A known-record attack's inputs checked: the original block, the disguised rows aligned with it, the known rows."""
    X = check_block("original", original)
    return X, check_block("disguised", disguised, rows=X.shape[0]), check_indices("known", known, X.shape[0])


def check_pair(original, estimate) -> tuple[np.ndarray, np.ndarray]:
    """An original block and an estimate of it, checked: 2-D, the same shape, at least one row, finite."""
    original = np.asarray(original, dtype=np.float64)
    estimate = np.asarray(estimate, dtype=np.float64)
    if original.ndim != 2:
        raise ValueError(f"original must be a 2-D array (objects x columns), got shape {original.shape}")
    if estimate.shape != original.shape:
        raise ValueError(f"estimate must have the shape of original {original.shape}, got {estimate.shape}")
    if original.shape[0] == 0:
        raise ValueError("original must have at least one row")
    if not np.isfinite(original).all():
        raise ValueError("original must hold only finite values")
    if not np.isfinite(estimate).all():
        raise ValueError("estimate must hold only finite values")
    return original, estimate


def column_privacy(original, estimate) -> np.ndarray:
    """002's unified column privacy: per column, the std of the estimation error on [0, 1] data.

    Both blocks are scaled with the **original** column's statistics,
    ``(v - min_j) / (max_j - min_j)``, the min-max normalisation 002 applies
    before it measures privacy (§6.2.2: "the original column is already scaled
    to [0, 1] in calculating unified privacy metric"); §6.1.1 motivates the
    metric with standardisation instead, which would divide by the column's
    standard deviation. The privacy of column j is then the (population,
    ddof=0) standard deviation of ``original_j - estimate_j`` on that scale.

    Because it is a standard deviation, not an RMSE, an estimate that is
    wrong by the same constant for every object has privacy 0: the metric
    treats a shifted copy of the column as disclosed (ranks, gaps and shape
    are all revealed; 002 §6.2.3 removes such a shift with the column's known
    minimum). Report an RMSE alongside if a bias should count as protection.
    A constant original column is scaled by 1
    instead of by its zero range, so it gives a finite value, never NaN.

    Parameters
    ----------
    original : ndarray of shape (m, d)
        The party's original block.
    estimate : ndarray of shape (m, d)
        The attacker's estimate of it, in the original units.

    Returns
    -------
    ndarray of shape (d,)
        Column privacy ``p_j``; 0 is full disclosure, about 0.29 is what an
        attacker knowing only the mean of a uniform column achieves.
    """
    original, estimate = check_pair(original, estimate)
    span = np.ptp(original, axis=0)
    span = np.where(span > 0, span, 1.0)
    error = (original - estimate) / span
    # shifting by the first row leaves the std unchanged and keeps a constant error at ~0
    # instead of the ~1e-13 that summing m large equal values to a mean leaves behind
    return np.std(error - error[0], axis=0)


def known_io_002(original, disguised, known) -> np.ndarray:
    """002's own known input-output estimator (§6.2.4, steps 1-3): differences against the (d+1)-th known point.

    In row convention, with ``x_i``, ``o_i`` the known rows in the order
    ``known`` gives them and ``x_r``, ``o_r`` the (d+1)-th of them (the last
    when fewer are known), step 1 cancels the translation,
    ``o_i - o_r = (x_i - x_r) R' + e_i - e_r``, and fits ``R'^`` by least
    squares over every other known row (002's ``R^ = O' X (X' X)^-1`` on the
    differences); step 2 estimates ``t^`` as the mean of ``o_i - x_i R'^`` over
    the known rows; step 3 returns ``X^ = (Y - t^) R'^-1`` (the pseudo-inverse,
    which is the minimum-norm preimage when k < d). With d + 1 known rows this
    is 002's procedure exactly, and equals ``ppcsim.evaluate.attacks.known_io_forward``; with more,
    it weights the reference row more than an ordinary least-squares fit
    would.

    Parameters
    ----------
    original : ndarray of shape (m, d)
        Only the rows ``known`` are used.
    disguised : ndarray of shape (m, k)
    known : array-like of int, or boolean mask of shape (m,)
        At least two rows; their order picks the reference row.

    Returns
    -------
    ndarray of shape (m, d)
        The attacker's estimate of ``original``.
    """
    X, Y, index = known_pair(original, disguised, known)
    if index.size < 2:
        raise ValueError("known must hold at least two rows: one to take differences against, one to fit")
    r = min(X.shape[1], index.size - 1)  # the (d+1)-th known row, 0-based
    others = np.delete(index, r)
    forward, *_ = np.linalg.lstsq(X[others] - X[index[r]], Y[others] - Y[index[r]], rcond=None)  # d x k
    shift = (Y[index] - X[index] @ forward).mean(axis=0)
    return (Y - shift) @ np.linalg.pinv(forward)


def histogram(column: np.ndarray, bins: int) -> np.ndarray:
    """Share of the column per bin after scaling it to [0, 1] by its own min and max."""
    span = np.ptp(column)
    scaled = (column - column.min()) / span if span > 0 else np.zeros_like(column)
    counts, _ = np.histogram(scaled, bins=bins, range=(0.0, 1.0))
    return counts / column.size


def ica_attack(original_stats, disguised, *, random_state, bins: int = 20, max_iter: int = 1000) -> np.ndarray:
    """ICA attack with known column statistics (002 §6.2.2, "PDF alignment").

    1. FastICA (``whiten="unit-variance"``, seeded) recovers k components
       from the disguised block.
    2. Each recovered component, with either sign, and each original column
       is scaled to [0, 1] by its own min and max and binned into ``bins``
       equal bins; the distance is the L1 distance of the two normalised
       histograms (002 eq. 11, discretised).
    3. Each original column gets the component and sign with the closest
       histogram, rescaled to the column's [min, max].

    k is the rank of the disguised block (a sparse projection may send a
    zero or a repeated column). When k >= d the match is one-to-one and minimises the summed distance
    (002 eq. 12's optimal match, Hungarian algorithm). When k < d there are
    fewer components than columns: each column takes its closest component,
    so a component may serve several columns.

    Parameters
    ----------
    original_stats : ndarray of shape (m, d)
        The original block. Only what 002 grants the attacker is taken from
        it: each column's minimum, maximum and histogram (its PDF); never the
        values of individual objects.
    disguised : ndarray of shape (m, k)
        What the party sent.
    random_state : int, numpy.random.Generator or None
        Seed of FastICA's initial unmixing matrix. A Generator is turned into
        an integer seed by drawing from it.
    bins : int, default=20
        Histogram bins for the PDF alignment.
    max_iter : int, default=1000
        FastICA iterations.

    Returns
    -------
    ndarray of shape (m, d)
        The attacker's estimate of the original block.
    """
    X = check_block("original_stats", original_stats)
    Y = check_block("disguised", disguised, rows=X.shape[0])
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 2:
        raise ValueError(f"bins must be an integer >= 2, got {bins!r}")
    if isinstance(random_state, np.random.Generator):
        random_state = int(random_state.integers(2**31 - 1))
    # a sparse projection can send zero or repeated columns: only the rank of Y carries components
    centred = Y - Y.mean(axis=0)
    k = int(np.linalg.matrix_rank(centred)) if Y.shape[0] > 1 else 0
    if k == 0:  # nothing varies: the attacker's best guess is each column's mean (known from its histogram)
        return np.broadcast_to(X.mean(axis=0), X.shape).copy()
    if k < Y.shape[1]:  # keep the k directions that carry anything, so whitening divides by no zero
        Y = centred @ np.linalg.svd(centred, full_matrices=False)[2][:k].T
    ica = FastICA(n_components=k, whiten="unit-variance", random_state=random_state, max_iter=max_iter)
    with warnings.catch_warnings():  # non-convergence is part of the attack's (lack of) success
        warnings.simplefilter("ignore", ConvergenceWarning)
        S = ica.fit_transform(Y)
    candidates = np.hstack([S, -S])  # column c and c + k: the same component with both signs
    target = np.array([histogram(x, bins) for x in X.T])  # d x bins
    found = np.array([histogram(s, bins) for s in candidates.T])  # 2k x bins
    distance = np.abs(target[:, None, :] - found[None, :, :]).sum(axis=2)  # d x 2k
    # the better sign of each component, then the match of columns to components
    sign_pick = np.where(distance[:, :k] <= distance[:, k:], np.arange(k), np.arange(k) + k)
    cost = np.take_along_axis(distance, sign_pick, axis=1)  # d x k
    if k >= X.shape[1]:
        columns, components = linear_sum_assignment(cost)
    else:
        columns, components = np.arange(X.shape[1]), cost.argmin(axis=1)
    chosen = candidates[:, sign_pick[columns, components]]
    low, span = chosen.min(axis=0), np.ptp(chosen, axis=0)
    unit = np.where(span > 0, (chosen - low) / np.where(span > 0, span, 1.0), 0.0)
    estimate = np.empty_like(X)
    estimate[:, columns] = X.min(axis=0)[columns] + unit * np.ptp(X, axis=0)[columns]
    return estimate


def weighted_privacy(p, weights=None) -> dict[str, float]:
    """002 §6.1's privacy guarantees with column weights: Phi1 = min_i p_i / w_i, Phi2 = mean_i p_i / w_i.

    002 normalises the weights to sum to 1; here they are normalised to a mean
    of 1 (sum d), so that equal weights give the unweighted figures of 002's
    experiments ("each column is considered equally important", §7.4) and a
    safety level such as 002's phi = 0.2 keeps its scale. A column twice as
    sensitive as the others (w_i twice theirs) must then be twice as well
    protected to count as much.

    Parameters
    ----------
    p : array-like of shape (d,)
        Column privacy values (:func:`column_privacy`).
    weights : array-like of shape (d,), optional
        The columns' privacy weights w_i, positive; None: all equal.

    Returns
    -------
    dict
        ``{"min": Phi1, "mean": Phi2}``.
    """
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"p must be a non-empty 1-D array of column privacy values, got shape {p.shape}")
    w = normalised_weights(weights, p.size)
    return {"min": float((p / w).min()), "mean": float((p / w).mean())}


def normalised_weights(weights, d: int) -> np.ndarray:
    """The weights w_i of 002 §6.1 scaled to a mean of 1 (all 1 when None); ValueError unless d positive numbers."""
    if weights is None:
        return np.ones(d)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (d,) or not np.isfinite(w).all() or (w <= 0).any():
        raise ValueError(f"weights must be {d} positive finite numbers, one per column, got {weights!r}")
    return w / w.mean()
