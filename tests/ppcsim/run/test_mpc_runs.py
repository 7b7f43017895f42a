"""protocol = "mpc": k-means on MPyC secret shares, every party-to-party byte relayed through the coordinator."""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest
from ledger_lines import check as check_ledger

from conftest import ROOT, blobs, by_hand, kmeans, read_report, run_ppc, scenario_toml, split_x, write_scenario
from ppcsim.scenario.load import ScenarioError, load_scenario

pytest.importorskip("mpyc")

MPC = dict(seed=5, deadline=240, data=blobs(45, 6, 3, label_column="target"), clustering=kmeans(3, "mpc", max_iter=3))
BLOBS = scenario_toml("blobs-mpc", split_x(2, 2, 2), **MPC)

TWO = scenario_toml("blobs-mpc", split_x(2, 4), **MPC)


# -- the scenario's checks --------------------------------------------------------------------------

def test_the_loader_refuses_what_an_mpc_session_cannot_run(tmp_path):
    with pytest.raises(ScenarioError) as err:
        load_scenario(write_scenario(tmp_path, TWO))
    assert "threshold t = 0" in str(err.value) and "helper = true" in str(err.value)
    bad = BLOBS.replace("max_iter = 3", "max_iter = 300\ninit = \"k-means++\"\ntol = 0.1\nmpc_frac = 20")
    with pytest.raises(ScenarioError) as err:
        load_scenario(write_scenario(tmp_path, bad))
    text = str(err.value)
    assert "'max_iter' must be at most 100" in text and "'init' must be \"random\"" in text
    assert "remove 'tol'" in text and "'mpc_frac' (20) must be at most half of 'mpc_bits' (32)" in text
    with pytest.raises(ScenarioError, match="'helper = true' adds a third share-holder to two parties"):
        load_scenario(write_scenario(tmp_path, BLOBS + "helper = true\n"))
    with pytest.raises(ScenarioError, match="'reveal_centres' applies to protocol = \"mpc\" only"):
        load_scenario(write_scenario(tmp_path, BLOBS.replace('protocol = "mpc"', 'protocol = "secure_aggregation"')
                                     .replace("max_iter = 3", "max_iter = 3\nreveal_centres = true")))
    with pytest.raises(ScenarioError, match="apply to protocol = \"mpc\" \\(and 'helper' and 'engine' to protocol = "
                                            "\"secure_aggregation\" with reveal = \"labels\"\\) only"):
        load_scenario(write_scenario(tmp_path, BLOBS.replace('protocol = "mpc"', 'protocol = "secure_aggregation"')
                                     .replace("max_iter = 3", "max_iter = 3\nreveal = \"distances\"\n"
                                              "reveal_centres = true")))
    with pytest.raises(ScenarioError, match="remove 'method'"):
        load_scenario(write_scenario(tmp_path, BLOBS.replace('name = "b"\n', 'name = "b"\nmethod = "drbt"\n')))


# -- real processes ---------------------------------------------------------------------------------

def test_ppc_run_three_parties_gives_plain_lloyds_labels_and_counts_every_relayed_byte(tmp_path):
    """One run of the three-party MPC: its labels (scikit-learn's and numpy's Lloyd's), every relayed byte
    counted, the ledger's layers, the roles and the page."""
    path = write_scenario(tmp_path, BLOBS + "reveal_centres = true\n")
    done = run_ppc("run", path, "--out", tmp_path / "out", "--html", timeout=300)
    assert done.returncode == 0, done.stderr
    report = read_report(tmp_path / "out")
    # wire >= serialized >= payload on every line of the console and the report (tests/ppcsim/run/test_ledger_layers.py)
    check_ledger(tmp_path / "out", done.stdout + done.stderr)
    assert "helper" not in report["communication"] and report["mpc"]["helper"] is None
    labels_are_plain_lloyds(path, tmp_path / "out", report)
    assert report["state"] == "done"
    u = report["utility"]
    assert u["labels_equal_same_init"] and u["reference"].endswith("max_iter = 3)")
    assert u["centres_max_abs_error"] < 2.0**-8  # SecFxp(32, 16): a few units of 2^-16 after three divisions
    mpc = report["mpc"]
    assert mpc["parties"] == ["a", "b", "c"] and mpc["threshold"] == 1 and mpc["helper"] is None
    # every byte of the MPC is in the ledger: its Relay entries add up to the per-party and per-link counts
    relay = [e for e in report["communication"]["ledger"] if e["rpc"] == "Relay"]
    for name, party in mpc["by_party"].items():
        assert party["up"] == sum(e["payload"] for e in relay if e["party"] == name and e["direction"] == "up"
                                  and e["payload"] > 0) - _result_bytes(report, name)
        assert party["down"] == sum(e["payload"] for e in relay if e["party"] == name and e["direction"] == "down")
        assert party["up"] == sum(link["bytes"] for link in mpc["links"] if link["sender"] == name)
        assert party["up"] - party["plaintext_up"] == 16 * party["frames_up"]
        assert party["up"] > 100_000  # MPyC's traffic: far beyond the labels
    assert {(link["sender"], link["receiver"]) for link in mpc["links"]} == {
        (s, r) for s in "abc" for r in "abc" if s != r}
    delivered = sum(p["down"] for p in mpc["by_party"].values())
    sent = sum(p["up"] for p in mpc["by_party"].values())
    assert delivered == sent - 16 * report["mpc"]["dropped_frames"]  # only closing frames (tags alone) dropped
    # the rounds each party marked: the input sharing (-1), then rounds 0..3
    assert [r["round"] for r in mpc["per_round"]] == [-1, 0, 1, 2, 3]
    assert sum(sum(r["up"].values()) for r in mpc["per_round"]) == sent
    # MPyC messages in sequence per round, counted by the parties' tunnels (measured 66, 76, 76 and 27 once): tens
    # per round with an update (secure comparisons, then a division), fewer in the last round (no update)
    seq = {r["round"]: r["sequential"] for r in mpc["per_round"]}
    assert all(seq[r] > 20 for r in (0, 1, 2)) and 0 < seq[3] < min(seq[1], seq[2]), seq
    # MPyC messages in sequence per round, counted by the parties' tunnels (measured 66, 76, 76 and 27 once): tens
    # per round with an update (secure comparisons, then a division), fewer in the last round (no update)
    seq = {r["round"]: r["sequential"] for r in mpc["per_round"]}
    assert all(seq[r] > 20 for r in (0, 1, 2)) and 0 < seq[3] < min(seq[1], seq[2]), seq
    # what each role learned; the coordinator's part of the report holds no share
    assert set(report["privacy"]["roles"]) == {"coordinator", "each party"}
    assert "honest majority" in report["privacy"]["assumption"]
    assert any("cannot compute" in line for line in report["security"]["coordinator_learns"])
    assert "<h2>Secure multiparty computation</h2>" in (tmp_path / "out" / "report.html").read_text()
    assert "mpc: 3 share-holders" in done.stderr
    assert " s from the first party's Relay stream to the last one's end" in done.stderr  # what was timed


