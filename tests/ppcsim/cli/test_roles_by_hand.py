"""The roles by hand: ``ppc coordinator`` and two ``ppc party`` processes, over real gRPC.

The two parties' CSVs hold the same twelve ids in different orders, and party a
has one more id (``r99``) that party b lacks: the join must drop it, the
coordinator must report it, and every label a party receives must match the
coordinator's labels.csv for the same record. Each party is given a scenario
file with its own table alone, as the README's recipe says; the coordinator
sees pseudonyms, never a raw id, and no party's seed.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import A_ORDER, B_ORDER, FAR, JOINED, NEAR, once_per_run, ppc_cmd, read_labels, read_report, run_ppc, write_csv
from parties.client import WITHOUT_MUTUAL_TLS

TIMEOUT = 120.0

def run_session(tmp: Path, seed: int | None = None):
    """One session run by hand: the coordinator, then both parties at once, each with its own file."""
    tmp.mkdir(parents=True, exist_ok=True)
    write_csv(tmp / "a.csv", ["id", "x1", "x2", "x3"], A_ORDER)
    write_csv(tmp / "b.csv", ["key", "y1", "y2"], B_ORDER)
    top = 'name = "by-hand"\nseed = 11\ndeadline = 60\n'
    tables = {
        "a": '[[parties]]\nname = "a"\ndata = "a.csv"\nid_column = "id"\ncolumns = ["x1", "x2", "x3"]\n'
             'method = "drbt"\nk = 2\n',
        "b": '[[parties]]\nname = "b"\ndata = "b.csv"\nid_column = "key"\ncolumns = ["y1", "y2"]\nmethod = "none"\n',
    }
    scenario = tmp / "s.toml"
    scenario.write_text(top + tables["a"] + tables["b"] + '[clustering]\nalgorithm = "kmeans"\nn_clusters = 2\n')
    for party, table in tables.items():  # each party's own file: its table whole, the other's name, the terms
        other = next(p for p in tables if p != party)
        (tmp / f"{party}.toml").write_text(top + table + f'[[parties]]\nname = "{other}"\n'
                                           '[clustering]\nalgorithm = "kmeans"\nn_clusters = 2\n')
    port_file, out, creds = tmp / "port", tmp / "out", tmp / "creds"
    made = run_ppc("credentials", scenario, "--out", creds, cwd=tmp)
    assert made.returncode == 0, made.stderr
    popen = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, cwd=tmp)
    procs: dict[str, subprocess.Popen] = {}
    results: dict[str, subprocess.CompletedProcess] = {}
    try:
        procs["coordinator"] = subprocess.Popen(
            ppc_cmd("coordinator", "--listen", "127.0.0.1:0", "--port-file", port_file,
                    "--scenario", scenario, "--out", out, "--credentials", creds), **popen)
        end = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip().isdigit()):
            assert procs["coordinator"].poll() is None, procs["coordinator"].communicate()[1]
            assert time.monotonic() < end, "the coordinator wrote no port file"
            time.sleep(0.05)
        address = f"127.0.0.1:{int(port_file.read_text())}"
        for party in ("a", "b"):
            procs[party] = subprocess.Popen(
                ppc_cmd("party", "--coordinator", address, "--scenario", tmp / f"{party}.toml", "--party", party,
                        "--labels-out", tmp / f"{party}-labels.csv", "--credentials", creds / "parties" / party,
                        *(["--seed", seed + (party == "b")] if seed is not None else [])),  # one seed each
                **popen)
        for name in ("a", "b", "coordinator"):
            stdout, stderr = procs[name].communicate(timeout=TIMEOUT)
            results[name] = subprocess.CompletedProcess(procs[name].args, procs[name].returncode, stdout, stderr)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.communicate()
    return tmp, out, results


@pytest.fixture(scope="session")
def roles(tmp_path_factory):
    """The session run once per test run, even when the tests that read it run on several workers
    (``once_per_run``): each role's exit status and output, kept as JSON."""
    def make(folder: Path) -> subprocess.CompletedProcess:
        _, _, results = run_session(folder / "roles")
        return subprocess.CompletedProcess([], 0, json.dumps({n: [r.args, r.returncode, r.stdout, r.stderr]
                                                              for n, r in results.items()}), "")

    folder, proc = once_per_run(tmp_path_factory, "roles-by-hand", make)
    results = {n: subprocess.CompletedProcess(*fields) for n, fields in json.loads(proc.stdout).items()}
    return folder / "roles", folder / "roles" / "out", results


def test_every_role_exits_zero_without_traceback(roles):
    _, _, results = roles
    for name, proc in results.items():
        assert proc.returncode == 0, f"{name}: {proc.stderr}"
        assert "Traceback" not in proc.stderr, f"{name}: {proc.stderr}"


def test_report_says_done_and_counts_the_dropped_id(roles):
    _, out, _ = roles
    report = read_report(out)
    assert report["scenario"] == "by-hand"
    assert report["state"] == "done" and report["error"] is None
    assert report["join"] == {"rows_joined": 12, "dropped": {"a": 1, "b": 0}}
    assert [p["name"] for p in report["parties"]] == ["a", "b"]
    assert [p["rows"] for p in report["parties"]] == [13, 12]
    assert [p["output_dims"] for p in report["parties"]] == [2, 2]
    assert report["clustering"]["sizes"] == [6, 6] and report["clustering"]["n_clusters_found"] == 2
    # drbt sends m x k float64, none sends m x d float64
    assert [p["bytes"]["payload"] for p in report["parties"]] == [13 * 2 * 8, 12 * 2 * 8]


