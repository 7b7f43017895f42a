"""001 ch. 7: CM, CCA and knnM, against their stated properties and against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ortho_group
from sklearn.cross_decomposition import CCA as SklearnCCA
from sklearn.datasets import load_iris, load_wine

from conftest import WINE, WINE_LABELLED, party_table, scenario_toml, write_scenario
from ppcsim.evaluate.structure import canonical_correlations, cca, correlation_measure, knnm, knnm_neighbours
from ppcsim.run.inprocess import simulate
from ppcsim.run.observer import Settings, evaluate
from ppcsim.scenario.load import load_scenario

WINE_X = load_wine().data
IRIS_X = load_iris().data


def test_cm_of_a_translated_copy_is_one_and_noise_lowers_it_as_eq_7_8_says():
    assert correlation_measure(WINE_X, WINE_X + 100) == pytest.approx(1.0, abs=1e-12)  # eq. 7.2
    rng = np.random.default_rng(0)
    sigma = WINE_X.std(axis=0)
    noisy = WINE_X + rng.normal(size=WINE_X.shape) * sigma  # sigma_e = sigma_y: eq. 7.8 gives 1 / sqrt(2)
    assert correlation_measure(WINE_X, noisy) == pytest.approx(1 / np.sqrt(2), abs=0.05)
    assert correlation_measure(WINE_X, -WINE_X) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="same columns"):
        correlation_measure(WINE_X, WINE_X[:, :3])


def test_cca_is_one_for_a_rotation_a_translation_and_units_as_tables_7_4_and_7_5_say():
    R = ortho_group.rvs(13, random_state=1)
    assert cca(WINE_X, WINE_X @ R) == pytest.approx(1.0, abs=1e-9)
    assert cca(WINE_X, WINE_X + 5) == pytest.approx(1.0, abs=1e-9)  # eq. 7.11
    assert cca(WINE_X, WINE_X * np.arange(1, 14)) == pytest.approx(1.0, abs=1e-9)  # Table 7.4: units
    # fewer columns: at most k' of the n canonical correlations are 1
    assert cca(WINE_X, (WINE_X @ R)[:, :4]) == pytest.approx(4 / 13, abs=1e-9)


def test_canonical_correlations_equal_scikit_learn_s():
    rng = np.random.default_rng(3)
    Y = IRIS_X @ rng.normal(size=(4, 3)) + rng.normal(scale=2.0, size=(150, 3))
    ours = canonical_correlations(IRIS_X, Y)
    model = SklearnCCA(n_components=3, max_iter=5000, tol=1e-12).fit(IRIS_X, Y)
    u, v = model.transform(IRIS_X, Y)
    theirs = [abs(np.corrcoef(u[:, i], v[:, i])[0, 1]) for i in range(3)]
    assert ours == pytest.approx(sorted(theirs, reverse=True), abs=1e-6)


def test_knnm_is_zero_under_a_rotation_and_table_7_5_s_reading_is_the_neighbourhood_size():
    for X in (IRIS_X, WINE_X):
        R = ortho_group.rvs(X.shape[1], random_state=2)
        assert knnm(X, X @ R) == 0.0  # eq. 7.13
        assert [knnm_neighbours(X, X @ R, k) for k in (5, 10, 15)] == [5.0, 10.0, 15.0]
    rng = np.random.default_rng(0)
    noisy = WINE_X + rng.normal(size=WINE_X.shape) * WINE_X.std(axis=0)
    assert knnm(WINE_X, noisy) > 1 and knnm_neighbours(WINE_X, noisy) < 4
    # the two readings move in opposite directions: more distortion, higher eq. 7.12, lower Table 7.5
    more = WINE_X + 3 * rng.normal(size=WINE_X.shape) * WINE_X.std(axis=0)
    assert knnm(WINE_X, more) > knnm(WINE_X, noisy) and knnm_neighbours(WINE_X, more) < knnm_neighbours(WINE_X, noisy)


def test_what_was_sent_is_measured_even_with_fewer_columns(tmp_path):
    path = write_scenario(tmp_path, scenario_toml("s", [party_table("a", WINE[:7], "drbt", k=3),
                                                        party_table("b", WINE[7:], "rotation")],
                                                  seed=2, data=WINE_LABELLED, clustering={"n_clusters": 3}))
    scenario = load_scenario(path)
    session, own = simulate(scenario)
    report = evaluate(scenario, session.wait(0), session.contributions, Settings(known_draws=10), own=own)
    a, b = report["privacy"]["a"]["sent_distortion"], report["privacy"]["b"]["sent_distortion"]
    assert set(a) == {"cca", "knnm", "knnm_neighbours"} and a["cca"] <= 3 / 7 + 1e-9
    assert b["cca"] == pytest.approx(1.0, abs=1e-9) and b["knnm"] == 0.0 and b["knnm_neighbours"] == 5.0
    assert b["cm"] < 0.9 and "vd" in b  # a rotation moves every column: the values are not kept, the structure is
    estimate = report["privacy"]["b"]["attacks"]["known_io"]
    assert estimate["cm"] == pytest.approx(1.0, abs=1e-9) and estimate["knnm"] == 0.0
