"""``ppc run``'s progress names the step the coordinator is at once every upload is in, and a long step without
rounds is not silent: an embedding by non-metric MDS (``osbr-nmds``) used to run for a minute under "joining them and
clustering"."""

from __future__ import annotations

import io
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import party_table, run_ppc, write_scenario
from coordinator.session import CLUSTERING
from coordinator.types import Contribution
from ppcsim.run import launcher

IRIS = (("sepal length (cm)", "sepal width (cm)"), ("petal length (cm)", "petal width (cm)"))


def _session(contributions, algorithm="kmeans"):
    clustering = SimpleNamespace(protocol="upload", algorithm=algorithm, n_clusters=3, eps=0.5)
    return SimpleNamespace(party_status=lambda: [], state=CLUSTERING, spec=SimpleNamespace(clustering=clustering),
                           contributions=contributions, arbiter=None)


def _nmds(party: str, dims: str = "2") -> Contribution:
    return Contribution(party=party, method="osbr-nmds", params={"embed": "nmds", "dims": dims},
                        ids=np.arange(3), arrays={"sqdist": np.zeros(3)}, is_dissimilarity=True)


def test_a_long_step_without_rounds_says_what_it_is_and_for_how_long(monkeypatch):
    clock = iter([0.0, 0.0, 1.0, 11.0, 12.0, 21.4])
    monkeypatch.setattr(launcher.time, "monotonic", lambda: next(clock))
    log = io.StringIO()
    progress = launcher.Progress(_session({"a": _nmds("a"), "b": _nmds("b")}), log)
    for _ in range(4):
        progress.update()
    doing = "joining them, embedding them by non-metric MDS in 2 dims (000 ch. 3) and clustering (kmeans, 3 clusters)"
    assert log.getvalue().splitlines() == [f"ppc: all uploads in; {doing}", f"ppc: still {doing}: 11 s so far",
                                           f"ppc: still {doing}: 21 s so far"]


def test_a_session_without_an_embedding_names_none():
    log = io.StringIO()
    launcher.Progress(_session({}, "dbscan"), log).update()
    assert log.getvalue() == "ppc: all uploads in; joining them and clustering (dbscan, eps 0.5)\n"


@pytest.mark.processes
def test_ppc_run_names_the_coordinator_s_embedding(tmp_path):
    path = write_scenario(tmp_path, name="embed", data="sklearn:iris",
                          parties=[party_table("a", IRIS[0], "osbr-nmds", dims=2),
                                   party_table("b", IRIS[1], "osbr-nmds", dims=2)],
                          clustering={"algorithm": "kmeans", "n_clusters": 3})
    proc = run_ppc("run", path, "--out", tmp_path / "out", "--no-eval", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ("ppc: all uploads in; joining them, embedding them by non-metric MDS in 2 dims (000 ch. 3) and "
            "clustering (kmeans, 3 clusters)") in proc.stderr.splitlines()
