"""Data as people have it: a CSV without a header row or an id column, with missing cells refused or handled
by the declared rule (``parties.missing``), never coded as a category of their own."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import load_wine

from conftest import WINE, assert_same_partition, kmeans, party_table, read_report, run_ppc, write_scenario
from parties.errors import PartyError
from parties.sources import load_party_data
from ppcsim.scenario.load import ScenarioError, load_scenario

NAMES = ["id", "x", "y", "colour"]
ROWS = [["r1", "1", "10", "red"], ["r2", "?", "20", "blue"], ["r3", "3", "", "red"], ["r4", "5", "40", "?"],
        ["r5", "7", "20", "blue"]]


def scenario(tmp_path, header: bool = True, party: dict | None = None, **data):
    """A header-less or headed CSV of ROWS, split between a (x, colour as osbr's nominal column) and b (y)."""
    lines = ([NAMES] if header else []) + ROWS
    (tmp_path / "t.csv").write_text("".join(",".join(r) + "\n" for r in lines))
    parties = [party_table("a", ["x", "colour"], "osbr", metric="gower", categorical=["colour"]),
               party or party_table("b", ["y"], "osbr", metric="gower")]
    return write_scenario(tmp_path, name="t", parties=parties, data={"source": "t.csv", **data},
                          clustering={"algorithm": "agglomerative", "n_clusters": 2})


def loaded(path, name: str):
    cfg = next(p for p in load_scenario(path).parties if p.name == name)
    return load_party_data(cfg)


def test_a_missing_cell_is_refused_naming_file_column_line_and_count(tmp_path):
    path = scenario(tmp_path, id_column="id")
    with pytest.raises(PartyError) as err:
        loaded(path, "a")
    assert str(err.value) == (f"{(tmp_path / 't.csv').resolve()}, column 'x', line 3: a missing value ('?'; 1 of 5 "
                              "cells of the column are missing); declare missing = \"drop\", \"mean\" or \"mode\" (in "
                              "[data], or in the party's table beside its own file)")
    with pytest.raises(PartyError, match="column 'y', line 4: a missing value \\(''; 1 of 5"):
        loaded(path, "b")
    # a nominal column's '?' is missing too, not a category: header-less, the line is the record's own
    path = scenario(tmp_path, header=False, column_names=NAMES, id_column="id", missing="refuse")
    with pytest.raises(PartyError, match="column 'x', line 2: a missing value"):
        loaded(path, "a")


def test_drop_mean_and_mode(tmp_path):
    a = loaded(scenario(tmp_path, id_column="id", missing="drop"), "a")
    assert a.ids.tolist() == ["r1", "r3", "r5"]  # r2 (x) and r4 (colour) dropped; the join drops them for b
    np.testing.assert_array_equal(a.X, [[1, 1], [3, 1], [7, 0]])  # colour coded on what is kept: blue 0, red 1
    a = loaded(scenario(tmp_path, id_column="id", missing="mode"), "a")
    # x: 1, 3, 5, 7 once each, the smallest; colour: red and blue twice each, blue (first); then blue 0, red 1
    np.testing.assert_array_equal(a.X, [[1, 1], [1, 0], [3, 1], [5, 0], [7, 0]])
    b = loaded(scenario(tmp_path, id_column="id", missing="mean"), "b")
    np.testing.assert_array_equal(b.X[:, 0], [10, 20, 22.5, 40, 20])
    b = loaded(scenario(tmp_path, id_column="id", missing="mode"), "b")
    np.testing.assert_array_equal(b.X[:, 0], [10, 20, 20, 40, 20])
    with pytest.raises(PartyError, match="column 'colour': missing = \"mean\" cannot fill a text column"):
        loaded(scenario(tmp_path, id_column="id", missing="mean"), "a")


def test_a_headerless_file_and_row_numbers(tmp_path):
    path = scenario(tmp_path, header=False, column_names=NAMES, missing="drop")
    a, b = loaded(path, "a"), loaded(path, "b")
    assert a.ids.tolist() == [0, 2, 4] and b.ids.tolist() == [0, 1, 3, 4]
    np.testing.assert_array_equal(b.X[:, 0], [10, 20, 40, 20])


def test_what_cannot_be_read_is_refused_before_anything_starts(tmp_path):
    path = scenario(tmp_path, header=False, column_names=["id", "x", "y", "x"], missing="ignore")
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert err.value.errors[:2] == ["[data]: 'missing' must be one of refuse, drop, mean, mode, got 'ignore'",
                                    "[data]: 'column_names' lists 'x' more than once"]
    # every problem in one pass: the party's columns are checked against the names given too
    assert err.value.errors[2:] == [f"[[parties]] 'a': no column 'colour' in {(tmp_path / 't.csv').resolve()} "
                                    "(known: id, x, y, x)"]
    path = scenario(tmp_path, header=False, column_names=["id", "x", "yy", "colour"])
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert err.value.errors[0].startswith(f"[[parties]] 'b': no column 'y' in {(tmp_path / 't.csv').resolve()} "
                                          "(known: id, x, yy, colour; did you mean 'yy'?")
    (tmp_path / "own.csv").write_text("key,z\nr1,1\n")
    path = scenario(tmp_path, party={**party_table("b", ["z"], "osbr", metric="gower"), "data": "own.csv", "id_column": "key"})
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert err.value.errors == [f"[data]: a read {(tmp_path / 't.csv').resolve()} without an 'id_column' (records "
                                "by row number), which cannot be joined with the ids of b; give [data] an 'id_column'"]
    path = scenario(tmp_path, id_column="id", party={**party_table("b", ["z"], "osbr", metric="gower"), "data": "own.csv"})
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert err.value.errors == [f"[[parties]] 'b': 'id_column' is needed for the CSV {(tmp_path / 'own.csv').resolve()}"
                                ": its records are joined with the other parties' by id"]


def test_a_headerless_file_with_missing_cells_runs_end_to_end_by_row_number(tmp_path):
    """Wine as a header-less CSV with no id column and three '?' cells, filled with their column's mean:
    labels.csv by row number, the partition scikit-learn's on the same filled, z-scored columns."""
    wine = load_wine()
    X = wine.data.copy()
    cells = [[repr(float(v)) for v in row] + [str(t)] for row, t in zip(X, wine.target)]
    for r, c in ((3, 0), (50, 6), (120, 12)):
        cells[r][c] = "?"
        X[r, c] = np.delete(X[:, c], r).mean()
    (tmp_path / "wine.csv").write_text("".join(",".join(r) + "\n" for r in cells))
    path = write_scenario(tmp_path, name="wine-headerless", seed=3, clustering=kmeans(3),
                          parties=[party_table("a", WINE[:7]), party_table("b", WINE[7:])],
                          data={"source": "wine.csv", "column_names": [*WINE, "target"], "missing": "mean",
                                "label_column": "target"})
    proc = run_ppc("run", path, "--out", tmp_path / "out", "--quiet", "--no-attacks")
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "out" / "labels.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["id"] for r in rows] == [str(i) for i in range(178)]
    Z = (X - X.mean(0)) / X.std(0, ddof=1)
    report = read_report(tmp_path / "out")
    expected = KMeans(n_clusters=3, n_init=10, random_state=report["clustering"]["seed"]).fit_predict(Z)
    assert_same_partition(np.array([int(r["cluster"]) for r in rows]), expected)
    assert report["utility"]["vs_truth"]["ari"] > 0.8
