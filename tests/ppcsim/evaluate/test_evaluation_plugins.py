"""Attacks, agreement measures and privacy metrics are plug-ins: each test defines one and registers it with one line.

Nothing else is edited: the plug-in then appears in the report, in the
sweep's CSV and on the report page, through the same code as the built-in
ones. The runs are in process (the observer runs in the launcher's process,
so a registered plug-in reaches ``ppc run`` called from here too).
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from sklearn.metrics import fowlkes_mallows_score

import ppcsim.api
from conftest import write_scenario
from ppcsim.cli.parser import main as ppc_main
from ppcsim.evaluate.agreement import AGREEMENT, AgreementMetric
from ppcsim.evaluate.attackers import ATTACKS, Attack, Target
from ppcsim.evaluate.scores import PRIVACY_METRICS, PrivacyMetric, average, scores
from ppcsim.report.html import run_page
from ppcsim.run.observer import Settings, true_labels
from ppcsim.run.sweep import sweep

A = ["alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols", "flavanoids"]
B = ["nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue", "proline"]
#: wine over two parties: a sends rotated rows (known_io, its forward form, ica), b its Euclidean distances
SCENARIO = {"name": "plug", "seed": 3, "data": {"source": "sklearn:wine", "label_column": "target"},
            "parties": [{"name": "a", "columns": A, "method": "rotation"}, {"name": "b", "columns": B, "method": "osbr"}],
            "clustering": {"algorithm": "agglomerative", "n_clusters": 3}}
TOML = f"""
name = "plug"
seed = 3
[data]
source = "sklearn:wine"
label_column = "target"
[[parties]]
name = "a"
columns = {json.dumps(A)}
method = "rotation"
[[parties]]
name = "b"
columns = {json.dumps(B)}
method = "osbr"
[clustering]
algorithm = "agglomerative"
n_clusters = 3
"""


def swept(tmp_path, settings: Settings) -> tuple[list[dict], list[dict]]:
    """Two seeds of the scenario, in process: the returned rows and sweep.csv as read back."""
    path = write_scenario(tmp_path, TOML + "[sweep]\nseed = [1, 2]\n", "sweep.toml")
    rows = sweep(path, tmp_path / "sweep", in_process=True, settings=settings, log=None)
    with open(tmp_path / "sweep" / "sweep.csv", newline="") as f:
        return rows, list(csv.DictReader(f))


def test_a_new_attack_is_one_registry_line(tmp_path, monkeypatch):
    """A mean-imputation baseline: every record estimated as the known records' column means, on every party."""
    before = ppcsim.api.simulate(SCENARIO).report["privacy"]
    seen: list[tuple[int, str, float]] = []  # (scenario seed, party, the column privacy mean the run must report)

    def mean_imputation(target: Target) -> dict:
        X, draws = target.X, []
        for i, (known, unknown) in enumerate(target.known_records()):
            estimate = np.broadcast_to(X[known].mean(axis=0), X.shape)
            draws.append(scores(X[unknown], estimate[unknown], target.columns, first_draw=i == 0))
        # a constant estimate leaves each column's own spread: std / range of the records scored
        expected = np.mean([np.mean(X[u].std(axis=0) / np.ptp(X[u], axis=0)) for _, u in target.known_records()])
        seen.append((target.scenario.seed, target.name, float(expected)))
        return average(draws)

    monkeypatch.setitem(ATTACKS, "mean_imputation", Attack(
        applies=lambda target: True, run=mean_imputation,
        knowledge=lambda target: f"{target.known_count} records' original values",
        estimator="every record as the known records' column means", source="a baseline", plain="mean imputation"))

    run = ppcsim.api.simulate(SCENARIO)
    privacy = run.report["privacy"]
    for party in ("a", "b"):
        found = privacy[party]["attacks"]["mean_imputation"]
        assert list(found) == ["knowledge", "columns", "min", "mean", "privacy_002", "vd", "rp", "rm", "cp", "ck",
                               "cm", "cca", "knnm", "knnm_neighbours", "draws", "spread", "median", "iqr"]
        assert found["draws"] == 100 and found["knowledge"] == "9 records' original values"  # 5% of 178, rounded up
        expected = next(e for seed, name, e in seen if name == party)
        assert found["mean"] == pytest.approx(expected, rel=1e-12)
        assert 0.1 < found["mean"] < 0.3 and 0.45 < found["privacy_002"]["mean"] < 0.6  # guessing the mean: ~0.5
        # appended after the built-in attacks, it draws after them: their figures stay as they were
        assert {k: v for k, v in privacy[party]["attacks"].items() if k != "mean_imputation"} == \
            before[party]["attacks"]
    page = run_page(run.report, {})
    assert page.count("mean imputation") == 2 and "a baseline" in page

    # ppc run: parties in their own processes, the observer here
    seen.clear()
    assert ppc_main(["run", str(write_scenario(tmp_path, TOML)), "--out", str(tmp_path / "run"), "--quiet",
                     "--known-draws", "4"]) == 0
    written = json.loads((tmp_path / "run" / "report.json").read_text())["privacy"]
    for _, party, expected in seen:
        assert written[party]["attacks"]["mean_imputation"]["mean"] == pytest.approx(expected, rel=1e-12)
    assert len(seen) == 2

    seen.clear()
    rows, table = swept(tmp_path, Settings(known_draws=4))
    for row, read in zip(rows, table):
        expected = np.mean([e for seed, _, e in seen if seed == row["seed"]])
        assert row["privacy_mean_imputation_mean"] == pytest.approx(expected, rel=1e-12)
        assert float(read["privacy_mean_imputation_mean"]) == pytest.approx(expected, rel=1e-12)
        assert read["privacy_002_mean_imputation_mean"] and read["mean_imputation_vd"]


