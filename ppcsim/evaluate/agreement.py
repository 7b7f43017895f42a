"""Agreement between two clusterings of the same objects (002 DQ_C, 000 eqs 5.5-5.8, F-measure).

Every measure is registered by name in ``AGREEMENT``: the report's
``utility.vs_original`` (and ``vs_truth``) holds one figure per entry, the
sweep's CSV one column, and the report page one column and one glossary line.
A new measure is a function over two label arrays plus one line there::

    AGREEMENT["fmi"] = AgreementMetric(lambda a, b: float(fowlkes_mallows_score(a, b)), identical=1.0,
                                       plain="FMI", term="FMI (Fowlkes-Mallows index)", meaning="...",
                                       source="Fowlkes & Mallows (1983)")
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix


def _labels(name: str, values) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of labels, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} must not be empty")
    return array


def misclassification(table: np.ndarray) -> float:
    """002 DQ_C: ``1 - m_C / N``, ``m_C`` the most objects any one-to-one label matching keeps.

    The matching is found by the Hungarian algorithm on the contingency
    ``table`` (rows: reference labels, columns: the other labels). When the two
    labelings have different numbers of clusters, the surplus clusters stay
    unmatched and all their objects count as misclassified.
    """
    rows, cols = linear_sum_assignment(table, maximize=True)
    n = int(table.sum())
    return (n - int(table[rows, cols].sum())) / n


def variation_of_information(table: np.ndarray) -> float:
    """000 eq. 5.5, ``VI = H(C) + H(C') - 2 MI(C, C')``, in bits (eqs 5.6-5.7 with log2).

    Computed in the equivalent form ``H(C|C') + H(C'|C) =
    -sum_ij p_ij [log2(n_ij / n_i.) + log2(n_ij / n_.j)]``: every term is
    non-negative, so the result never goes below zero by round-off, and it is
    exactly 0.0 when the two partitions are equal (each ratio is then exactly 1).
    """
    n = table.sum()
    i, j = np.nonzero(table)
    n_ij = table[i, j].astype(np.float64)
    row = table.sum(axis=1)[i].astype(np.float64)
    col = table.sum(axis=0)[j].astype(np.float64)
    vi = -np.sum(n_ij * (np.log2(n_ij / row) + np.log2(n_ij / col))) / n
    return float(vi) + 0.0  # turn -0.0 into 0.0


def f_measure(table: np.ndarray) -> float:
    """Clustering F-measure, ``F = sum_i (n_i / n) max_j F(i, j)``.

    ``F(i, j) = 2 P R / (P + R) = 2 n_ij / (n_i + n_j)`` with recall
    ``R = n_ij / n_i`` (reference class i) and precision ``P = n_ij / n_j``
    (cluster j); each reference class takes its best cluster and classes are
    weighted by their size. This is the definition of Larsen & Aone (1999),
    as used by Steinbach, Karypis & Kumar, "A comparison of document
    clustering techniques" (KDD Text Mining Workshop, 2000). It is 1 exactly
    when the partitions are equal; it is not symmetric in its two arguments.
    """
    n_i = table.sum(axis=1, keepdims=True)
    n_j = table.sum(axis=0, keepdims=True)
    best = (2.0 * table / (n_i + n_j)).max(axis=1)
    # sum of n_i * best_i, then one division: equal partitions give n / n == 1.0 exactly.
    return float(np.dot(n_i[:, 0], best) / table.sum())


def _misclassification(reference: np.ndarray, labels: np.ndarray) -> float:
    return misclassification(contingency_matrix(reference, labels))


def _nmi(reference: np.ndarray, labels: np.ndarray) -> float:
    table = contingency_matrix(reference, labels)
    # Equal partitions (one non-zero per row and per column): sklearn's NMI
    # divides two differently rounded sums and may return 0.9999999999999998.
    same = bool(((table > 0).sum(axis=0) == 1).all() and ((table > 0).sum(axis=1) == 1).all())
    return 1.0 if same else float(np.clip(normalized_mutual_info_score(reference, labels), 0.0, 1.0))


def _variation_of_information(reference: np.ndarray, labels: np.ndarray) -> float:
    return variation_of_information(contingency_matrix(reference, labels))


def _f_measure(reference: np.ndarray, labels: np.ndarray) -> float:
    return f_measure(contingency_matrix(reference, labels))


@dataclass(frozen=True)
class AgreementMetric:
    """One measure of how far two clusterings of the same objects agree.

    Attributes
    ----------
    function : callable
        ``function(reference, labels) -> float`` over two 1-D label arrays of
        the same objects (checked by :func:`agreement` first).
    identical : float
        Its value for two labelings equal up to renaming: 1.0 ("1 is
        identical") or 0.0 ("0 is identical").
    plain : str
        Its column heading on the report page.
    term, meaning, source : str
        Its glossary entry: the term, what it says in plain words, and where
        it comes from (paper and equation; HTML).
    """

    function: Callable[[np.ndarray, np.ndarray], float]
    identical: float
    plain: str
    term: str
    meaning: str
    source: str

    @property
    def direction(self) -> str:
        """``"1 is identical"`` or ``"0 is identical"``."""
        return f"{self.identical:g} is identical"

    @property
    def short(self) -> str:
        """The term without its explanation in brackets: ``"ARI"`` of ``"ARI (adjusted Rand index)"``."""
        return self.term.split(" (")[0]


#: The agreement measures by the name the report gives them, in the report's order.
AGREEMENT: dict[str, AgreementMetric] = {
    "misclassification": AgreementMetric(
        _misclassification, 0.0, "misclassified", "misclassified",
        "Share of records in a different cluster after the best one-to-one matching of cluster numbers.",
        "002's DQ_C"),
    "ari": AgreementMetric(
        lambda reference, labels: float(adjusted_rand_score(reference, labels)), 1.0, "ARI",
        "ARI (adjusted Rand index)", "Agreement of two clusterings over all pairs of records, corrected for "
        "chance: 1 identical, about 0 no better than chance.", "Hubert &amp; Arabie (1985), computed by scikit-learn"),
    "nmi": AgreementMetric(
        _nmi, 1.0, "NMI", "NMI (normalised mutual information)",
        "Information the two clusterings share, from 0 (none) to 1 (the same partition).",
        "mutual information: 000 eq. 5.7; normalised by the mean of the two entropies (eq. 5.6), by scikit-learn"),
    "variation_of_information": AgreementMetric(
        _variation_of_information, 0.0, "VI (bits)", "VI (variation of information)",
        "Information, in bits, by which two clusterings differ: 0 for the same partition, larger is worse.",
        "000 eq. 5.5"),
    "f_measure": AgreementMetric(
        _f_measure, 1.0, "F-measure", "F-measure",
        "Each cluster matched to its best counterpart, precision and recall combined: 1 identical.",
        "Larsen &amp; Aone (1999)"),
}


def agreement(reference, labels) -> dict[str, float]:
    """How far ``labels`` agrees with ``reference``, both labelings of the same objects.

    ``reference`` is the clustering of the original joined data (or the true
    classes), ``labels`` the clustering of the disguised data. Labels are any
    hashable values and need not have the same number of clusters. DBSCAN's
    noise label -1 is treated as one more cluster (all noise points together).

    Parameters
    ----------
    reference : array-like of shape (n_objects,)
        Reference labels.
    labels : array-like of shape (n_objects,)
        Labels to compare, in the same object order.

    Returns
    -------
    dict
        ``misclassification``: 002 DQ_C = 1 - max over one-to-one label
        matchings of the matched count / N (Hungarian algorithm, §5.4), 0 best;
        ``ari``: adjusted Rand index (sklearn), 1 best; ``nmi``: normalised
        mutual information (sklearn, arithmetic normalisation), 1 best;
        ``variation_of_information``: 000 eq. 5.5 in bits, 0 best;
        ``f_measure``: see :func:`f_measure`, 1 best.
        Labelings equal up to renaming give exactly 0.0, 1.0, 1.0, 0.0, 1.0.
        One entry per measure registered in ``AGREEMENT``, in its order.
    """
    reference = _labels("reference", reference)
    labels = _labels("labels", labels)
    if reference.shape != labels.shape:
        raise ValueError(
            f"reference and labels must label the same objects, got {reference.size} and {labels.size} labels"
        )
    return {name: metric.function(reference, labels) for name, metric in AGREEMENT.items()}
