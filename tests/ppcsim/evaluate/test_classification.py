"""Classification utility (000 §5.3, 003): equal to scikit-learn's cross-validation; 002 Theorems 1-3."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ortho_group
from sklearn.datasets import load_wine
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC

from ppcsim.evaluate.classification import CLASSIFIERS, classification, folds_seed

X, Y = load_wine(return_X_y=True)
Z = (X - X.mean(axis=0)) / X.std(axis=0)


def test_accuracy_is_scikit_learn_s_stratified_ten_fold_cross_validation():
    found = classification(Z, Z[:, :5], Y, seed=3)
    assert found["folds"] == 10 and found["records"] == 178 and found["seed"] == folds_seed(3)
    cv = StratifiedKFold(10, shuffle=True, random_state=found["seed"])
    knn = cross_val_score(KNeighborsClassifier(n_neighbors=4), Z[:, :5], Y, cv=cv).mean()
    rbf = cross_val_score(SVC(kernel="rbf", gamma=0.5), Z, Y, cv=cv).mean()
    assert found["classifiers"]["knn4"]["disguised"] == knn and found["classifiers"]["svm_rbf"]["original"] == rbf
    assert list(found["classifiers"]) == list(CLASSIFIERS) == ["knn4", "svm_linear", "svm_poly", "svm_rbf",
                                                                "svm_sigmoid"]


def test_002_theorems_1_to_3_every_classifier_is_unchanged_by_a_rotation():
    """002 Theorem 1 (k-NN), Theorem 2 (kernel methods) and Theorem 3 (polynomial, RBF, sigmoid SVM)."""
    R = ortho_group.rvs(13, random_state=5)
    found = classification(Z, Z @ R, Y, seed=0)["classifiers"]
    for name, accuracy in found.items():
        assert accuracy["disguised"] == pytest.approx(accuracy["original"], abs=1e-12), name


def test_002_theorems_1_and_3_k_nn_and_rbf_are_unchanged_by_a_translation():
    shifted = classification(Z, Z @ ortho_group.rvs(13, random_state=6) + 3.0, Y, seed=0)["classifiers"]
    assert shifted["knn4"]["disguised"] == shifted["knn4"]["original"]
    assert shifted["svm_rbf"]["disguised"] == pytest.approx(shifted["svm_rbf"]["original"], abs=1e-12)


def test_a_class_of_one_record_is_refused_by_name():
    labels = Y.copy()
    labels[0] = 9
    assert classification(Z, Z, labels, seed=0) == {
        "skipped": "a class has a single record (or there is one class): no stratified folds"}
    few = np.r_[np.zeros(170, int), np.ones(8, int)]  # a class of 8: 8 folds, each holding one
    assert classification(Z, Z, few, seed=0)["folds"] == 8
