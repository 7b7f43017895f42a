"""Mixed consortia and non-metric MDS at the coordinator, through the in-process path."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from conftest import write_scenario
from coordinator.summary import summarise
from ppcsim.report.outputs import build
from ppcsim.run.inprocess import simulate
from ppcsim.run.observer import Settings, evaluate
from ppcsim.scenario.load import ScenarioError, load_scenario

IRIS = """
    name = "mix"
    seed = 2
    [data]
    source = "sklearn:iris"
    label_column = "target"
    [[parties]]
    name = "a"
    columns = ["sepal length (cm)", "sepal width (cm)"]
    {a}
    [[parties]]
    name = "b"
    columns = ["petal length (cm)", "petal width (cm)"]
    {b}
    [clustering]
    {clustering}
"""


def run(tmp_path, a: str, b: str, clustering: str):
    scenario = load_scenario(write_scenario(tmp_path, IRIS.format(a=a, b=b, clustering=clustering)))
    session, own = simulate(scenario)
    return scenario, session, own


def test_features_beside_osbr_cluster_the_exact_joined_distances(tmp_path):
    """A 'none' party and an 'osbr' party: the coordinator's matrix is the joined data's Euclidean distances."""
    scenario, session, own = run(tmp_path, 'method = "none"', 'method = "osbr"',
                                 'algorithm = "agglomerative"\nlinkage = "complete"\nn_clusters = 3')
    outcome = session.wait(0)
    joined = np.hstack([own["a"].X, own["b"].X])
    np.testing.assert_allclose(outcome.combined.dissimilarity, pdist(joined), rtol=1e-12)
    report = build(scenario, summarise(session))
    assert "features of a turned into squared distances at the coordinator" in report["clustering"]["input"]
    assert [p["sends"] for p in report["parties"]] == ["features", "dissimilarities"]
    measured = evaluate(scenario, outcome, session.contributions, Settings(attacks=False), own=own)
    assert measured["utility"]["stress"] < 1e-12
    assert measured["utility"]["vs_original"]["ari"] == 1.0


def test_drbt_beside_osbr_is_refused_for_kmeans(tmp_path):
    # known from the methods alone: refused when the scenario is read, before any party starts
    with pytest.raises(ScenarioError, match="kmeans needs feature data"):
        run(tmp_path, 'method = "drbt"\nk = 1', 'method = "osbr"', 'algorithm = "kmeans"\nn_clusters = 3')


def test_nmds_embeds_at_the_coordinator_and_allows_kmeans(tmp_path):
    nmds = 'method = "osbr-nmds"\ndims = 2\nn_init = 1'
    scenario, session, own = run(tmp_path, nmds, nmds, 'algorithm = "kmeans"\nn_clusters = 3')
    outcome = session.wait(0)
    embedding = outcome.combined.embedding
    assert embedding["embedding"] == "nmds" and embedding["dims"] == 2
    assert embedding["runs_at"] == "coordinator, on the joined dissimilarities"
    assert 0 < embedding["kruskal_stress_1"] < 0.2
    assert outcome.combined.features.shape == (150, 2)
    # each party sent what osbr sends: its squared distances
    assert set(session.contributions["a"].arrays) == {"sqdist"}
    measured = evaluate(scenario, outcome, session.contributions, Settings(attacks=False), own=own)
    # the embedding keeps the rank order of iris' 4-D distances well in 2-D
    assert measured["utility"]["stress"] < 0.2 and measured["utility"]["vs_original"]["ari"] > 0.8


def test_parties_must_ask_for_the_same_embedding(tmp_path):
    with pytest.raises(ScenarioError, match="ask for different embeddings"):
        run(tmp_path, 'method = "osbr-nmds"\ndims = 2\nn_init = 1', 'method = "osbr-nmds"\ndims = 3\nn_init = 1',
            'algorithm = "kmeans"\nn_clusters = 3')


def _wine_nmds(tmp_path, extra: str = ""):
    from sklearn.datasets import load_wine

    columns = ", ".join(f'"{c}"' for c in load_wine().feature_names)
    text = f"""
        name = "wine-nmds"
        seed = 1
        [data]
        source = "sklearn:wine"
        label_column = "target"
        [[parties]]
        name = "all"
        columns = [{columns}]
        method = "osbr-nmds"
        dims = 12
        {extra}
        [clustering]
        algorithm = "kmeans"
        n_clusters = 3
    """
    scenario = load_scenario(write_scenario(tmp_path, text))
    session, own = simulate(scenario)
    return scenario, session, own


def test_nmds_from_the_classical_start_converges_on_wine(tmp_path):
    """000 §5.2.3.1 starts NMDS from classical scaling: wine's 13 columns in 12 dims fit almost exactly."""
    scenario, session, own = _wine_nmds(tmp_path)
    outcome = session.wait(0)
    info = outcome.combined.embedding
    assert info["init"] == "classical" and info["converged"]
    assert info["kruskal_stress_1"] < 0.01
    assert "warning" not in info
    # the observer's neighbourhood preservation of that embedding (000 eq. 5.21) is close to 1
    measured = evaluate(scenario, outcome, session.contributions, Settings(attacks=False), own=own)
    assert measured["utility"]["stress"] < 0.05


