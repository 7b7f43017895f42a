"""``geometric``: geometric data perturbation, rotation + translation + noise (002 eq. 1), optimised by 002 Alg. 6.1."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from parties.methods.base import Disguise, Param, Sent, rows
from parties.methods.rotation import haar_orthogonal

#: Share of the sample a distance-inference attacker knows (002 §7.5: 5% of the records), at least d + 1 records.
KNOWN_FRACTION = 0.05
#: Simulated distance-inference attacks per noise level (002 §7.5 runs 500 on a whole data set).
ATTACK_DRAWS = 20
#: The step by which Algorithm 6.1's last line raises the noise, and the most noise it tries.
SIGMA_STEP, SIGMA_MAX = 0.01, 1.0


def naive_privacy(X: np.ndarray, R: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Weighted naive-inference privacy of every column i when row j of R produces it (002 eqs. 7, 8 and 10).

    The naive attacker takes the perturbed column as the original (002
    §6.1.2, ``O = P``). With ``C`` the covariance of X (population), column i
    of ``X R'^T`` made by row ``r_j`` of R differs from column i of X by
    ``X (r_j - e_i)``, whose variance is eq. 8's
    ``K = r_j C r_j - 2 r_j . C_i + c_ii``. Its square root on the column's
    [0, 1] scale (divided by the column's range, as
    :func:`parties.attacks.column_privacy` measures) over the weight ``w_i``
    is the entry ``[i, j]``: a translation adds a constant and leaves it as
    it is.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The (sample of the) party's normalised block.
    R : ndarray of shape (d, d)
        A rotation.
    weights : ndarray of shape (d,), optional
        002 §6.1's column weights (see :func:`parties.attacks.normalised_weights`).

    Returns
    -------
    ndarray of shape (d, d)
        ``M[i, j]``; the privacy of ``R`` itself is the diagonal.
    """
    d = X.shape[1]
    C = np.atleast_2d(np.cov(X, rowvar=False, bias=True))
    from parties.attacks import normalised_weights  # imported when used: a party process loads every method's module
    quad = np.einsum("jk,kl,jl->j", R, C, R)  # r_j C r_j
    K = quad[None, :] - 2.0 * (R @ C).T + np.diag(C)[:, None]
    span = np.ptp(X, axis=0)
    span = np.where(span > 0, span, 1.0)
    return np.sqrt(np.maximum(K, 0.0)) / (span * normalised_weights(weights, d))[:, None]


def bottleneck_assignment(M: np.ndarray) -> np.ndarray:
    """The permutation that maximises the minimum of ``M[i, perm[i]]`` (002 eq. 10), ties broken by the largest sum.

    A bottleneck assignment: the largest threshold ``t`` (an entry of M,
    found by bisection) for which a perfect matching uses only entries at
    least ``t``, then, among those matchings, the one of largest sum
    (Hungarian algorithm, ``scipy.optimize.linear_sum_assignment``).
    Deterministic.

    Returns
    -------
    ndarray of int, shape (d,)
        ``perm[i]``: the row of R that produces column i (so the swapped
        rotation is ``R[perm]``).
    """
    from scipy.optimize import linear_sum_assignment  # imported when used, as above
    values = np.unique(M)

    def feasible(t: float) -> bool:
        bad = (M < t).astype(np.float64)
        r, c = linear_sum_assignment(bad)
        return not bad[r, c].any()

    lo, hi = 0, values.size - 1  # values[lo] is always feasible
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if feasible(values[mid]):
            lo = mid
        else:
            hi = mid - 1
    t = values[lo]
    cost = np.where(M >= t, -M, np.inf)
    finite = np.isfinite(cost)
    cost = np.where(finite, cost, (np.abs(cost[finite]).sum() + 1.0) * M.shape[0])
    _, perm = linear_sum_assignment(cost)
    return perm


