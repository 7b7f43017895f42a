"""Classification utility: cross-validated accuracy on the disguised and on the original data (000 §5.3, 003).

Every classifier is registered by name in ``CLASSIFIERS``: the report's
``utility.classification.classifiers`` holds one entry per classifier (its
accuracy on the coordinator's joined disguised features and on the original
joined columns), the sweep's CSV two columns, and the report page one row and
one glossary line. A new classifier is one line::

    CLASSIFIERS["tree"] = Classifier(lambda: DecisionTreeClassifier(random_state=0), plain="decision tree",
                                     term="decision tree", meaning="...", source="Breiman et al. (1984)")

The settings are 000's (§5.3.4.1): k = 4 neighbours; C = 1 for every SVM;
a polynomial kernel of degree 3, ``(x.y + 1)^3``; a Gaussian kernel of radius
1, ``exp(-|x - y|^2 / 2)``; the multilayer-perceptron (sigmoid) kernel of slope
1 and intercept -1, ``tanh(x.y - 1)``. 003 uses the linear, polynomial and RBF
SVMs with C = 1 and 10-fold cross-validation (its Table I). Accuracy is
estimated by stratified 10-fold cross-validation, the same folds for the
disguised and the original data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC

#: Folds of the stratified cross-validation (000 §5.3.4.1, 003 §V).
FOLDS = 10
#: Records classified at most (a seeded sample), to bound the SVMs' cost.
CLASSIFY_ROWS = 2000


@dataclass(frozen=True)
class Classifier:
    """One classifier whose cross-validated accuracy the observer reports.

    Attributes
    ----------
    make : callable
        ``make()`` returns a fresh scikit-learn classifier.
    plain : str
        Its name on the report page.
    term, meaning, source : str
        Its glossary entry and where it comes from (paper and section; HTML).
    """

    make: Callable[[], object]
    plain: str
    term: str
    meaning: str
    source: str


#: The classifiers by the name the report gives them, in the report's order.
CLASSIFIERS: dict[str, Classifier] = {
    "knn4": Classifier(
        lambda: KNeighborsClassifier(n_neighbors=4), "4-NN", "4-NN (k-nearest neighbours)",
        "Each record takes the class most of its 4 nearest training records have.", "000 §5.3.1, §5.3.4.1"),
    "svm_linear": Classifier(
        lambda: SVC(kernel="linear", C=1.0), "linear SVM", "linear SVM",
        "A support vector machine separating the classes by a hyperplane (C = 1).", "000 §5.3.2; 003 Table I"),
    "svm_poly": Classifier(
        lambda: SVC(kernel="poly", degree=3, gamma=1.0, coef0=1.0, C=1.0), "SVM, polynomial kernel",
        "polynomial SVM", "A support vector machine with the kernel (x.y + 1)^3 (C = 1).", "000 §5.3.4.1; 003"),
    "svm_rbf": Classifier(
        lambda: SVC(kernel="rbf", gamma=0.5, C=1.0), "SVM, RBF kernel", "RBF SVM",
        "A support vector machine with the Gaussian kernel of radius 1, exp(-|x - y|^2 / 2) (C = 1).",
        "000 §5.3.4.1; 003"),
    "svm_sigmoid": Classifier(
        lambda: SVC(kernel="sigmoid", gamma=1.0, coef0=-1.0, C=1.0), "SVM, sigmoid kernel", "sigmoid SVM",
        "A support vector machine with the multilayer-perceptron kernel tanh(x.y - 1) (C = 1).", "000 §5.3.4.1"),
}


def folds_seed(seed: int) -> int:
    """The seed of the cross-validation's folds for a scenario of seed ``seed`` (the report gives it)."""
    return int(np.random.default_rng([seed, 5]).integers(2**31 - 1))


def folds(labels: np.ndarray, seed: int) -> StratifiedKFold | None:
    """Stratified folds, shuffled with ``seed``: ``FOLDS`` of them, fewer when the smallest class has fewer
    records (each fold needs one of each class); None when a class has a single record."""
    _, counts = np.unique(labels, return_counts=True)
    n = min(FOLDS, int(counts.min()))
    if n < 2 or counts.size < 2:
        return None
    return StratifiedKFold(n_splits=n, shuffle=True, random_state=seed)


def accuracy(features: np.ndarray, labels: np.ndarray, cv: StratifiedKFold) -> dict[str, float]:
    """The mean accuracy over the folds ``cv`` of every registered classifier on ``features``."""
    return {name: float(np.mean(cross_val_score(c.make(), features, labels, cv=cv)))  # type: ignore[arg-type]
            for name, c in CLASSIFIERS.items()}


def classification(original: np.ndarray, disguised: np.ndarray, labels: np.ndarray, seed: int) -> dict:
    """Cross-validated accuracy of every classifier on the disguised and the original joined data.

    Parameters
    ----------
    original : ndarray of shape (m, n)
        The original joined (normalised) columns.
    disguised : ndarray of shape (m, p)
        The coordinator's joined disguised features (or embedding), rows as ``original``.
    labels : ndarray of shape (m,)
        The true classes.
    seed : int
        The scenario's seed: the folds' and the sample's.

    Returns
    -------
    dict
        ``folds``, ``seed`` (of ``StratifiedKFold(folds, shuffle=True,
        random_state=seed)``), ``records`` and, per classifier,
        ``{"disguised": accuracy, "original": accuracy}``; or ``{"skipped": why}``.
    """
    labels = np.asarray(labels)
    rows = np.arange(len(labels))
    if len(rows) > CLASSIFY_ROWS:
        rows = np.sort(np.random.default_rng([seed, 6]).choice(len(rows), size=CLASSIFY_ROWS, replace=False))
    y = labels[rows]
    cv_seed = folds_seed(seed)
    cv = folds(y, cv_seed)
    if cv is None:
        return {"skipped": "a class has a single record (or there is one class): no stratified folds"}
    ours, theirs = accuracy(disguised[rows], y, cv), accuracy(original[rows], y, cv)
    return {"folds": cv.get_n_splits(), "seed": cv_seed, "records": len(rows),
            "classifiers": {name: {"disguised": ours[name], "original": theirs[name]} for name in CLASSIFIERS}}
