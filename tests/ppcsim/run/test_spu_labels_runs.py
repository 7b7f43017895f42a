"""Secure aggregation opening the labels only with engine = "spu": the argmin on SPU's ABY3 shares, relayed.

The tests that run SPU skip, saying why, where its separate environment is absent (``ppc spu-env`` creates it).
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import blobs, read_report, run_ppc, scenario_toml, split_x, write_scenario
from conftest import kmeans as kmeans_table
from parties import spu_env
from ppcsim.scenario.load import ScenarioError, load_scenario

LABELS = dict(seed=5, deadline=300, data=blobs(80, 6, 3, label_column="target"),
              clustering=kmeans_table(3, "secure_aggregation", reveal="labels", max_iter=6, engine="spu"))
THREE = scenario_toml("blobs-spu-labels", split_x(2, 2, 2), **LABELS)
TWO = scenario_toml("blobs-spu-labels", split_x(3, 3), **LABELS)

_problem = spu_env.problem()
needs_spu = pytest.mark.skipif(_problem is not None, reason=f"SPU cannot run here: {_problem}")


def test_the_loader_takes_spu_for_the_labels_only_argmin_with_three_share_holders_only(tmp_path):
    assert load_scenario(write_scenario(tmp_path, THREE)).clustering.engine == "spu"
    assert load_scenario(write_scenario(tmp_path, TWO + "helper = true\n")).clustering.helper
    with pytest.raises(ScenarioError, match="needs exactly three share-holders"):
        load_scenario(write_scenario(tmp_path, scenario_toml("blobs-spu-labels", split_x(2, 2, 1, 1), **LABELS)))
    with pytest.raises(ScenarioError, match="'engine' to protocol = \"secure_aggregation\" with reveal = \"labels\""):
        load_scenario(write_scenario(tmp_path, THREE.replace('reveal = "labels"', 'reveal = "distances"')))


def test_ppc_run_refuses_before_anything_starts_when_spu_is_not_set_up(tmp_path, monkeypatch):
    monkeypatch.setenv(spu_env.VARIABLE, str(tmp_path / "no-such-env" / "bin" / "python"))
    done = run_ppc("run", write_scenario(tmp_path, THREE), "--out", tmp_path / "out", timeout=120)
    assert done.returncode != 0
    assert "engine = \"spu\"" in done.stderr and "no-such-env" in done.stderr and "Traceback" not in done.stderr


def _lloyd(report, tmp_path) -> None:
    """The report's labels equal scikit-learn's Lloyd's from the same initial records, as the observer says."""
    assert report["state"] == "done"
    assert report["utility"]["labels_equal_same_init"]
    assert report["utility"]["vs_same_init"]["ari"] == 1.0


@needs_spu
def test_three_parties_open_only_lloyds_labels_with_every_byte_relayed(tmp_path):
    done = run_ppc("run", write_scenario(tmp_path, THREE), "--out", tmp_path / "out", timeout=400)
    assert done.returncode == 0, done.stderr
    report = read_report(tmp_path / "out")
    _lloyd(report, tmp_path)
    secure, mpc = report["secure_aggregation"], report["mpc"]
    assert secure["reveal"] == "labels" and mpc["engine"] == "spu" and mpc["parties"] == ["a", "b", "c"]
    assert 2 <= secure["rounds"] <= 7  # max_iter = 6 updates, or fewer once no label changed
    # round -1: the links' set-up before round 0's shares
    assert [r["round"] for r in mpc["per_round"] if r["round"] >= 0] == list(range(secure["rounds"]))
    relay = [e for e in report["communication"]["ledger"] if e["rpc"] == "Relay"]
    for name, party in mpc["by_party"].items():
        assert party["down"] == sum(e["payload"] for e in relay if e["party"] == name and e["direction"] == "down")
        assert party["up"] == sum(link["bytes"] for link in mpc["links"] if link["sender"] == name)
        assert party["up"] > 10_000  # each round's shares and comparisons: far beyond the labels
    assert {(link["sender"], link["receiver"]) for link in mpc["links"]} == {
        (s, r) for s in "abc" for r in "abc" if s != r}
    assert "ABY3" in report["privacy"]["assumption"]
    assert all(p["exact"] for p in secure["by_party"].values()), secure["by_party"]  # the SPU cost model
    labels = np.loadtxt(tmp_path / "out" / "labels.csv", delimiter=",", skiprows=1, dtype=str)
    assert len(labels) == 80


