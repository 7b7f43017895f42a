"""Secure aggregation opening the labels only (the default) against the distances mode, with real party processes.

Wine's six columns over three parties and k = 7 centres (more centres than
joined columns): in the distances mode the arbiter's own attack on round 0's
sums places every joined record (the report measures it); in the labels-only
mode the same arbiter, honest or choosing singleton clusters, holds no
distance and places no record; both modes give scikit-learn's labels from
the same initial records.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import (
    WINE_LABELLED,
    check_report,
    kmeans,
    party_processes,
    party_table,
    read_report,
    run_ppc,
    scenario_toml,
    write_scenario,
)
from coordinator.errors import FailedPrecondition
from coordinator.protocols import secagg
from coordinator.registry import Registry
from coordinator.server import start_server
from coordinator.session import DONE
from parties import spu_env
from parties.disguise import disguise
from ppcsim.evaluate.arbiter import place_from_labels, placement_error
from ppcsim.scenario.load import load_scenario

pytest.importorskip("mpyc")

SIX = [party_table("lab", ["alcohol", "malic_acid"], None), party_table("winery", ["total_phenols", "flavanoids"], None),
       party_table("shop", ["color_intensity", "hue"], None)]


def six(k: int = 7, **fields) -> str:
    """The session at 4 Lloyd rounds at most: the arbiter's attack reads round 0, and in the labels-only mode every
    round is an MPC argmin over the parties' shares, the costliest part of these runs."""
    fields.setdefault("max_iter", 4)
    return scenario_toml("wine-six", SIX, seed=7, deadline=600, data=WINE_LABELLED,
                         clustering=kmeans(k, "secure_aggregation", **fields), security={"tls": False, "tokens": False})


def test_the_default_opens_the_labels_only_and_the_distances_mode_places_every_record(tmp_path):
    reports = {}
    for reveal in ("distances", "labels"):
        path = write_scenario(tmp_path, six(reveal=reveal) if reveal == "distances" else six(), f"{reveal}.toml")
        done = run_ppc("run", str(path), "--out", str(tmp_path / reveal), timeout=900)
        assert done.returncode == 0, done.stderr
        reports[reveal] = report = read_report(tmp_path / reveal)
        check_report(report, tmp_path / reveal)
        assert report["utility"]["labels_equal_same_init"] is True
        assert report["secure_aggregation"]["reveal"] == reveal
    distances, labels = reports["distances"], reports["labels"]
    placed = distances["privacy"]["arbiter"]["placement"]
    assert placed["relative_error"] < 1e-6 and placed["records"] == 178 and placed["dims"] == 6
    nothing = labels["privacy"]["roles"]["coordinator"]["placement"]
    assert nothing["relative_error"] is None and nothing["skipped"].startswith("nothing to run on")
    # the same rounds, the same labels; the labels-only session's bytes are the argmin's, within its cost model
    assert labels["secure_aggregation"]["rounds"] == distances["secure_aggregation"]["rounds"]
    assert (tmp_path / "labels" / "labels.csv").read_text() == (tmp_path / "distances" / "labels.csv").read_text()
    assert all(p["exact"] for p in labels["secure_aggregation"]["by_party"].values())
    assert not any(e["rpc"] in ("PostDistances", "GetLabels") for e in labels["communication"]["ledger"])
    assert labels["mpc"]["rounds"] == labels["secure_aggregation"]["rounds"]


def serve(tmp_path, coordinator_text: str, parties_text: str, monkeypatch, choose=None):
    """The real coordinator on ``coordinator_text`` (its Arbiter.choose replaced by ``choose`` if given), three
    ``ppc party`` processes reading ``parties_text``: each party's (exit code, standard error), and the session."""
    if choose is not None:
        monkeypatch.setattr(secagg.Arbiter, "choose", choose)
    path = write_scenario(tmp_path, coordinator_text, "coordinator.toml")
    parties_path = write_scenario(tmp_path, parties_text, "parties.toml")
    registry = Registry()
    session = registry.create(load_scenario(path).session_spec(None))
    server, port = start_server("127.0.0.1:0", registry)
    try:
        out = party_processes(port, parties_path, ("lab", "winery", "shop"), 5, timeout=600)
    finally:
        server.stop(0)
    return out, session


