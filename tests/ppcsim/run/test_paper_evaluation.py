"""A real run measured as the papers measure: every attack on every disguise, 001's structure, classification."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier

import ppcsim
from conftest import NO_TLS, WINE, WINE_LABELLED, party_table, scenario_toml
from ppcsim.api import from_toml
from ppcsim.report.html import run_page


def test_a_wine_run_with_a_drbt_and_a_rotation_party_is_measured_as_the_papers_do(tmp_path):
    text = scenario_toml("papers", [party_table("lab", WINE[:7], "drbt", k=4), party_table("shop", WINE[7:], "rotation")],
                         seed=11, data=WINE_LABELLED, clustering={"n_clusters": 3}, security=NO_TLS)
    run = ppcsim.simulate(from_toml(text), processes=True, out=tmp_path / "run")
    privacy, utility = run.report["privacy"], run.report["utility"]
    lab, shop = privacy["lab"], privacy["shop"]
    # 000 §4.4 on both: a rotation keeps every distance, so its records are located exactly
    assert lab["attacks"]["multilateration"]["object_privacy_mean"] > 0.1
    assert shop["attacks"]["multilateration"]["object_privacy_mean"] < 1e-6
    # 000 Algorithm 4.3 on the rotation party, with its eigenstructure distances
    pca = shop["attacks"]["pca_known_sample"]
    assert pca["knowledge"] == "a sample of 54 of 178 records (30%) of the original distribution"
    assert pca["search"] == "all 2^n mirror images" and 0 <= pca["md_eigenvectors"] <= np.pi / 2
    assert pca["distance_error"] > 0 and 0 <= pca["md_eigenvalues"] < 1 and 0 < pca["mean"] < 0.5
    # 001 ch. 7 of what was sent: a rotation's CCA is 1; the projection to 4 of 7 columns keeps at most 4/7
    assert shop["sent_distortion"]["cca"] == pytest.approx(1.0, abs=1e-9) and shop["sent_distortion"]["knnm"] == 0
    assert {"cm", "cca", "knnm"} <= set(shop["sent_distortion"])
    assert set(lab["sent_distortion"]) == {"cca", "knnm", "knnm_neighbours"} and lab["sent_distortion"]["cca"] <= 4 / 7
    # stratified 10-fold 4-NN on the matrix the coordinator clustered, with the folds the report names
    found = utility["classification"]
    clustered = np.load(tmp_path / "run" / "clustered.npz")["features"]
    assert np.array_equal(clustered, run.clustered)
    truth = load_wine().target[run.ids.astype(int)]
    cv = StratifiedKFold(found["folds"], shuffle=True, random_state=found["seed"])
    assert found["folds"] == 10 and found["records"] == 178
    assert found["classifiers"]["knn4"]["disguised"] == cross_val_score(KNeighborsClassifier(4), clustered, truth,
                                                                        cv=cv).mean()
    page = run_page(run.report, {})
    assert "accuracy, disguised" in page and "PCA attack with a known sample" in page
