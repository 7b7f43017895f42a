"""Utility and privacy as the observer measures them, on runs whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import write_scenario
from ppcsim.run.inprocess import simulate
from ppcsim.run.observer import Settings, evaluate
from ppcsim.scenario.load import load_scenario

WINE_A = '["alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols", "flavanoids"]'
WINE_B = '["nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue", "proline"]'


def measured(tmp_path, method_a: str, method_b: str, clustering: str = 'algorithm = "kmeans"\nn_clusters = 3',
             settings: Settings = Settings()):
    path = write_scenario(tmp_path, f"""
        name = "obs"
        seed = 4
        [data]
        source = "sklearn:wine"
        label_column = "target"
        [[parties]]
        name = "a"
        columns = {WINE_A}
        {method_a}
        [[parties]]
        name = "b"
        columns = {WINE_B}
        {method_b}
        [clustering]
        {clustering}
    """)
    scenario = load_scenario(path)
    session, own = simulate(scenario)
    return evaluate(scenario, session.wait(0), session.contributions, settings, own=own)


def test_none_gives_stress_zero_and_perfect_agreement(tmp_path):
    report = measured(tmp_path, 'method = "none"', 'method = "none"')
    u = report["utility"]
    assert u["stress"] == 0.0
    assert u["vs_original"] == {"misclassification": 0.0, "ari": 1.0, "nmi": 1.0,
                                "variation_of_information": 0.0, "f_measure": 1.0}
    assert u["vs_truth"] == u["original_vs_truth"]
    # known input-output recovers plain columns: privacy ~ 0
    for party in ("a", "b"):
        attack = report["privacy"][party]["attacks"]["known_io"]
        assert attack["mean"] < 1e-9 and attack["vd"] < 1e-9


def test_osbr_on_numeric_data_is_exact(tmp_path):
    clustering = 'algorithm = "agglomerative"\nlinkage = "complete"\nn_clusters = 3'
    report = measured(tmp_path, 'method = "osbr"', 'method = "osbr"', clustering)
    u = report["utility"]
    assert u["stress"] < 1e-12
    assert u["vs_original"]["ari"] == 1.0 and u["vs_original"]["misclassification"] == 0.0
    # with n + 1 known records and its own distances, multilateration recovers the party's data
    for party, d in (("a", 7), ("b", 5)):
        attack = report["privacy"][party]["attacks"]["multilateration"]
        assert attack["knowledge"].startswith(f"{d + 1} records'")
        assert attack["mean"] < 1e-6 and attack["min"] < 1e-6


def test_drbt_below_full_rank_is_recovered_only_partly(tmp_path):
    report = measured(tmp_path, 'method = "drbt"\nk = 3', 'method = "drbt"\nk = 5')
    u = report["utility"]
    assert 0.05 < u["stress"] < 0.6
    a, b = (report["privacy"][p]["attacks"]["known_io"] for p in ("a", "b"))
    # party a keeps 3 of 7 dims: the least-squares attacker gets only part of it back
    assert a["mean"] > 0.05
    # party b projects 5 columns to 5 (invertible): known records recover it
    assert b["mean"] < 1e-9
    assert a["knowledge"] == "9 of 178 records (5.1%) in original and disguised form"
    assert set(a["columns"]) == set(WINE_A.strip("[]").replace('"', "").split(", "))


def test_measurements_are_repeatable(tmp_path):
    first = measured(tmp_path, 'method = "drbt"\nk = 3', 'method = "drbt"\nprojection = "sparse"\nk = 2')
    second = measured(tmp_path, 'method = "drbt"\nk = 3', 'method = "drbt"\nprojection = "sparse"\nk = 2')
    assert first == second


def test_attacks_can_be_skipped(tmp_path):
    path = write_scenario(tmp_path, f"""
        [data]
        source = "sklearn:wine"
        [[parties]]
        name = "a"
        columns = {WINE_A}
        method = "none"
        [clustering]
        n_clusters = 2
    """)
    scenario = load_scenario(path)
    session, own = simulate(scenario)
    report = evaluate(scenario, session.wait(0), session.contributions, Settings(attacks=False), own=own)
    assert report["privacy"] == {"skipped": "--no-attacks"} and report["utility"]["stress"] == 0.0
    assert "vs_truth" not in report["utility"]


@pytest.mark.parametrize("metric,params", [("gower", 'categorical = []'), ("jaccard", "")])
def test_other_osbr_metrics_skip_multilateration(tmp_path, metric, params):
    rng = np.random.default_rng(0)
    for name, cols in (("a", 3), ("b", 4)):
        B = (rng.random((40, cols)) < 0.4).astype(int)
        rows = "\n".join(f"r{i}," + ",".join(map(str, B[i])) for i in range(40))
        (tmp_path / f"{name}.csv").write_text("id," + ",".join(f"{name}{j}" for j in range(cols)) + "\n" + rows + "\n")
    path = write_scenario(tmp_path, f"""
        [[parties]]
        name = "a"
        data = "a.csv"
        id_column = "id"
        columns = ["a0", "a1", "a2"]
        method = "osbr"
        metric = "{metric}"
        {params}
        [[parties]]
        name = "b"
        data = "b.csv"
        id_column = "id"
        columns = ["b0", "b1", "b2", "b3"]
        method = "osbr"
        metric = "{metric}"
        [clustering]
        algorithm = "agglomerative"
        n_clusters = 3
    """)
    scenario = load_scenario(path)
    session, own = simulate(scenario)
    report = evaluate(scenario, session.wait(0), session.contributions, Settings(), own=own)
    assert report["utility"]["stress"] < 1e-12  # the parties' parts add up to the centralised matrix
    assert report["privacy"]["a"]["attacks"]["multilateration"] == {
        "skipped": f"needs Euclidean distances, not metric '{metric}'"}


def test_paper_metrics_are_reported(tmp_path):
    report = measured(tmp_path, 'method = "rotation"', 'method = "osbr-nmds"\ndims = 4', settings=Settings(known_draws=4))
    u = report["utility"]
    for key in ("np", "cc", "cc_original"):  # 000 eqs. 5.21-5.23
        assert 0 < u[key]["mean"] <= 1 and list(u[key]["by_k"]) == [str(k) for k in range(3, 11)]
    a, b = report["privacy"]["a"], report["privacy"]["b"]
    # a rotation keeps every distance and the shape: 001's distortion of what was sent is measured
    assert set(a["sent_distortion"]) == {"vd", "rp", "rm", "cp", "ck", "cm", "cca", "knnm", "knnm_neighbours"}
    assert a["sent_distortion"]["vd"] > 0.1
    for attack in ("known_io", "known_io_forward"):
        found = a["attacks"][attack]
        assert found["draws"] == 4 and found["spread"]["mean"] >= 0
        assert found["mean"] < 1e-6 and found["privacy_002"]["mean"] < 1e-6  # q >= d + 1 recovers a rotation
    assert "min" in a["attacks"]["ica"]["privacy_002"]
    # nmds: multilateration on the party's own distances and on the coordinator's embedding (000 §4.4)
    own_distances, embedding = b["attacks"]["multilateration"], b["attacks"]["multilateration_nmds"]
    assert own_distances["mean"] < 1e-6 and own_distances["draws"] == 4
    assert 0 < embedding["mean"] and "nmds embedding" in embedding["knowledge"]
    assert "sent_distortion" not in b


def test_labels_of_a_csv_are_read_by_the_parties_id_column(tmp_path):
    """[data] may name the file and its label column and leave the id column to each party."""
    from ppcsim.run.observer import true_labels

    (tmp_path / "shared.csv").write_text("pid,x,y,group\nr1,1,2,b\nr2,3,4,a\nr3,5,6,b\n")
    path = write_scenario(tmp_path, """
        name = "labels"
        seed = 1
        [data]
        source = "shared.csv"
        label_column = "group"
        [[parties]]
        name = "a"
        id_column = "pid"
        columns = ["x"]
        method = "none"
        [[parties]]
        name = "b"
        id_column = "pid"
        columns = ["y"]
        method = "none"
        [clustering]
        algorithm = "kmeans"
        n_clusters = 2
    """)
    scenario = load_scenario(path)
    assert scenario.id_column is None
    assert true_labels(scenario, np.array(["r3", "r2", "r1"])).tolist() == [1, 0, 1]