def test_each_party_sent_pseudonyms_in_its_own_order(roles):
    _, out, _ = roles
    sent = {}
    for party, order in (("a", A_ORDER), ("b", B_ORDER)):
        with np.load(out / "sent" / f"{party}.npz") as npz:
            ids = npz["ids"].tolist()
            assert npz["data"].shape == (len(order), 2)
        assert len(ids) == len(order) and all(len(i) == 32 and int(i, 16) >= 0 for i in ids)  # 16 bytes, in hex
        assert not set(ids) & set(A_ORDER)
        sent[party] = dict(zip(order, ids))
    # the same record has the same pseudonym at both parties (and so joins), r99 aside
    assert all(sent["a"][r] == sent["b"][r] for r in B_ORDER)


def test_labels_csv_has_the_joined_pseudonyms_and_separates_the_groups(roles):
    _, out, _ = roles
    labels = read_labels(out / "labels.csv")
    with np.load(out / "sent" / "a.npz") as npz:
        pseudonym = dict(zip(A_ORDER, npz["ids"].tolist()))
    assert [i for i, _ in labels] == [pseudonym[r] for r in JOINED]
    by_id = {r: dict(labels)[pseudonym[r]] for r in JOINED}
    near, far = {by_id[i] for i in NEAR}, {by_id[i] for i in FAR}
    assert len(near) == 1 and len(far) == 1 and near != far
    assert sorted(near | far) == [0, 1]


def test_party_labels_follow_the_partys_own_order_and_agree(roles):
    tmp, out, _ = roles
    shared = dict(read_labels(out / "labels.csv"))
    with np.load(out / "sent" / "a.npz") as npz:
        pseudonym = dict(zip(A_ORDER, npz["ids"].tolist()))
    a = read_labels(tmp / "a-labels.csv")
    b = read_labels(tmp / "b-labels.csv")
    # one row per joined id of the party's CSV, in the CSV's order; a's unjoined r99 is left out
    assert [i for i, _ in a] == [i for i in A_ORDER if i != "r99"]
    assert [i for i, _ in b] == B_ORDER
    for party_labels in (a, b):
        assert all(label == shared[pseudonym[i]] for i, label in party_labels)


def test_the_coordinator_holds_no_raw_id_and_no_party_seed(roles):
    _, out, results = roles
    report = read_report(out)
    assert "observer" not in report and all("seed" not in p for p in report["parties"])
    assert report["security"]["ids"] == "pseudonymous"
    everything = (out / "report.json").read_text() + (out / "labels.csv").read_text() + results["coordinator"].stderr
    for party in ("a", "b"):
        with np.load(out / "sent" / f"{party}.npz") as npz:
            everything += " ".join(npz["ids"].tolist())
    for record in A_ORDER:
        assert f'"{record}"' not in everything and f"{record}," not in everything and f"{record} " not in everything
    ids = report["communication"]["ids"]
    assert ids["a"] == {"encoding": "ID_PSEUDONYMS_AES", "bytes": 13 * 16, "plain_bytes": None}


def test_parties_draw_their_own_secrets_unless_given_a_seed(roles, tmp_path):
    """Two runs with the same files send different arrays; the same --seed sends the same ones."""
    def sent(out: Path) -> np.ndarray:
        with np.load(out / "sent" / "a.npz") as npz:
            return npz["data"]

    _, first, _ = roles
    again = run_session(tmp_path / "again")
    seeded = [run_session(tmp_path / f"seeded{i}", seed=5) for i in range(2)]
    for _, _, results in (again, *seeded):
        assert all(r.returncode == 0 for r in results.values()), {n: r.stderr for n, r in results.items()}
    assert not np.allclose(sent(first), sent(again[1]))
    assert np.array_equal(sent(seeded[0][1]), sent(seeded[1][1]))
    with np.load(seeded[0][1] / "sent" / "a.npz") as one, np.load(seeded[1][1] / "sent" / "a.npz") as two:
        assert one["ids"].tolist() == two["ids"].tolist()  # the pseudonym key comes from the seed too


def test_roles_print_their_summaries(roles):
    _, _, results = roles
    assert results["a"].stderr.splitlines() == [
        f"ppc party a: security: {WITHOUT_MUTUAL_TLS}",  # the scenario has no mutual TLS: said once, first
        "party a: 13 rows x 3 columns -> drbt data[13, 2]",
        "party a: 12 of 13 records clustered into 2 clusters, sizes [6, 6]",
    ]
    assert results["b"].stderr.splitlines() == [
        f"ppc party b: security: {WITHOUT_MUTUAL_TLS}",
        "party b: 12 rows x 2 columns -> none data[12, 2]",
        "party b: 12 of 12 records clustered into 2 clusters, sizes [6, 6]",
    ]
    coordinator = results["coordinator"].stderr
    assert "listening on port" in coordinator and "session 'by-hand' expects a, b" in coordinator
    assert "join: 12 records in common (dropped: a 1, b 0)" in coordinator
    assert "clusters: 2 (sizes 6, 6)" in coordinator


def test_the_roles_talk_over_tls_with_a_token_each(roles):
    _, out, _ = roles
    security = read_report(out)["security"]
    assert security["tls"] is True and security["tokens"] is True
    assert security["parties"] == {p: {"transport": "TLS", "identity": "token"} for p in ("a", "b")}
