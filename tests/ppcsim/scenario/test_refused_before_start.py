"""Mistakes refused before anything starts, by the role that holds the information.

The observer (``ppc run``'s loader) reads every party's data header and every
party's declared method, so a misspelt ``label_column`` or ``id_column`` in a
party's own file, and ``osbr`` with ``kmeans``, are refused before a process
starts; a party started by hand checks its own file before it joins. Each
message names the table, the field and, when one is close, the name meant.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import free_port, run_ppc
from ppcsim.scenario.load import ScenarioError, load_scenario
from protos.schema import closest, unknown


def write(tmp: Path, text: str) -> Path:
    """A scenario beside two CSVs: the shared table (id, x1..x3, target) and b's own file (wid, y1, y2)."""
    rows = [(f"r{i}", i, (i * 7) % 5, (i * 3) % 4, i % 2) for i in range(8)]
    (tmp / "shared.csv").write_text("id,x1,x2,x3,target\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    (tmp / "own.csv").write_text("wid,y1,y2\n" + "".join(f"r{i},{i % 3},{i * i % 7}\n" for i in range(8)))
    path = tmp / "s.toml"
    path.write_text(text)
    return path


BASE = """
name = "early"
[data]
source = "shared.csv"
id_column = "id"
label_column = "target"
[[parties]]
name = "a"
columns = ["x1", "x2", "x3"]
method = "drbt"
k = 2
[[parties]]
name = "b"
data = "own.csv"
id_column = "wid"
columns = ["y1", "y2"]
method = "none"
[clustering]
algorithm = "kmeans"
n_clusters = 2
"""


def errors(path: Path, role: str = "observer", party: str | None = None) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path, role, party)
    return info.value.errors


def test_the_valid_scenario_loads_in_every_role(tmp_path):
    path = write(tmp_path, BASE)
    assert [p.name for p in load_scenario(path).parties] == ["a", "b"]
    load_scenario(path, "coordinator")
    for name in ("a", "b"):
        load_scenario(path, "party", name)


def test_a_misspelt_label_column_beside_a_party_s_own_file_names_the_field(tmp_path):
    path = write(tmp_path, BASE.replace('label_column = "target"', 'label_column = "targte"'))
    assert errors(path) == [f"[data]: 'label_column' names no column 'targte' in {(tmp_path / 'shared.csv').resolve()} "
                            "(known: id, x1, x2, x3, target; did you mean 'target'?)"]
    load_scenario(path, "party", "a")  # a party never reads the labels: not its mistake to find


def test_a_wrong_id_column_in_a_party_s_own_file_is_refused_by_the_observer_and_by_that_party(tmp_path):
    path = write(tmp_path, BASE.replace('id_column = "wid"', 'id_column = "wdi"'))
    expected = (f"[[parties]] 'b': 'id_column' names no column 'wdi' in {(tmp_path / 'own.csv').resolve()} "
                "(known: wid, y1, y2; did you mean 'wid'?)")
    assert errors(path) == [expected]
    assert errors(path, "party", "b") == [expected]
    load_scenario(path, "party", "a")  # the other party's file is not a's to read


def test_a_wrong_id_column_of_the_shared_table_names_data(tmp_path):
    path = write(tmp_path, BASE.replace('id_column = "id"', 'id_column = "ID"'))
    assert errors(path) == [f"[data]: 'id_column' names no column 'ID' in {(tmp_path / 'shared.csv').resolve()} "
                            "(known: id, x1, x2, x3, target; did you mean 'id'?)"]


def test_osbr_with_kmeans_is_refused_by_the_observer_and_the_coordinator(tmp_path):
    path = write(tmp_path, BASE.replace('method = "drbt"\nk = 2', 'method = "osbr"').replace(
        'method = "none"', 'method = "osbr"'))
    expected = ['[clustering]: kmeans needs feature data, but the parties sent dissimilarities (osbr); '
                'use algorithm = "agglomerative" or "dbscan"']
    assert errors(path) == expected
    assert errors(path, "coordinator") == expected
    # asking the coordinator for an embedding gives it features to cluster
    nmds = path.read_text().replace('method = "osbr"', 'method = "osbr-nmds"\ndims = 2')
    path.write_text(nmds)
    load_scenario(path)


def test_dissimilarities_that_cannot_be_combined_are_refused_at_load(tmp_path):
    mixed = BASE.replace('method = "drbt"\nk = 2', 'method = "osbr"\nmetric = "gower"').replace(
        'algorithm = "kmeans"', 'algorithm = "agglomerative"')
    path = write(tmp_path, mixed)
    assert errors(path) == ["parties b send features, which combine exactly only with Euclidean dissimilarities, "
                            "not 'gower' (a)"]
    path.write_text(mixed.replace('method = "none"', 'method = "osbr"'))
    assert errors(path) == ["dissimilarity parties must use one metric to be combined (a: gower, b: euclidean)"]


def test_columns_given_as_a_string_is_one_error(tmp_path):
    path = write(tmp_path, BASE.replace('columns = ["y1", "y2"]', 'columns = "d"'))
    assert errors(path) == ["[[parties]] 'b': 'columns' must be a list of column names, got 'd'"]


def test_a_misspelt_method_key_is_named_with_its_suggestion(tmp_path):
    path = write(tmp_path, BASE.replace('method = "none"', 'metod = "none"'))
    found = errors(path)
    assert found[0].startswith("[[parties]] 'b': unknown field 'metod' (known: name, data, ")
    assert found[0].endswith("did you mean 'method'?)")
    assert found[1].startswith("[[parties]] 'b': 'method' is missing")


def test_a_typo_in_case_only_is_suggested():
    assert closest("J", ["h", "j", "k"]) == "j"
    assert closest("Alcohol", ["ash", "alcohol"]) == "alcohol"
    assert closest("hh", ["h", "j"]) == "h"
    assert closest("zzz", ["h", "j"]) is None
    assert unknown("N_clusters", ["n_clusters", "eps"]).endswith("did you mean 'n_clusters'?)")


def test_ppc_run_refuses_before_any_process_starts(tmp_path):
    path = write(tmp_path, BASE.replace('label_column = "target"', 'label_column = "lable"'))
    t0 = time.monotonic()
    proc = run_ppc("run", path, "--out", tmp_path / "out", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and time.monotonic() - t0 < 15, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "[data]: 'label_column' names no column 'lable'" in proc.stderr
    assert "measuring" not in proc.stdout + proc.stderr and "joined" not in proc.stdout + proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_party_started_by_hand_checks_its_own_file_before_it_joins(tmp_path):
    path = write(tmp_path, BASE.replace('id_column = "wid"', 'id_column = "wdi"'))
    port = free_port()  # nobody listens there: the party must fail before it tries to join
    t0 = time.monotonic()
    proc = run_ppc("party", "--coordinator", f"127.0.0.1:{port}", "--scenario", path, "--party", "b",
                   cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and time.monotonic() - t0 < 15, proc.stderr
    assert "'id_column' names no column 'wdi'" in proc.stderr and "did you mean 'wid'?" in proc.stderr
    assert "Traceback" not in proc.stderr
