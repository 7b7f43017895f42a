"""A party's state file: 0600, refused when others may read it or it is a link, and a party killed while in its
session and started again with the same folder rejoins with the same key and finishes (pseudonymous ids, no
--seed)."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from conftest import A_ORDER, B_ORDER, ppc_cmd, read_labels, run_ppc, write_csv
from parties.errors import PartyError
from parties.state import session_seed, state_path

TIMEOUT = 120.0


def test_the_state_file_is_private_and_gives_back_the_same_seed(tmp_path):
    seed = session_seed(tmp_path / "state", "s", "a", None)
    path = state_path(tmp_path / "state", "s", "a")
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert session_seed(tmp_path / "state", "s", "a", None) == seed
    assert session_seed(tmp_path / "state", "s", "a", seed) == seed
    with pytest.raises(PartyError, match="holds another seed than --seed gives"):
        session_seed(tmp_path / "state", "s", "a", seed + 1)
    os.chmod(path, 0o644)
    with pytest.raises(PartyError, match=r"may be read by others \(mode 644\)"):
        session_seed(tmp_path / "state", "s", "a", None)
    os.chmod(path, 0o600)
    link = state_path(tmp_path / "state", "s", "b")
    link.symlink_to(path)
    with pytest.raises(PartyError, match="not a regular file"):
        session_seed(tmp_path / "state", "s", "b", None)
    with pytest.raises(PartyError, match="is the state of party 'a' in session 's', not of 'a' in 't'"):
        os.link(path, state_path(tmp_path / "state", "t", "a"))
        session_seed(tmp_path / "state", "t", "a", None)


def test_a_party_killed_in_its_session_comes_back_from_its_state_file(tmp_path):
    write_csv(tmp_path / "a.csv", ["id", "x1", "x2", "x3"], A_ORDER)
    write_csv(tmp_path / "b.csv", ["key", "y1", "y2"], B_ORDER)
    top = 'name = "restart"\nseed = 11\ndeadline = 90\n'  # [security] ids: pseudonymous, the default
    tables = {"a": '[[parties]]\nname = "a"\ndata = "a.csv"\nid_column = "id"\ncolumns = ["x1", "x2", "x3"]\n'
                   'method = "drbt"\nk = 2\n',
              "b": '[[parties]]\nname = "b"\ndata = "b.csv"\nid_column = "key"\ncolumns = ["y1", "y2"]\n'
                   'method = "none"\n'}
    scenario = tmp_path / "s.toml"
    scenario.write_text(top + tables["a"] + tables["b"] + '[clustering]\nalgorithm = "kmeans"\nn_clusters = 2\n')
    for party, table in tables.items():  # each party's own file: its table whole, the other's name, the terms
        other = next(p for p in tables if p != party)
        (tmp_path / f"{party}.toml").write_text(top + table + f'[[parties]]\nname = "{other}"\n'
                                                 '[clustering]\nalgorithm = "kmeans"\nn_clusters = 2\n')
    creds, port_file, log = tmp_path / "creds", tmp_path / "port", tmp_path / "coordinator.log"
    assert run_ppc("credentials", scenario, "--out", creds, cwd=tmp_path).returncode == 0
    quiet = dict(stdin=subprocess.DEVNULL, cwd=tmp_path)
    procs: list[subprocess.Popen] = []

    def party(name):
        p = subprocess.Popen(ppc_cmd("party", "--coordinator", address, "--scenario", tmp_path / f"{name}.toml",
                                     "--party", name, "--credentials", creds / "parties" / name,
                                     "--state", tmp_path / f"state-{name}", "--labels-out",
                                     tmp_path / f"{name}-labels.csv"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **quiet)
        procs.append(p)
        return p

    try:
        with open(log, "w") as fh:
            coordinator = subprocess.Popen(ppc_cmd("coordinator", "--listen", "127.0.0.1:0", "--port-file", port_file,
                                                   "--scenario", scenario, "--credentials", creds),
                                           stdout=subprocess.DEVNULL, stderr=fh, **quiet)
        procs.append(coordinator)
        end = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip().isdigit()):
            assert coordinator.poll() is None and time.monotonic() < end, log.read_text()
            time.sleep(0.05)
        address = f"127.0.0.1:{int(port_file.read_text())}"
        first = party("a")  # the key leader, with a seed from entropy kept in its state file
        while "party a joined" not in log.read_text():
            assert first.poll() is None and time.monotonic() < end, first.communicate()
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)  # waiting for b in GetPeers: its key pair dies with it
        first.wait()
        again, b = party("a"), party("b")
        for p in (again, b):
            out, err = p.communicate(timeout=TIMEOUT)
            assert p.returncode == 0, err
        assert coordinator.wait(timeout=TIMEOUT) == 0, log.read_text()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    labels = {p: dict(read_labels(tmp_path / f"{p}-labels.csv")) for p in "ab"}
    joined = [r for r in A_ORDER if r in labels["b"]]
    assert [labels["a"][r] for r in joined] == [labels["b"][r] for r in joined]
    assert len(set(labels["a"][r] for r in joined)) == 2
    assert "another public key" not in log.read_text()
