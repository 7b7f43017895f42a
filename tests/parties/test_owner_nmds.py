"""``nmds`` at the data owner (000 ch. 3, §5.2.3.1; 003 §IV): the party embeds its own records and sends Y."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform

import ppcsim
from conftest import IRIS, NO_TLS, kmeans, party_table, read_report, run_ppc, scenario_toml, write_scenario
from coordinator.combine import Combined
from coordinator.embed import kruskal_stress_1 as coordinator_stress_1
from coordinator.embed import nmds as coordinator_nmds
from parties.data import load_builtin
from parties.methods import NMDS, OSBRNMDS, method_class
from parties.methods.nmds import kruskal_stress_1
from parties.normalize import normalize
from ppcsim.api import from_toml
from ppcsim.evaluate.neighbours import profile

#: 000 Table 5.8 (NP, mean over k = 3..10) and Table 5.13 (4-NN accuracy, %) for NMDS; our tolerances.
TABLE_5_8 = {"wine": 0.98, "iris": 0.93}
TABLE_5_13 = {"wine": 96.14, "iris": 94.89}
NP_TOLERANCE, KNN_TOLERANCE = 0.02, 1.5


def zscored(name: str) -> tuple[np.ndarray, np.ndarray]:
    _, data, labels = load_builtin(name)
    return normalize(data, "zscore"), labels


@pytest.mark.parametrize("name", ["wine", "iris"])
def test_thesis_table_5_8_and_5_13_through_the_owner_side_nmds(name):
    """p = n - 1 from the classical start: NP within 0.02 of 000 Table 5.8, 4-NN within 1.5 points of Table 5.13."""
    from ppcsim.reproduce.thesis000 import knn_accuracy, perturb

    X, labels = zscored(name)
    p = X.shape[1] - 1
    method = NMDS(dims=p, random_state=0)
    (sent,) = method.disguise(X, [f"c{j}" for j in range(X.shape[1])])
    Y = sent.array
    assert Y.shape == (len(X), p) and method.start_ == "classical"
    assert abs(profile(pdist(X), pdist(Y))["np"]["mean"] - TABLE_5_8[name]) < NP_TOLERANCE
    np.testing.assert_array_equal(perturb("nmds", X, p, 0), Y)  # the reproduction reads through the method
    accuracy = np.mean([knn_accuracy(Y, labels, seed) for seed in range(5)])
    assert abs(accuracy - TABLE_5_13[name]) < KNN_TOLERANCE
    # 000 eq. 3.12 of the configuration sent, as the coordinator's embedding computes it
    assert method.stress_1_ == pytest.approx(coordinator_stress_1(pdist(X), Y), rel=1e-9) and method.stress_1_ < 0.01


def test_the_classical_start_is_what_the_coordinators_embedding_gives_scaled_to_the_partys_distances():
    """000 §3.3.4 from classical scaling: the same SMACOF as osbr-nmds at the coordinator, on the party's own
    distances, then one least-squares factor to the party's distances."""
    X, _ = zscored("iris")
    Y = NMDS(dims=2, random_state=5).disguise(X, [])[0].array
    central = coordinator_nmds(Combined(dissimilarity=pdist(X), description="iris"),
                               {"dims": "2", "init": "classical", "max_iter": "3000"}, 5).features
    assert central is not None
    factor = np.sum(pdist(X) * pdist(central)) / np.sum(pdist(central) ** 2)
    np.testing.assert_allclose(Y, central * factor, rtol=1e-9, atol=1e-12)


def test_a_classical_start_that_is_already_best_falls_back_to_random_starts():
    """000 §5.2.3.1: dims = columns makes classical scaling exact (stress-1 0): releasing it would release the
    data rotated, so the party starts from random configurations instead, reproducibly from its seed."""
    X, _ = zscored("iris")
    X = X[:40, :2]
    first = NMDS(dims=2, n_init=2, max_iter=300, random_state=1)
    Y = first.disguise(X, [])[0].array
    assert first.start_.startswith("random: the classical start was already the best")
    classical = squareform(pdist(X))
    from sklearn.manifold import ClassicalMDS

    exact = ClassicalMDS(metric="precomputed", n_components=2).fit_transform(classical)
    assert kruskal_stress_1(pdist(X), exact) < 1e-12
    assert not np.allclose(np.abs(pdist(Y)), pdist(X), rtol=1e-6)  # not an isometric copy of the data
    again = NMDS(dims=2, n_init=2, max_iter=300, random_state=1).disguise(X, [])[0].array
    other = NMDS(dims=2, n_init=2, max_iter=300, random_state=2).disguise(X, [])[0].array
    assert np.array_equal(Y, again) and not np.array_equal(Y, other)