def _result_bytes(report, name):
    """The RelayResult's payload: the labels (int32) and the centres (k x d float64) it opened."""
    m = report["join"]["rows_joined"]
    k, d = report["clustering"]["n_clusters"], 6
    return 4 * m + (8 * k * d if report["clustering"]["reveal_centres"] else 0)


def labels_are_plain_lloyds(path, out, report) -> None:
    """The MPC's labels against a numpy Lloyd's from the same records (no scikit-learn), on the run's data."""
    scenario = load_scenario(path)
    from parties.disguise import disguise
    from ppcsim.run.observers.secure_aggregation import joined_data

    own = {cfg.name: disguise(cfg) for cfg in scenario.parties}

    class Outcome:  # the join as the report gives it: every record, the generator's order
        class join:  # noqa: N801
            index = {p.name: np.arange(45) for p in scenario.parties}

    X = joined_data(scenario, Outcome, own)
    C = X[report["mpc"]["init"]]
    for _ in range(3):
        labels = np.argmin(((X[:, None, :] - C[None]) ** 2).sum(axis=2), axis=1)
        C = np.array([X[labels == j].mean(axis=0) if np.any(labels == j) else C[j] for j in range(3)])
    labels = np.argmin(((X[:, None, :] - C[None]) ** 2).sum(axis=2), axis=1)
    got = np.loadtxt(out / "labels.csv", delimiter=",", skiprows=1, dtype=str)
    ids = [str(i) for i in own["a"].data.ids]
    by_id = dict(zip(got[:, 0], got[:, 1].astype(int)))
    assert [by_id[i] for i in ids] == labels.tolist()


def test_two_parties_with_the_coordinators_helper_as_third_share_holder(tmp_path):
    path = write_scenario(tmp_path, TWO + "helper = true\n")
    done = run_ppc("run", path, "--out", tmp_path / "out", timeout=300)
    assert done.returncode == 0, done.stderr
    report = read_report(tmp_path / "out")
    assert report["utility"]["labels_equal_same_init"]
    mpc = report["mpc"]
    assert mpc["parties"] == ["a", "b", "helper"] and mpc["threshold"] == 1 and mpc["helper"] == "helper"
    # the helper's links are relayed, sealed and counted like the parties'
    assert {(link["sender"], link["receiver"]) for link in mpc["links"]} == {
        ("a", "b"), ("b", "a"), ("a", "helper"), ("helper", "a"), ("b", "helper"), ("helper", "b")}
    assert mpc["by_party"]["helper"]["up"] > 0
    assert "helper" in report["privacy"]["roles"] and "must not collude" in report["privacy"]["assumption"]
    assert [p["name"] for p in report["parties"]] == ["a", "b"]  # the helper holds no data: not a party
    # its Relay stream runs in the coordinator's process (no connection, no wire bytes), so its traffic is shown
    # apart and the totals stay below the relays' wire bytes
    printed = done.stdout + done.stderr
    check_ledger(tmp_path / "out", printed)
    helper = report["communication"]["helper"]
    assert helper["up"]["serialized"] > 0
    # the helper's messages are every ledger entry of its name, and none of them is in the totals
    mine = [e for e in report["communication"]["ledger"] if e["party"] == "helper"]
    assert helper["up"]["messages"] + helper["down"]["messages"] == len(mine)
    total = sum(e["serialized"] for e in report["communication"]["ledger"] if e["direction"] == "up")
    assert report["communication"]["totals"]["up"]["serialized"] == total - helper["up"]["serialized"]
    assert any(line.startswith("helper (") and "not in the totals" in line for line in printed.splitlines())
    # "up to N B sent per party" is the table's largest payload
    most = max(p["bytes"]["payload"] for p in report["parties"])
    assert f"up to {most:,} B payload sent per party" in printed


