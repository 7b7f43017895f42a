"""Mistakes refused before anything starts, by the role that holds the information.

The observer (``ppc run``'s loader) reads every party's data header and every
party's declared method, so a misspelt ``label_column`` or ``id_column`` in a
party's own file, and ``osbr`` with ``kmeans``, are refused before a process
starts; a party started by hand checks its own file before it joins. Each
message names the table, the field and, when one is close, the name meant.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import free_port, run_ppc
from ppcsim.scenario.load import ScenarioError, load_scenario
from protos.extras import EXTRAS, Extra, missing
from protos.schema import closest, unknown

BUNDLED_MPC = Path(__file__).resolve().parents[3] / "scenarios" / "wine-mpc.toml"


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
    assert proc.returncode == 2 and time.monotonic() - t0 < 60, proc.stderr  # no run was waited for (a run takes longer)
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
    assert proc.returncode == 2 and time.monotonic() - t0 < 60, proc.stderr  # no run was waited for (a run takes longer)
    assert "'id_column' names no column 'wdi'" in proc.stderr and "did you mean 'wid'?" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_mpc_scenario_without_mpyc_is_refused_before_anything_starts_naming_the_extra(tmp_path):
    """``sys.modules['mpyc'] = None`` is an environment where ``import mpyc`` fails: ``ppc run`` must say so, with
    the install line, before the coordinator or a party starts (no output folder, no party log)."""
    program = ("import sys; sys.modules['mpyc'] = None; from ppcsim.cli.parser import main; "
               f"sys.exit(main(['run', {str(BUNDLED_MPC)!r}, '--out', {str(tmp_path / 'out')!r}]))")
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "protocol = \"mpc\" needs the package 'mpyc'" in proc.stderr
    assert "pip install 'ppc-sim[mpc]'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out" / "logs").exists()


def test_missing_names_the_extra_only_when_its_module_cannot_be_imported(monkeypatch):
    assert missing("mpc") is None  # the test extra installs mpyc
    monkeypatch.setitem(EXTRAS, "mpc", Extra("no_such_module_here", "mpc", 'protocol = "mpc"'))
    assert missing("mpc") == ("protocol = \"mpc\" needs the package 'no_such_module_here', which is not installed "
                              "in this Python environment; install it with: pip install 'ppc-sim[mpc]' (from a "
                              "checkout: pip install -e '.[mpc]')")


def test_every_problem_across_stages_comes_in_one_pass_each_with_the_name_meant(tmp_path):
    """A method misspelt, a bad parameter, a column misspelt and an algorithm misspelt: four problems that used to
    come one run at a time (the column check waited for the rest to be right) are listed together."""
    path = write(tmp_path, BASE.replace('columns = ["x1", "x2", "x3"]\nmethod = "drbt"\nk = 2',
                                        'columns = ["x1", "x22", "x3"]\nmethod = "drbtt"')
                 .replace('columns = ["y1", "y2"]\nmethod = "none"', 'columns = ["y1", "y2"]\nmethod = "drbt"\nk = 0')
                 .replace('algorithm = "kmeans"', 'algorithm = "kmean"'))
    found = errors(path)
    assert len(found) == 4, found
    assert "unknown method 'drbtt'" in found[0] and "did you mean 'drbt'?" in found[0]
    assert "'k' must be at least 1, got 0" in found[1]
    assert "no column 'x22'" in found[2] and "did you mean 'x2'?" in found[2]
    assert found[3] == ("[clustering]: 'algorithm' must be one of kmeans, agglomerative, dbscan, got 'kmean' "
                        "(did you mean 'kmeans'?)")


def test_a_party_by_hand_is_told_the_closest_column_of_a_built_in_set_as_ppc_run_is(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('[data]\nsource = "sklearn:wine"\n[[parties]]\nname = "a"\ncolumns = ["flavonoids", "hue"]\n'
                    'method = "none"\n[[parties]]\nname = "b"\ncolumns = ["ash"]\nmethod = "none"\n')
    expected = errors(path)
    assert errors(path, "party", "a") == expected
    assert expected[0].startswith("[[parties]] 'a': no column 'flavonoids' in sklearn:wine (known: alcohol, ")
    assert expected[0].endswith("did you mean 'flavanoids'?)")
    proc = run_ppc("party", "--coordinator", f"127.0.0.1:{free_port()}", "--scenario", path, "--party", "a",
                   cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert expected[0] in proc.stderr


def test_osbr_column_kinds_outside_gower_are_refused_at_load_with_the_fix(tmp_path):
    """``categorical`` with ``jaccard`` (as a header-less nominal file such as UCI's chess invites) used to pass the
    loader and stop the party process once the coordinator had started; it is now one of the listed problems."""
    path = write(tmp_path, BASE.replace('method = "drbt"\nk = 2',
                                        'method = "osbr"\nmetric = "jaccard"\ncategorical = ["x1", "x9"]')
                 .replace('algorithm = "kmeans"', 'algorithm = "agglomerative"')
                 .replace('method = "none"', 'method = "osbr"\nmetric = "jaccard"'))
    expected = ["[[parties]] 'a': 'categorical' applies to metric 'gower' only (004 eq. 5), not 'jaccard': set "
                "metric = \"gower\" for nominal or asymmetric binary columns (eq. 4, 'jaccard', reads 0/1 columns only)"]
    assert errors(path) == expected
    assert errors(path, "party", "a") == expected
    gower = path.read_text().replace('metric = "jaccard"\ncategorical', 'metric = "gower"\ncategorical', 1)
    path.write_text(gower.replace('metric = "jaccard"', 'metric = "gower"'))
    assert errors(path) == ["[[parties]] 'a': 'categorical' names x9, which are not among the party's columns"]
    path.write_text(gower.replace('metric = "jaccard"', 'metric = "gower"').replace('"x1", "x9"', '"x1"'))
    load_scenario(path)