def test_a_new_agreement_measure_is_one_registry_line(tmp_path, monkeypatch):
    """scikit-learn's Fowlkes-Mallows index beside the built-in measures."""
    given: list[float] = []

    def fmi(reference: np.ndarray, labels: np.ndarray) -> float:
        given.append(float(fowlkes_mallows_score(reference, labels)))
        return given[-1]

    monkeypatch.setitem(AGREEMENT, "fmi", AgreementMetric(
        fmi, identical=1.0, plain="FMI", term="FMI (Fowlkes-Mallows index)",
        meaning="Geometric mean of the pairwise precision and recall of the two clusterings: 1 identical.",
        source="Fowlkes &amp; Mallows (1983), computed by scikit-learn"))

    run = ppcsim.api.simulate(SCENARIO, attacks=False)
    u = run.report["utility"]
    truth = true_labels(run.scenario, run.ids)
    assert u["vs_original"]["fmi"] == fowlkes_mallows_score(run.plain_labels, run.labels)
    assert u["vs_truth"]["fmi"] == fowlkes_mallows_score(truth, run.labels)
    assert u["original_vs_truth"]["fmi"] == fowlkes_mallows_score(truth, run.plain_labels)
    assert list(u["vs_original"]) == ["misclassification", "ari", "nmi", "variation_of_information", "f_measure", "fmi"]
    page = run_page(run.report, {})
    assert "<th>FMI</th>" in page and "ARI, NMI, F-measure and FMI: 1 is identical" in page
    assert ">FMI (Fowlkes-Mallows index)<" in page

    given.clear()
    rows, table = swept(tmp_path, Settings(attacks=False))
    assert len(rows) == 2 and list(table[0])[list(table[0]).index("f_measure") + 1] == "fmi"
    for row, read in zip(rows, table):
        assert row["fmi"] in given and float(read["fmi"]) == row["fmi"]


def test_a_new_privacy_metric_is_one_registry_line(tmp_path, monkeypatch):
    """The RMSE of the estimate, in every attack's scores, in what was sent and in the sweep's columns."""

    def rmse(original: np.ndarray, estimate: np.ndarray) -> float:
        return float(np.sqrt(np.mean((original - estimate) ** 2)))

    monkeypatch.setitem(PRIVACY_METRICS, "rmse", PrivacyMetric(
        rmse, plain="RMSE", source="root mean squared error", term="RMSE",
        meaning="Root mean squared error of the estimate, in normalised units."))

    run = ppcsim.api.simulate(SCENARIO)
    a, b = (run.report["privacy"][p] for p in ("a", "b"))
    assert set(a["attacks"]) == {"known_io", "known_io_forward", "ica", "multilateration", "known_io_002", "naive",
                                 "pca_known_sample"}
    assert set(b["attacks"]) == {"multilateration"}
    ica = run.attacks["a"]["ica"]  # the one ICA estimate, kept beside the truth it was scored against
    assert a["attacks"]["ica"]["rmse"] == rmse(ica["original"], ica["estimate"]) > 0.1
    for found in (a["attacks"]["known_io"], a["attacks"]["known_io_forward"], a["attacks"]["known_io_002"],
                  a["attacks"]["multilateration"], b["attacks"]["multilateration"]):
        assert found["rmse"] < 1e-9  # a rotation and exact distances are recovered from n + 1 known records
    assert a["sent_distortion"]["rmse"] == rmse(run.original["a"], run.sent["a"]["data"])
    assert a["attacks"]["naive"]["rmse"] == a["sent_distortion"]["rmse"]  # the naive estimate is what was sent
    page = run_page(run.report, {})
    assert ">RMSE<" in page and "<th>VD</th><th>CM</th><th>CCA</th><th>RMSE</th>" in page  # a column, last
    known = a["attacks"]["known_io"]  # an averaged attack: median and interquartile range beside the mean
    assert f"{known['median']['mean']:.4g} [{known['iqr']['mean']:.4g}], {known['draws']}" in page

    rows, table = swept(tmp_path, Settings(known_draws=4))
    for read in table:
        assert float(read["ica_rmse"]) > 0.1 and float(read["known_io_rmse"]) < 1e-9 and float(read["sent_rmse"]) > 0
        assert float(read["multilateration_rmse"]) < 1e-9
        assert float(read["privacy_known_io_median"]) >= 0 and float(read["privacy_known_io_iqr"]) >= 0
        assert "privacy_ica_median" not in read  # one estimate, not averaged over draws: no run has the column


def test_the_registries_keep_the_report_s_names_and_order():
    """The order is the report's key order and the order in which a party's attacks draw from its generator."""
    assert list(ATTACKS) == ["known_io", "known_io_forward", "ica", "multilateration", "multilateration_nmds",
                             "known_io_002", "naive", "pca_known_sample"]
    assert list(AGREEMENT) == ["misclassification", "ari", "nmi", "variation_of_information", "f_measure"]
    assert list(PRIVACY_METRICS) == ["column_privacy", "privacy_002", "vd", "rp", "rm", "cp", "ck", "cm", "cca",
                                     "knnm", "knnm_neighbours"]
    assert [n for n, m in PRIVACY_METRICS.items() if m.first_draw_only] == ["rp", "rm", "cp", "ck", "knnm",
                                                                             "knnm_neighbours"]
    assert {m.direction for m in AGREEMENT.values()} == {"1 is identical", "0 is identical"}