def test_random_starts_keep_the_least_stress_1():
    X, _ = zscored("iris")
    X = X[:50]
    best = NMDS(dims=2, init="random", n_init=3, max_iter=200, random_state=4)
    best.disguise(X, [])
    singles = []
    for start in range(3):
        one = NMDS(dims=2, init="random", n_init=1, max_iter=200, random_state=4)
        Y, _ = one.smacof(squareform(pdist(X)), None, start)
        singles.append(kruskal_stress_1(pdist(X), Y))
    assert best.start_ == "random" and best.stress_1_ == pytest.approx(min(singles), rel=1e-12)
    assert best.randomised and not NMDS(dims=2).randomised


def test_a_run_sends_m_by_dims_and_the_bytes_are_predicted():
    """Two iris parties, each embedding its own two columns in one dimension: the coordinator receives m x 1
    per party, m * dims * 8 bytes each, as predicted, and each party's stress-1 is in the report."""
    parties = [party_table("a", IRIS[:2], "nmds", dims=1, max_iter=300),
               party_table("b", IRIS[2:], "nmds", dims=1, max_iter=300)]
    run = ppcsim.simulate(from_toml(scenario_toml("iris-nmds", parties, seed=3, data="sklearn:iris",
                                                  clustering=kmeans(3), security=NO_TLS)), attacks=False)
    for entry in run.report["parties"]:
        name, m = entry["name"], entry["rows"]
        assert entry["sends"] == "features" and entry["arrays"] == {"data": [150, 1]}
        assert run.sent[name]["data"].shape == (150, 1)
        assert entry["bytes"]["predicted"] == entry["bytes"]["payload"] == m * 1 * 8
        check = entry["own_check"]
        assert check["stress_1"] == pytest.approx(kruskal_stress_1(pdist(run.original[name]), run.sent[name]["data"]))
    assert run.report["clustering"]["embedding"] is None  # nothing embedded at the coordinator
    assert run.clustered is not None and run.clustered.shape == (150, 2)


def test_dims_beyond_the_columns_is_refused_naming_both():
    assert NMDS.check_columns({"dims": 3}, ["x", "y"]) == ["dims = 3 is larger than the party's 2 columns"]
    with pytest.raises(ValueError, match="dims = 3 is larger than the party's 2 columns"):
        NMDS(dims=3).disguise(np.zeros((10, 2)), ["x", "y"])


def test_the_coordinator_side_embedding_keeps_its_own_name():
    assert method_class("osbr-nmds") is OSBRNMDS and OSBRNMDS(dims=2).embedding() == "nmds"
    assert NMDS(dims=2).embedding() is None and NMDS(dims=2).form() is None


def test_party_processes_send_what_the_observers_replay_computes(tmp_path):
    """``ppc run``: each party process (one BLAS thread) embeds its records; the observer, replaying the party in
    its own process, must compute the very same configuration or the run fails."""
    parties = [party_table("a", IRIS[:2], "nmds", dims=1, max_iter=300),
               party_table("b", IRIS[2:], "nmds", dims=2, init="random", n_init=2, max_iter=200)]
    path = write_scenario(tmp_path, name="iris-nmds", parties=parties, seed=4, data="sklearn:iris",
                          clustering=kmeans(3), security=NO_TLS)
    proc = run_ppc("run", path, "--out", tmp_path / "out", "--no-attacks")
    assert proc.returncode == 0, proc.stderr
    report = read_report(tmp_path / "out")
    a, b = report["parties"]
    assert a["own_check"]["start"] == "classical" and b["own_check"]["start"] == "random"
    assert (a["bytes"]["payload"], b["bytes"]["payload"]) == (150 * 1 * 8, 150 * 2 * 8)
    assert "own check b: stress-1" in proc.stderr
