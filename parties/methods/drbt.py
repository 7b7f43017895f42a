"""``drbt``: dimensionality reduction by random projection (004 §2.3, §5; 000 §2.6.1)."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from parties.distances import pdist
from parties.methods.base import Param, Reduction, Sent, rows
from parties.methods.rotation import haar_orthogonal

#: The random matrices ``projection`` names, and the scale each block gets.
PROJECTIONS = ("gaussian", "sparse", "sparse-unit", "orthonormal")


def achlioptas_signs(rng: np.random.Generator, d: int, k: int) -> np.ndarray:
    """{+1, 0, -1} with probabilities 1/6, 2/3, 1/6, shape (d, k): eq. 9 without its sqrt(3)."""
    return rng.choice(np.array([1.0, 0.0, -1.0]), size=(d, k), p=[1 / 6, 2 / 3, 1 / 6])


def unit_columns(R: np.ndarray) -> np.ndarray:
    """R with every column divided by its Euclidean length (an all-zero column stays zero)."""
    norm = np.linalg.norm(R, axis=0)
    return R / np.where(norm > 0, norm, 1.0)


def local_stress(original: np.ndarray, projected: np.ndarray) -> float:
    """004 eq. 6 between a block's original and projected distances (condensed): ``sqrt(sum (dhat - d)^2 / sum d^2)``,
    0 when every original distance is 0. The root, as 004's text reads it ("the relative error").

    Summed by numpy's pairwise sum, not BLAS: a multithreaded dot product splits the sum by thread count, and
    an observer replaying the party (with other threads) must find the very same figure."""
    denominator = float(np.sum(original * original))
    if denominator == 0.0:
        return 0.0
    diff = projected - original
    return float(np.sqrt(np.sum(diff * diff) / denominator))


def seed_words(random_state: int | Sequence[int] | None) -> list[int] | None:
    """``random_state`` as a list of integers (None stays None): the prefix of every derived seed."""
    if random_state is None:
        return None
    return [int(random_state)] if isinstance(random_state, (int, np.integer)) else [int(x) for x in random_state]


def haar_frame(rng: np.random.Generator, d: int, k: int) -> np.ndarray:
    """k orthonormal columns in R^d, Haar-distributed: the first k columns of a Haar orthogonal matrix."""
    return haar_orthogonal(d, rng)[:, :k]


class DRBT(Reduction):
    """Project the party's d columns to k with a private random matrix (004 eq. 7).

    ``projection`` picks R:

    - ``"gaussian"`` (default) is 004's RP1: entries i.i.d. N(0, 1), each column
      of R normalised to unit length; the block is scaled by sqrt(d/k) (eq. 8).
    - ``"sparse"`` is RP2 as Achlioptas defines it (eq. 9): entries
      sqrt(3) * {+1, 0, -1} with probabilities 1/6, 2/3, 1/6 (unit variance),
      the block scaled by 1/sqrt(k). Squared distances are then unbiased with
      no other step.
    - ``"sparse-unit"`` is RP2 as 004 built it: eq. 9's entries with every
      column normalised to unit length, like RP1. 004's Table 3 RP2 block is
      exactly Table 1 times such a matrix (``tests/parties/test_disguise_methods.py`` checks
      it). An all-zero column cannot be normalised, so it is drawn again. The
      block is scaled by sqrt(d/k), eq. 8, as for RP1 (Table 3 prints D·R
      before that scale; a scale does not change the disguise, only the
      weight of the block when the coordinator concatenates it).
    - ``"orthonormal"`` is the random projection of Alotaibi's thesis (000
      eq. 2.18: "each column is orthogonal"): the first k columns of a
      Haar-random orthogonal matrix, scaled by sqrt(d/k). With k = d it is a
      rotation and keeps every distance.

    ``"sparse"`` stays the meaning of RP2 here (and ``"gaussian"`` the
    default) so that scenarios written before ``"sparse-unit"`` existed give
    the same numbers; both RP2 variants estimate distances without bias once
    scaled, and they differ only in which columns weigh more.

    004 §5.2 step 3: "A data owner can compute the stress function and go
    back to Step 2 many times in order to find a good compromise between
    privacy and accuracy." With ``tries`` > 1 the party draws up to that
    many matrices and keeps the one whose **local stress** is least: eq. 6
    between its own block's original distances and those of the block it
    would send (scaled, as sent), on ``stress_sample`` of its records (all
    of them when it has no more). ``max_stress`` stops at the first draw at
    or below it. Draw 0 is seeded by ``random_state`` itself (so ``tries =
    1`` sends what a single draw always sent), draw i >= 1 by
    ``[*random_state, i]``, and the sample by its own child seed: the choice
    is reproducible from the party's seed, and an observer replaying the
    party makes the same one. Draws are a prefix of one sequence, so a larger
    ``tries`` (without ``max_stress``) never keeps a worse draw. 000 §5.3.4's
    "least stress of 20" is ``tries = 20`` with ``projection =
    "orthonormal"``.

    The local stress is what the party sees of its own block only; the
    joined data's stress (the report's utility) mixes every party's.

    Parameters
    ----------
    k : int
        Output dimensions.
    projection : {"gaussian", "sparse", "sparse-unit", "orthonormal"}, default="gaussian"
        The random matrix, as above.
    tries : int, default=1
        Matrices drawn at most (004 §5.2 step 3).
    max_stress : float, optional
        Stop at the first draw whose local stress is at most this (no bound by default).
    stress_sample : int, default=2000
        Records (a seeded sample) the local stress is computed on: its cost is quadratic in them.

    Attributes
    ----------
    components_ : ndarray of shape (d, k)
        The private matrix R (never sent): the kept draw.
    scale_ : float
        The factor applied to ``X @ R``.
    local_stress_ : float
        Eq. 6 of the kept draw on the sampled records.
    tries_used_ : int
        Draws made (fewer than ``tries`` when ``max_stress`` stopped early).
    draw_ : int
        Which draw was kept (0-based).
    stress_records_ : int
        Records the local stress was computed on.
    seconds_ : float
        Seconds spent drawing, projecting the sample and computing stress (the final projection apart).
    """

    name = "drbt"
    summary = "random projection"
    source = "004 §2.3, §5, eqs. 7-9 (DRBT)"
    randomised = True
    # set from ``params`` by Disguise.__init__
    projection: str
    tries: int
    max_stress: float | None
    stress_sample: int

    params = {
        "k": Param(int, required=True, minimum=1, doc="the number of output dimensions"),
        "projection": Param(str, default="gaussian", choices=PROJECTIONS),
        "tries": Param(int, default=1, minimum=1,
                       doc="projections drawn; the one of least local stress (004 eq. 6) is kept"),
        "max_stress": Param(float, default=None, minimum=0,
                            doc="stop at the first draw whose local stress is at most this"),
        "stress_sample": Param(int, default=2000, minimum=2, doc="records the local stress is computed on"),
    }

    #: The child seed of the local-stress sample (SeedSequence spawn key): apart from every draw's seed.
    SAMPLE_KEY = 1

    def draw_seed(self, draw: int) -> int | Sequence[int] | None:
        """The seed of draw ``draw``: ``random_state`` itself for draw 0, ``[*random_state, draw]`` after."""
        words = seed_words(self.random_state)
        return self.random_state if draw == 0 or words is None else [*words, draw]

    def stress_rows(self, m: int) -> np.ndarray:
        """The records the local stress is computed on: all ``m``, or ``stress_sample`` of them, sorted, drawn
        from the party's seed's own child (so the draws' seeds are untouched)."""
        if m <= self.stress_sample:
            return np.arange(m)
        seq = np.random.SeedSequence(seed_words(self.random_state), spawn_key=(self.SAMPLE_KEY,))
        return np.sort(np.random.default_rng(seq).choice(m, size=self.stress_sample, replace=False))

    def random_matrix(self, d: int, draw: int = 0) -> np.ndarray:
        """Draw R (d x k) from the generator of draw ``draw`` (:meth:`draw_seed`), as ``projection`` names it."""
        rng = np.random.default_rng(self.draw_seed(draw))
        if self.projection == "gaussian":
            return unit_columns(rng.standard_normal((d, self.k)))
        if self.projection == "orthonormal":
            return haar_frame(rng, d, self.k)
        signs = achlioptas_signs(rng, d, self.k)
        if self.projection == "sparse":
            return np.sqrt(3.0) * signs
        empty = ~signs.any(axis=0)
        while empty.any():  # "sparse-unit": a zero column has no unit length; draw it again
            signs[:, empty] = achlioptas_signs(rng, d, int(empty.sum()))
            empty = ~signs.any(axis=0)
        return unit_columns(np.sqrt(3.0) * signs)

    def scale(self, d: int) -> float:
        """The factor of eq. 8 that makes projected squared distances unbiased: sqrt(d/k), or 1/sqrt(k) for RP2."""
        return 1.0 / np.sqrt(self.k) if self.projection == "sparse" else float(np.sqrt(d / self.k))

    def choose(self, X: np.ndarray) -> None:
        """004 §5.2 steps 2-3: draw up to ``tries`` matrices, keep the one of least local stress (eq. 6)."""
        t = time.perf_counter()
        d = X.shape[1]
        self.scale_ = self.scale(d)
        sample = np.ascontiguousarray(X[self.stress_rows(X.shape[0])], dtype=np.float64)
        original = pdist(sample)
        best: tuple[float, int, np.ndarray] | None = None
        draw = 0
        for draw in range(self.tries):
            R = self.random_matrix(d, draw)
            value = local_stress(original, pdist((sample @ R) * self.scale_))
            if best is None or value < best[0]:
                best = (value, draw, R)
            if self.max_stress is not None and value <= self.max_stress:
                break
        assert best is not None  # tries >= 1
        self.local_stress_, self.draw_, self.components_ = best
        self.tries_used_, self.stress_records_ = draw + 1, len(sample)
        self.seconds_ = time.perf_counter() - t

    def facts(self) -> dict:
        return {"local_stress": self.local_stress_, "tries_used": self.tries_used_, "kept_draw": self.draw_,
                "stress_records": self.stress_records_, "seconds": self.seconds_}

    def disguise(self, X: np.ndarray, columns: list[str]) -> list[Sent]:
        self.check_data(X, columns)
        self.choose(X)
        return [rows("data", (X @ self.components_) * self.scale_)]