def test_roles_by_hand_over_mutual_tls_two_parties_and_the_coordinators_helper(tmp_path):
    path = write_scenario(tmp_path, TWO + "helper = true\n[security]\nmutual = true\n")
    errors = by_hand(path, tmp_path, ["a", "b"], timeout=240)
    assert all("Lloyd rounds as an MPC over 3 parties" in err for err in errors.values())
    out = tmp_path / "out"
    report = read_report(out)
    assert report["state"] == "done" and report["mpc"]["helper"] == "helper"
    assert report["mpc"]["by_party"]["helper"]["up"] > 0
    assert all(p["transport"] == "mutual TLS" for p in report["security"]["parties"].values())
    a = (tmp_path / "a.csv").read_text().splitlines()
    assert a[0] == "id,cluster" and len(a) == 46 and a == (tmp_path / "b.csv").read_text().splitlines()
    # the coordinator's files hold no share: an MPC session leaves it the report and the labels, nothing sent
    assert sorted(f.name for f in out.iterdir()) == ["labels.csv", "report.json"]
    assert not any(key in report for key in ("observer", "utility", "privacy"))


def test_bundled_wine_scenario_runs_through_ppc_run(tmp_path):
    done = run_ppc("run", ROOT / "scenarios" / "wine-mpc.toml", "--out",
                   tmp_path / "out", "--no-attacks", timeout=400)
    assert done.returncode == 0, done.stderr
    report = read_report(tmp_path / "out")
    assert report["utility"]["labels_equal_same_init"] and report["join"]["rows_joined"] == 178
    assert report["mpc"]["rounds"] == 5 and [r["round"] for r in report["mpc"]["per_round"]] == list(range(-1, 6))
    check_ledger(tmp_path / "out", done.stdout + done.stderr)  # the bundled scenario's ledger adds up, as every other's


def test_the_mpc_program_never_outlives_the_party_that_started_it(tmp_path):
    """Its peer never comes, so it would wait for ever; closing its standard input (the party process gone)
    ends it."""
    from parties.mpc import free_port

    data = tmp_path / "in.npz"
    np.savez(data, X=np.zeros((3, 1)), columns=[1, 1, 1], init=[0, 1], k=2, rounds=1, bits=32, frac=16, m=3,
             reveal_centres=False)
    program = subprocess.Popen(
        [sys.executable, "-m", "parties.mpc_kmeans", "--data", str(data), "--result", str(tmp_path / "out.npz"),
         "-P", ":1", "-P", f"127.0.0.1:{free_port()}", "-P", f"127.0.0.1:{free_port()}", "-I", "0", "--no-log",
         "--watch-stdin"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(2.0)
        assert program.poll() is None  # still waiting for its peers
        program.stdin.close()
        assert program.wait(timeout=20) == 3
    finally:
        if program.poll() is None:
            program.kill()
            program.wait()


def test_an_in_process_simulation_of_an_mpc_is_refused_with_what_to_do(tmp_path):
    import ppcsim

    with pytest.raises(ValueError, match="processes=True"):
        ppcsim.simulate(write_scenario(tmp_path, BLOBS))


def test_the_roles_say_the_helper_holds_a_share_of_everything_and_what_a_colluding_party_gives_away():
    """With a helper, the coordinator's process holds a share of every value: its roles must not list "a share"
    as never seen, and must say that it with either party reads the other's data; without one they say the
    frames' shares are sealed. Either way a party colluding with the coordinator gives it the pseudonym key."""
    from ppcsim.run.observers.mpc import roles

    with_helper = roles(2, True, False).roles
    coordinator = with_helper["coordinator"]
    assert not any(line.startswith("a share (") or line == "a share" for line in coordinator.never_sees)
    assert any("a share of every value" in line and "all of the other party's data" in line
               for line in coordinator.sees)
    assert any("a share of everything" in line for line in with_helper["helper"].sees)
    assert any("all of the other party's data" in line for line in with_helper["helper"].sees)
    alone = roles(3, False, False).roles["coordinator"]
    assert not any("share of every value" in line for line in alone.sees)
    assert any("sealed under a key of the two parties" in line for line in alone.never_sees)
    for role in (coordinator, alone):
        assert any("dictionary tests" in line and "pseudonym key" in line for line in role.sees)
