"""A protocol registered by a plug-in module alone (column_sums.py beside this file) runs end to end: a real
coordinator process and one process per party, over gRPC, each loading the module from ``PPC_PLUGINS``; no file
of the project names it."""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_wine

from conftest import ROOT, by_hand, party_table, write_scenario

HERE = Path(__file__).resolve().parent
COLUMNS = {"a": ["alcohol", "malic_acid", "ash"], "b": ["magnesium", "hue"], "c": ["proline", "flavanoids"]}

pytestmark = pytest.mark.processes


@pytest.fixture
def plugin(monkeypatch):
    """The plug-in named for this process's children (and so for every ppc process they start)."""
    monkeypatch.setenv("PPC_PLUGINS", "column_sums")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    sys.path.insert(0, str(HERE))
    yield
    sys.path.remove(str(HERE))


def expected_labels(k: int) -> np.ndarray:
    """What the toy protocol must give, computed here from the data: every party z-scores its columns (ddof 0,
    ppc's default normalisation), sums them per record; the totals are added and binned by rank."""
    frame = load_wine(as_frame=True).frame
    total = np.zeros(len(frame))
    for columns in COLUMNS.values():
        x = frame[columns].to_numpy(dtype=np.float64)
        total += ((x - x.mean(axis=0)) / x.std(axis=0)).sum(axis=1)
    ranks = np.argsort(np.argsort(total, kind="stable"), kind="stable")
    return ranks * k // len(total)


def test_a_protocol_registered_by_a_plugin_runs_through_real_processes(tmp_path, plugin):
    path = write_scenario(tmp_path, parties=[party_table(p, c, method=None) for p, c in COLUMNS.items()],
                          clustering={"protocol": "column_sums", "n_clusters": 3},
                          security={"ids": "plain", "tls": False})
    by_hand(path, tmp_path, list(COLUMNS))
    want = expected_labels(3)
    for party in COLUMNS:
        with open(tmp_path / f"{party}.csv", newline="") as f:
            rows = list(csv.DictReader(f))  # id,cluster in the party's row order (sklearn:wine's ids: row numbers)
        assert [int(r["id"]) for r in rows] == list(range(178))
        got = np.array([int(r["cluster"]) for r in rows])
        np.testing.assert_array_equal(got, want)
    assert np.bincount(want).tolist() == [60, 59, 59]


def test_without_the_plugin_the_protocol_is_refused_naming_the_known_ones(tmp_path):
    from conftest import run_ppc

    path = write_scenario(tmp_path, parties=[party_table(p, c, method=None) for p, c in COLUMNS.items()],
                          clustering={"protocol": "column_sums"}, security={"ids": "plain", "tls": False})
    done = run_ppc("run", path, "--out", tmp_path / "out")
    assert done.returncode != 0
    assert "column_sums" in done.stderr and "upload, secure_aggregation, mpc" in done.stderr, done.stderr