def test_nmds_warns_when_stress_is_poor():
    from coordinator.combine import Combined
    from coordinator.embed import POOR_STRESS, nmds

    X = np.random.default_rng(0).normal(size=(60, 10))
    out = nmds(Combined(dissimilarity=pdist(X), description="noise"), {"dims": "1", "init": "classical",
                                                                         "max_iter": "300"}, seed=0)
    assert out.embedding["kruskal_stress_1"] > POOR_STRESS
    assert "above 0.2" in out.embedding["warning"]


def test_run_writes_what_was_clustered(tmp_path):
    from ppcsim.report.outputs import summary_table, write_outputs

    scenario, session, own = run(tmp_path, 'method = "osbr-nmds"\ndims = 1', 'method = "osbr-nmds"\ndims = 1',
                                 'algorithm = "kmeans"\nn_clusters = 3')
    outcome = session.wait(0)
    report = build(scenario, summarise(session))
    write_outputs(tmp_path / "out", report, session.outcome, session.contributions)
    with np.load(tmp_path / "out" / "clustered.npz") as f:
        np.testing.assert_array_equal(f["features"], outcome.combined.features)
        assert f["ids"].shape == (150,) and f["features"].shape == (150, 1)
    warned = "warning: nmds stress-1" in summary_table(report)
    assert warned == (outcome.combined.embedding["kruskal_stress_1"] > 0.2)


def _stress_1_by_hand(delta: np.ndarray, Y: np.ndarray) -> float:
    """000 eq. 3.12 written out: disparities by pool-adjacent-violators on the dissimilarities' order."""
    d = pdist(Y)
    order = np.argsort(delta, kind="stable")
    blocks: list[list[float]] = []  # [sum, count] of each pooled block, in the dissimilarities' order
    for value in d[order]:
        blocks.append([value, 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            total, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
    dhat = np.empty_like(d)
    dhat[order] = np.concatenate([np.full(int(c), s / c) for s, c in blocks])
    return float(np.sqrt(np.sum((d - dhat) ** 2) / np.sum(d**2)))


@pytest.mark.parametrize("name, eq_3_12, smacof", [("wine", 0.315, 0.332), ("breast_cancer", 0.240, 0.248)])
def test_nmds_reports_stress_1_of_its_final_configuration(name, eq_3_12, smacof):
    """000 eq. 3.12 on the embedding itself, beside scikit-learn's SMACOF figure (previous iteration's disparities)."""
    from coordinator.combine import Combined
    from coordinator.embed import nmds
    from parties.data import load_builtin

    _, X, _ = load_builtin(name)
    X = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    delta = pdist(X)
    out = nmds(Combined(dissimilarity=delta, description=name), {"dims": "1", "init": "classical",
                                                                 "max_iter": "300"}, seed=0)
    info = out.embedding
    assert info["kruskal_stress_1"] == pytest.approx(_stress_1_by_hand(delta, out.features), rel=1e-9)
    assert info["kruskal_stress_1"] == pytest.approx(eq_3_12, abs=0.001)
    assert info["smacof_stress"] == pytest.approx(smacof, abs=0.001)
    assert info["smacof_stress"] > info["kruskal_stress_1"]
    assert f"stress-1 {info['kruskal_stress_1']:.4f}" in out.description and "warning" in info  # eq. 3.12 is above 0.2