class Geometric(Disguise):
    """Perturb the party's normalised block: ``Y = X @ R.T + psi + Delta`` (002 eq. 1).

    002 writes ``G(X) = R X + Psi + Delta`` with records as columns. R is a
    Haar-random orthogonal matrix (the same draw as ``rotation`` with the
    same seed), ``psi`` one translation vector added to every record, entries
    uniform on [0, 1) (the range of min-max normalised data), and ``Delta``
    i.i.d. N(0, sigma^2) noise, one draw per entry. R and psi keep distances
    exactly (002 Thm 6); the noise adds ``2 d sigma^2`` to every squared
    distance in expectation and is what resists the distance-inference
    attacks that break a plain rotation (002 §4, §6).

    With ``optimize = 0`` (the default) R, psi and the noise are one draw.
    With ``optimize = m > 0`` the party runs 002 Algorithm 6.1 on a sample of
    its records before it sends anything, line by line:

    1. a random translation psi;
    2. m times: a random rotation R, its rows swapped to ``R'`` maximising the
       minimum weighted naive-inference privacy (eq. 10, a bottleneck
       assignment, :func:`bottleneck_assignment`), ``p0`` that privacy; if
       ``p0`` beats the best so far, the ICA attack with known column
       statistics (§6.2.2) on ``X R'^T + psi`` gives ``p1`` (else ``p1 = 0``);
       ``R'`` becomes the best ``R_t`` when ``min(p0, p1)`` beats the best
       ``p``;
    3. the noise raised from ``sigma`` in steps of 0.01 (at most to 1.0)
       until ``p2``, the privacy against the distance-inference attack
       (002's known input-output estimator, §6.2.4, 5% known records, the
       mean over 20 draws of the minimum weighted column privacy, as §7.5
       measures it), reaches ``phi``: "the noise component is appended to
       the perturbation, so that the distance-inference attack cannot reduce
       the privacy guarantee to a safety level phi" (§6.2.6). The
       algorithm's last line as printed ("p2 >= p if p < phi or p2 > phi if
       p < phi") repeats its condition; the prose is followed.

    The privacy guarantee is ``min(p, p2)``; below ``release`` the party
    refuses to send (002 §6.2.6: "the data owner can choose not to release
    the data"). What it measured is in :meth:`fitted` (the report's
    ``parties[].own_check.trace``).

    Parameters
    ----------
    sigma : float, default=0.1
        Standard deviation of the noise (002 uses 0.1); 0 leaves rotation
        plus translation. With ``optimize``, the least noise tried.
    optimize : int, default=0
        Iterations of 002 Algorithm 6.1 (002 §7.4 runs 50); 0: one draw.
    weights : table of column to number, optional
        002 §6.1's privacy weights w_i: a column with twice the weight needs
        twice the privacy to count as much; unnamed columns weigh 1. Scaled
        to a mean of 1, so that equal weights are 002's unweighted figures.
    phi : float, default=0.2
        The safety level of Algorithm 6.1's noise step (002: "e.g., phi = 0.2").
    sample : int, default=1000
        Records the optimisation runs on, drawn without replacement (002
        §6.2.6: "this optimization process is applied to a sample set");
        all when fewer.
    release : float, default=0
        The least privacy guarantee the party sends with (needs ``optimize``).

    Attributes
    ----------
    R_ : ndarray of shape (d, d)
        The private orthogonal matrix.
    psi_ : ndarray of shape (d,)
        The private translation.
    sigma_ : float
        The noise level used.
    trace_ : dict
        With ``optimize``: what Algorithm 6.1 measured (see :meth:`fitted`).

    References
    ----------
    Chen & Liu, *Geometric Data Perturbation* (seed 002), §4, eq. 1; §6.1,
    §6.2.1 eq. 10, §6.2.2, §6.2.4, §6.2.6 Algorithm 6.1.
    """

    name = "geometric"
    summary = "rotation, translation and noise"
    source = "002 eq. 1, Algorithm 6.1"
    randomised = True
    # set from ``params`` by Disguise.__init__
    sigma: float
    optimize: int
    weights: dict[str, float] | None
    phi: float
    sample: int
    release: float

    params = {
        "sigma": Param(float, default=0.1, minimum=0, doc="noise standard deviation"),
        "optimize": Param(int, default=0, minimum=0, doc="iterations of 002 Algorithm 6.1 (0: one draw)"),
        "weights": Param(dict, default=None, rule="a table of column names to positive numbers",
                         doc="002 §6.1 privacy weight per column"),
        "phi": Param(float, default=0.2, above=0, doc="002 Algorithm 6.1's safety level"),
        "sample": Param(int, default=1000, minimum=2, doc="records Algorithm 6.1 optimises on"),
        "release": Param(float, default=0.0, minimum=0, doc="least privacy guarantee the party sends with"),
    }

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> list[str]:
        errors = super().check_params(params)
        weights = params.get("weights")
        if isinstance(weights, dict):
            bad = {k: v for k, v in weights.items()
                   if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0}
            if bad:
                errors.append(f"'weights' must be a table of column names to positive numbers, got {bad!r} "
                              f"(method '{cls.name}')")
        elif weights is not None:
            errors.append(f"'weights' must be a table of column names to positive numbers, got {weights!r} "
                          f"(method '{cls.name}')")
        if params.get("release", 0) and not params.get("optimize", 0):
            errors.append(f"'release' needs 'optimize' of at least 1: the privacy is measured while optimising "
                          f"(method '{cls.name}')")
        return errors

    @classmethod
    def check_columns(cls, params: dict[str, Any], columns: list[str]) -> list[str]:
        weights = params.get("weights") or {}
        unknown = [k for k in weights if k not in columns]
        if unknown:
            return [f"'weights' names {', '.join(map(repr, unknown))}, not among the party's columns "
                    f"({', '.join(columns)})"]
        return []

    def column_weights(self, columns: list[str]) -> np.ndarray:
        """The weight of each of ``columns`` (1 where ``weights`` does not name it), as given."""
        weights = self.weights or {}
        problems = self.check_columns({"weights": weights}, list(columns))
        if problems:
            raise ValueError(problems[0])
        return np.array([float(weights.get(c, 1.0)) for c in columns])

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        m, d = X.shape
        rng = np.random.default_rng(self.random_state)
        if not self.optimize:  # one draw of 002 eq. 1: R, then psi, then the noise
            self.R_ = haar_orthogonal(d, rng)
            self.psi_ = rng.random(d)
            self.sigma_ = float(self.sigma)
            noise = rng.normal(0.0, self.sigma_, size=(m, d))
            return [rows("data", X @ self.R_.T + self.psi_ + noise)]
        from parties.attacks import normalised_weights
        weights = normalised_weights(self.column_weights(columns), d)
        S = X[np.sort(rng.choice(m, size=min(int(self.sample), m), replace=False))]
        self.psi_ = rng.random(d)
        self.R_, best, iterations = self._rotation(S, weights, rng)
        self.sigma_, p2 = self._noise(S, weights, rng)
        guarantee = min(best, p2)
        self.trace_ = {
            "iterations": iterations,
            "best_privacy": [it["best"] for it in iterations],
            "rotation_privacy": best,
            "sigma": self.sigma_,
            "distance_privacy": p2,
            "target": float(self.phi),
            "privacy": guarantee,
            "release": float(self.release),
            "sample": len(S),
        }
        if guarantee < float(self.release):
            raise ValueError(
                f"the privacy guarantee it reached, {guarantee:.4f} (002 Algorithm 6.1: the least of naive "
                f"inference and ICA, {best:.4f}, and distance inference at sigma = {self.sigma_:.2f}, {p2:.4f}, "
                f"after {int(self.optimize)} iterations), is below its release threshold {float(self.release):g}: "
                "it refuses to send")
        noise = rng.normal(0.0, self.sigma_, size=(m, d))
        return [rows("data", X @ self.R_.T + self.psi_ + noise)]

    def _rotation(self, S: np.ndarray, weights: np.ndarray,
                  rng: np.random.Generator) -> tuple[np.ndarray, float, list[dict]]:
        """Algorithm 6.1's loop: the best swapped rotation R_t, its privacy p and, per iteration, what was measured."""
        from parties.attacks import column_privacy, ica_attack
        d = S.shape[1]
        p = 0.0
        best_R: np.ndarray | None = None
        first: np.ndarray | None = None
        iterations: list[dict] = []
        for _ in range(int(self.optimize)):
            R = haar_orthogonal(d, rng)
            M = naive_privacy(S, R, weights)
            perm = bottleneck_assignment(M)
            swapped = R[perm]
            p0 = float(M[np.arange(d), perm].min())
            p1, tested = 0.0, p0 > p
            if tested:
                estimate = ica_attack(S, S @ swapped.T + self.psi_, random_state=int(rng.integers(2**31 - 1)))
                p1 = float((column_privacy(S, estimate) / weights).min())
            if p < min(p0, p1):
                p, best_R = min(p0, p1), swapped
            first = swapped if first is None else first
            iterations.append({"naive_drawn": float(np.diagonal(M).min()), "naive": p0,
                               "ica": p1 if tested else None, "best": p})
        chosen = best_R if best_R is not None else first
        assert chosen is not None  # optimize >= 1: at least one rotation was drawn
        return chosen, p, iterations

    def _noise(self, S: np.ndarray, weights: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
        """Algorithm 6.1's last line: the least noise (from ``sigma``, step 0.01, at most 1) at which the
        distance-inference privacy p2 reaches ``phi``; that noise and p2."""
        from parties.attacks import column_privacy, known_io_002
        n, d = S.shape
        known_count = min(max(math.ceil(KNOWN_FRACTION * n), d + 1), n)
        draws = []
        for _ in range(ATTACK_DRAWS):
            known = rng.choice(n, size=known_count, replace=False)
            unknown = np.setdiff1d(np.arange(n), known)
            draws.append((known, unknown if unknown.size else np.arange(n)))
        Z = rng.standard_normal((n, d))  # the same noise shape at every level: p2 rises smoothly with sigma
        clean = S @ self.R_.T + self.psi_
        target = float(self.phi)

        def p2(sigma: float) -> float:
            Y = clean + sigma * Z
            return float(np.mean([(column_privacy(S[u], known_io_002(S, Y, k)[u]) / weights).min() for k, u in draws]))

        steps = max(0, math.ceil(round((SIGMA_MAX - float(self.sigma)) / SIGMA_STEP, 9)))
        sigma = float(self.sigma)
        reached = p2(sigma)
        for i in range(1, steps + 1):
            if reached >= target:
                break
            sigma = round(float(self.sigma) + i * SIGMA_STEP, 10)
            reached = p2(sigma)
        return sigma, reached

    def fitted(self) -> dict[str, Any]:
        """With ``optimize``: Algorithm 6.1's trace. ``iterations`` (per iteration: ``naive_drawn``, the rotation's
        minimum naive privacy as drawn; ``naive``, after row swapping, p0; ``ica``, p1 or null when not tested;
        ``best``, p so far), ``best_privacy`` (p per iteration), ``rotation_privacy`` (p), ``sigma``,
        ``distance_privacy`` (p2), ``target`` (phi), ``privacy`` (the guarantee min(p, p2)),
        ``release`` and ``sample``."""
        return dict(getattr(self, "trace_", {}))