def test_an_arbiter_from_the_docs_places_no_record_in_the_labels_mode(tmp_path, monkeypatch):
    """The distances mode's active arbiter (singleton clusters, docs/secure-aggregation.md) run against a labels-only
    session: its choice is never asked for, no distance reaches it, and what it does hold (the labels) places no
    record, even read as well as classical scaling of who clusters with whom can."""
    asked = []

    def choose(self, signed):  # the arbiter that chooses k - 1 singleton clusters and keeps the sums
        asked.append(signed.copy())
        labels = np.full(self.m, self.k - 1, dtype=np.int32)
        labels[: self.k - 1] = np.arange(self.k - 1)
        return labels, self.round >= self.spec.max_iter

    out, session = serve(tmp_path, six(), six(), monkeypatch, choose)
    for name, (code, err) in out.items():
        assert code == 0, f"{name}: {err}"
    assert session.state == DONE
    assert asked == [] and session.arbiter.seen_first is None
    assert not [e for e in session.ledger.entries() if e.rpc in ("PostDistances", "GetLabels")]
    with pytest.raises(FailedPrecondition, match="opens the labels only"):
        secagg.ready_to_post(session, "lab")
    with pytest.raises(FailedPrecondition, match="opens the labels only"):
        secagg.distances_arbiter(session, "lab")
    scenario = load_scenario(write_scenario(tmp_path, six(), "truth.toml"))
    own = {cfg.name: disguise(cfg) for cfg in scenario.parties}
    X = np.hstack([own[p.name].X[session.outcome.join.index[p.name]] for p in scenario.parties])
    assert X.shape[1] < 7  # more centres than joined columns: the distances mode would place every record
    estimate = place_from_labels([session.outcome.labels])
    assert placement_error(estimate, X, scaled=True) >= 0.5


@pytest.mark.parametrize("told, says", [("distances", "labels"), ("labels", "distances")])
def test_a_party_refuses_a_coordinator_running_the_mode_its_file_does_not_say(tmp_path, monkeypatch, told, says):
    """The distances mode where the file keeps them hidden, and the labels-only mode where the file says the
    distances (docs/protocol.md's table of terms: either way the file's mode is the one run)."""
    out, session = serve(tmp_path, six(reveal=told), six(reveal=says), monkeypatch)
    for name, (code, err) in out.items():
        assert code != 0 and "Traceback" not in err, f"{name}: {err}"
        assert f"reveal = \"{says}\"" in err and f"opening the {told}" in err, err
    assert not [e for e in session.ledger.entries() if e.rpc in ("PostDistances", "Relay")]


def test_a_party_refuses_an_engine_its_file_does_not_name_before_the_engine_is_asked_for(tmp_path, monkeypatch):
    """A coordinator running the argmin on SPU for parties whose file says nothing (MPyC): each refuses the engine
    by its term, before it looks for SPU's environment or starts any program, so the refusal is the same whether
    SPU is installed here or not (here: not, as the parties see it)."""
    monkeypatch.setenv(spu_env.VARIABLE, str(tmp_path / "no-such-env" / "bin" / "python"))
    out, session = serve(tmp_path, six(engine="spu"), six(), monkeypatch)
    for name, (code, err) in out.items():
        assert code != 0 and "Traceback" not in err, f"{name}: {err}"
        assert 'its MPC engine is "spu", but this party\'s scenario file' in err and 'engine = "mpyc"' in err, err
        assert "no-such-env" not in err and "spu-env" not in err, err
    assert not [e for e in session.ledger.entries() if e.rpc == "Relay"]