@needs_spu
def test_two_parties_with_the_coordinators_helper_as_third_share_holder(tmp_path):
    done = run_ppc("run", write_scenario(tmp_path, TWO + "helper = true\n"), "--out", tmp_path / "out", timeout=400)
    assert done.returncode == 0, done.stderr
    report = read_report(tmp_path / "out")
    _lloyd(report, tmp_path)
    mpc = report["mpc"]
    assert mpc["engine"] == "spu" and mpc["parties"] == ["a", "b", "helper"]
    assert mpc["by_party"]["helper"]["up"] > 10_000
    assert "must not collude" in report["privacy"]["assumption"]


@needs_spu
def test_the_argmin_program_keeps_its_compiled_program_and_a_warm_run_gives_the_same_labels(tmp_path, monkeypatch):
    """Three programs on direct loopback links, twice: the first compiles and fills the cache, the second reads it
    (the files are not written again) and opens the same labels, which are Lloyd's in the clear."""
    import subprocess

    from parties.mpc import free_port
    from parties.secagg_argmin import partial, update
    from parties.spu_run import ARGMIN, program_command, program_env

    cache = tmp_path / "cache"
    monkeypatch.setenv("PPC_SPU_CACHE", str(cache))
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(c, 0.5, size=(30, 6)) for c in (-2.0, 0.0, 2.0)])
    init, k, rounds = [0, 40, 80], 3, 5
    for i in range(3):
        np.savez(tmp_path / f"in{i}.npz", X=X[:, 2 * i:2 * i + 2], columns=[2, 2, 2], init=init, k=k, rounds=rounds,
                 bits=32, frac=16, m=len(X), reveal_centres=False)

    def run(tag: str) -> np.ndarray:
        addresses = [f"127.0.0.1:{free_port()}" for _ in range(3)]
        procs = [subprocess.Popen(program_command(tmp_path / f"in{i}.npz", tmp_path / f"{tag}{i}.npz", i, addresses,
                                                  "test", 300, ARGMIN), env=program_env(), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE) for i in range(3)]
        errors = [p.communicate(timeout=300)[1] for p in procs]
        assert all(p.returncode == 0 for p in procs), errors
        labels = [np.load(tmp_path / f"{tag}{i}.npz")["labels"] for i in range(3)]
        assert all(np.array_equal(labels[0], other) for other in labels[1:])
        return labels[0]

    cold = run("cold")
    kept = {p.name: p.stat().st_mtime_ns for p in cache.iterdir()}
    assert len(kept) == 1 and all(name.endswith(".spu") for name in kept)
    warm = run("warm")
    assert {p.name: p.stat().st_mtime_ns for p in cache.iterdir()} == kept
    centres, labels = X[init].copy(), np.zeros(len(X), dtype=int)
    for r in range(rounds + 1):  # Lloyd's in the clear, stopping as the program does
        new = np.argmin(partial(X, centres), axis=1)
        done = r > 0 and np.array_equal(new, labels)
        labels = new
        if done or r >= rounds:
            break
        centres = update(X, labels, centres)
    assert np.array_equal(cold, labels) and np.array_equal(warm, labels)


@needs_spu
def test_a_program_waiting_for_go_connects_to_no_peer_and_exits_when_the_party_refuses(tmp_path):
    """run_spu starts the program before the parties confirm; until "go" it must not dial a peer (no share may
    exist before the confirmation), and a closed standard input without "go" ends it."""
    import socket
    import subprocess
    import time

    from parties.spu_run import ARGMIN, program_command, program_env

    data = tmp_path / "in.npz"
    np.savez(data, X=np.zeros((3, 1)), columns=[1, 1, 1], init=[0, 1], k=2, rounds=1, bits=32, frac=16, m=3,
             reveal_centres=False)
    peers = [socket.socket() for _ in range(2)]
    for peer in peers:
        peer.bind(("127.0.0.1", 0))
        peer.listen(4)
        peer.settimeout(0.5)
    own = socket.socket()
    own.bind(("127.0.0.1", 0))
    addresses = [f"127.0.0.1:{own.getsockname()[1]}", *[f"127.0.0.1:{p.getsockname()[1]}" for p in peers]]
    own.close()
    command = [*program_command(data, tmp_path / "out.npz", 0, addresses, "test", 300, ARGMIN), "--watch-stdin",
               "--wait-go"]
    program = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=program_env())
    try:
        deadline = time.monotonic() + 20.0  # time enough to import, compile and, were it not waiting, dial
        while time.monotonic() < deadline:
            for peer in peers:
                with pytest.raises(TimeoutError):
                    peer.accept()
        assert program.poll() is None
        program.stdin.close()
        assert program.wait(timeout=30) == 3
        assert not (tmp_path / "out.npz").exists()
    finally:
        if program.poll() is None:
            program.kill()
            program.wait()
        for peer in peers:
            peer.close()
