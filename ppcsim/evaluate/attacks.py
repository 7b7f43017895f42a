"""Attacks on a party's disguised block: each returns the attacker's estimate of the original (002 §6.2, 000 §4.4)."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import squareform

from parties.attacks import check_block as _block
from parties.attacks import check_indices as _indices
from parties.attacks import ica_attack, known_io_002  # noqa: F401 (importable from here, as before)
from parties.attacks import known_pair as _known_pair


def known_rows(m: int, count: int, *, random_state) -> np.ndarray:
    """Draw the ``count`` rows the attacker knows, uniformly without replacement (sorted).

    002 §7 lets the attacker know 5% of the records and averages many draws;
    call this with different seeds to repeat the attack.
    """
    if not 1 <= count <= m:
        raise ValueError(f"count must be between 1 and m = {m}, got {count}")
    rng = np.random.default_rng(random_state)
    return np.sort(rng.choice(m, size=count, replace=False))


def known_io(original, disguised, known, *, fit_intercept: bool = True) -> np.ndarray:
    """Known input-output attack: regress the original on the disguised block (002 §6.2.4).

    The attacker knows the rows ``known`` in both forms. In row convention,
    with ``X`` the original (m x d) and ``Y`` the disguised block (m x k), it
    solves ``X[known] ~ [Y[known], 1] B`` by least squares and returns
    ``[Y, 1] B`` for every row. This is 002's regression estimator
    ``R^ = O' X (X' X)^-1`` turned around: 002 fits the forward map from X
    to the disguised data and inverts it (:func:`known_io_002`, and its
    variant with an intercept :func:`known_io_forward`); this
    fits the inverse map directly, so that it also applies when the disguise
    has no inverse (random projection with k < d): it is then the best
    linear predictor of X from Y, not a recovery. The two agree only without
    noise: when the disguise is linear and invertible (k >= d, no noise) and
    at least k + 1 known rows are in general position, both recover X
    exactly. With noise they differ, and this one is the stronger attack
    (least squares on the noisy side shrinks towards the known rows instead
    of amplifying the noise through R^-1).

    Parameters
    ----------
    original : ndarray of shape (m, d)
        The party's original block; only the rows ``known`` are used to fit.
    disguised : ndarray of shape (m, k)
        What the party sent, rows aligned with ``original``.
    known : array-like of int, or boolean mask of shape (m,)
        The rows the attacker knows (e.g. from :func:`known_rows`).
    fit_intercept : bool, default=True
        Fit a translation too (002's ``t``); False fits a pure linear map.

    Returns
    -------
    ndarray of shape (m, d)
        The attacker's estimate of ``original``.
    """
    X, Y, index = _known_pair(original, disguised, known)
    design = np.hstack([Y, np.ones((Y.shape[0], 1))]) if fit_intercept else Y
    B, *_ = np.linalg.lstsq(design[index], X[index], rcond=None)
    return design @ B


def known_io_forward(original, disguised, known) -> np.ndarray:
    """A variant of 002's known input-output estimator (§6.2.4): fit the forward map with an intercept, invert it.

    In row convention the disguise is ``Y = X R' + t + noise``. From the known
    rows the attacker fits ``Y[known] ~ [X[known], 1] [R'; t]`` by ordinary
    least squares with an intercept and estimates every row as
    ``X^ = (Y - t^) pinv(R'^)``. 002 itself regresses the known points'
    differences against the (d+1)-th one (:func:`known_io_002`); the two fits
    coincide when exactly d + 1 points are known (both interpolate them) and
    differ, slightly, with more. When k < d the forward map has no inverse
    and the pseudo-inverse returns the minimum-norm preimage.

    Parameters
    ----------
    original : ndarray of shape (m, d)
        Only the rows ``known`` are used.
    disguised : ndarray of shape (m, k)
    known : array-like of int, or boolean mask of shape (m,)

    Returns
    -------
    ndarray of shape (m, d)
        The attacker's estimate of ``original``.
    """
    X, Y, index = _known_pair(original, disguised, known)
    design = np.hstack([X[index], np.ones((index.size, 1))])
    B, *_ = np.linalg.lstsq(design, Y[index], rcond=None)
    forward, shift = B[:-1], B[-1]  # d x k and k
    return (Y - shift) @ np.linalg.pinv(forward)


def _square(distances) -> np.ndarray:
    D = np.asarray(distances, dtype=np.float64)
    if D.ndim == 1:
        try:
            D = squareform(D, checks=False)
        except ValueError:
            raise ValueError(
                f"distances as a condensed matrix must have m(m-1)/2 entries, got {D.size}"
            ) from None
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise ValueError(f"distances must be a square (m x m) or condensed matrix, got shape {D.shape}")
    if not np.isfinite(D).all() or (D < 0).any():
        raise ValueError("distances must be finite and non-negative")
    return D


def _steps(J: np.ndarray, g: np.ndarray, normal: bool) -> np.ndarray:
    """Gauss-Newton steps ``-pinv(J) g`` for a stack of Jacobians; ``normal`` solves ``J'J s = -J'g`` instead
    wherever ``J'J`` is far from singular (the same least-squares step, by an LU instead of an SVD, with the
    normal equations' rounding), the pseudo-inverse elsewhere."""
    if not normal:
        return -np.einsum("tnq,tq->tn", np.linalg.pinv(J), g)
    JtJ = np.einsum("tqn,tqm->tnm", J, J)
    rhs = -np.einsum("tqn,tq->tn", J, g)
    n = JtJ.shape[-1]
    scale = np.maximum(np.trace(JtJ, axis1=1, axis2=2) / n, 1e-300)
    good = np.linalg.det(JtJ / scale[:, None, None]) > 1e-10  # far from singular (det of the scaled J'J)
    step = np.empty_like(rhs)
    if good.any():
        step[good] = np.linalg.solve(JtJ[good], rhs[good][:, :, None])[:, :, 0]
    if (~good).any():
        step[~good] = -np.einsum("tnq,tq->tn", np.linalg.pinv(J[~good]), g[~good])
    return step


def _gauss_newton(x, points, d, *, max_iter, tol, normal=False):
    """Minimise ``sum_i (||x - r_i|| - d_i)^2`` for every row of x at once (000 eqs 4.13-4.18).

    Each Gauss-Newton step solves the linearised least squares (eq. 4.17) by
    the pseudo-inverse of the Jacobian, so a rank-deficient Jacobian does not
    fail (``normal``: by the normal equations where they are well
    conditioned, see :func:`_steps`); a step that would raise the objective
    is halved (up to 30 times).
    """

    def residual(z, target):
        diff = z[:, None, :] - points[None, :, :]  # T x q x n
        dist = np.linalg.norm(diff, axis=2)
        return diff, dist, dist - target

    active = np.ones(x.shape[0], dtype=bool)
    for _ in range(max_iter):
        if not active.any():
            break
        z, target = x[active], d[active]
        diff, dist, g = residual(z, target)
        J = diff / np.where(dist > 0, dist, 1.0)[:, :, None]  # eq. 4.16: unit vectors from r_i
        step = _steps(J, g, normal)
        cost = (g**2).sum(axis=1)
        scale = np.ones(z.shape[0])
        for _ in range(30):
            trial = z + scale[:, None] * step
            worse = (residual(trial, target)[2] ** 2).sum(axis=1) > cost
            if not worse.any():
                break
            scale[worse] /= 2.0
        moved = scale[:, None] * step
        x[active] = z + moved
        small = np.linalg.norm(moved, axis=1) <= tol * (1.0 + np.linalg.norm(z, axis=1))
        active[np.flatnonzero(active)[small]] = False
    return x


def multilateration(distances, references, reference_points, *, max_iter: int = 100, tol: float = 1e-10) -> np.ndarray:
    """Locate every object from its distances to known reference objects (000 §4.4.2).

    For each object x that is not a reference, with ``d_i`` its distance to
    reference ``r_i``, minimise ``G(x) = sum_i (||x - r_i|| - d_i)^2``
    (eqs 4.13-4.14) by Gauss-Newton (eqs 4.15-4.18, Algorithm 4.2). The start
    is the linearised least-squares solution obtained by subtracting the first
    sphere equation ``||x - r_1||^2 = d_1^2`` from the others:
    ``2 (r_i - r_1) . x = ||r_i||^2 - ||r_1||^2 - d_i^2 + d_1^2``, which is
    already exact when the distances are exact and the references span the
    space; where the distances are inexact and the references' centroid
    fits them better, the centroid is the start instead. Deterministic: no
    random start.

    Parameters
    ----------
    distances : ndarray of shape (m, m) or (m(m-1)/2,)
        Euclidean distances among all m objects as the attacker sees them
        (for osbr, the square root of the party's ``sqdist``); only the
        columns of the references are used.
    references : array-like of int, or boolean mask of shape (m,)
        The known objects, at least n + 1 of them (000 uses n + 1).
    reference_points : ndarray of shape (len(references), n)
        Their coordinates in the original space, in the order of ``references``.
    max_iter : int, default=100
        Gauss-Newton iterations per object.
    tol : float, default=1e-10
        Stop an object when its step is below ``tol * (1 + ||x||)``.

    Returns
    -------
    ndarray of shape (m, n)
        The estimated coordinates; reference rows are ``reference_points``.
    """
    D = _square(distances)
    index = _indices("references", references, D.shape[0])
    return multilateration_to(D[:, index], index, reference_points, max_iter=max_iter, tol=tol)


def multilateration_to(to_references, references, reference_points, *, max_iter: int = 100,
                       tol: float = 1e-10, normal: bool = False) -> np.ndarray:
    """:func:`multilateration` given only every object's distances to the references (000 §4.4.2).

    The same estimate, from an ``(m, q)`` block instead of the ``m x m``
    matrix: what an attacker needs of a disguised block ``Y`` is
    ``cdist(Y, Y[references])``, which stays small at many records.

    Parameters
    ----------
    to_references : ndarray of shape (m, q)
        Column j holds every object's distance to reference j.
    references : array-like of int, or boolean mask of shape (m,)
        The q known objects, at least n + 1.
    reference_points : ndarray of shape (q, n)
        Their coordinates in the original space, in the order of ``references``.
    max_iter, tol
        As for :func:`multilateration`.
    normal : bool, default=False
        Solve each Gauss-Newton step by the normal equations where they are
        far from singular (faster; the same least-squares steps, rounded
        differently).

    Returns
    -------
    ndarray of shape (m, n)
        The estimated coordinates; reference rows are ``reference_points``.
    """
    D = _block("to_references", to_references)
    if (D < 0).any():
        raise ValueError("distances must be finite and non-negative")
    m = D.shape[0]
    index = _indices("references", references, m)
    if D.shape[1] != index.size:
        raise ValueError(f"to_references must have one column per reference ({index.size}), got {D.shape[1]}")
    points = _block("reference_points", reference_points, rows=index.size)
    n = points.shape[1]
    if index.size < n + 1:
        raise ValueError(f"references must hold at least n + 1 = {n + 1} objects for {n} coordinates, got {index.size}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 0:
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    if not tol >= 0:
        raise ValueError(f"tol must be non-negative, got {tol!r}")
    targets = np.setdiff1d(np.arange(m), index)
    estimate = np.empty((m, n))
    estimate[index] = points
    if targets.size == 0:
        return estimate
    d = D[targets]  # T x q
    squared = (points**2).sum(axis=1)
    A = 2.0 * (points[1:] - points[0])  # (q-1) x n
    b = (squared[1:] - squared[0])[None, :] - d[:, 1:] ** 2 + d[:, :1] ** 2  # T x (q-1)
    start, *_ = np.linalg.lstsq(A, b.T, rcond=None)
    start = start.T
    # with inexact distances (noise, an embedding) the linearised system can be ill-conditioned and throw
    # the start far away: start instead from the references' centroid wherever that fits the distances better
    centroid = np.broadcast_to(points.mean(axis=0), start.shape)

    def misfit(x):
        return ((np.linalg.norm(x[:, None, :] - points[None, :, :], axis=2) - d) ** 2).sum(axis=1)

    start = np.where((misfit(centroid) < misfit(start))[:, None], centroid, start)
    estimate[targets] = _gauss_newton(start.copy(), points, d, max_iter=max_iter, tol=tol, normal=normal)
    return estimate


def multilateration_privacy(original, estimate, references) -> np.ndarray:
    """000 eq. 4.20: ``||x - x^|| / mean_j ||x - r_j||`` for every non-reference object.

    Parameters
    ----------
    original : ndarray of shape (m, n)
        True coordinates of all objects.
    estimate : ndarray of shape (m, n)
        The attacker's estimate (e.g. from :func:`multilateration`).
    references : array-like of int, or boolean mask of shape (m,)
        The known objects ``r_j``.

    Returns
    -------
    ndarray of shape (m - len(references),)
        ``rho*`` of the non-reference objects in increasing row order; its mean
        is 000 eq. 4.21's overall privacy. 0 is full disclosure. An object
        lying on every reference (mean distance 0) gets 0 if located exactly,
        else inf.
    """
    X = _block("original", original)
    X_hat = _block("estimate", estimate, rows=X.shape[0])
    if X_hat.shape != X.shape:
        raise ValueError(f"estimate must have the shape of original {X.shape}, got {X_hat.shape}")
    index = _indices("references", references, X.shape[0])
    targets = np.setdiff1d(np.arange(X.shape[0]), index)
    error = np.linalg.norm(X[targets] - X_hat[targets], axis=1)
    spread = np.linalg.norm(X[targets, None, :] - X[None, index, :], axis=2).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = error / spread
    return np.where(spread > 0, rho, np.where(error > 0, np.inf, 0.0))
