"""The roles by hand: ``ppc coordinator`` and two ``ppc party`` processes, over real gRPC.

The two parties' CSVs hold the same twelve ids in different orders, and party a
has one more id (``r99``) that party b lacks: the join must drop it, the
coordinator must report it, and every label a party receives must match the
coordinator's labels.csv for the same id.
"""

from __future__ import annotations

import csv
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import read_report, run_ppc

TIMEOUT = 120.0

# Two well separated groups: r01..r06 near the origin, r07..r12 near 10 in every column.
NEAR = {f"r{i:02d}": i for i in range(1, 7)}
FAR = {f"r{i:02d}": i for i in range(7, 13)}
A_ORDER = ["r07", "r02", "r11", "r99", "r05", "r01", "r09", "r12", "r03", "r08", "r06", "r10", "r04"]
B_ORDER = ["r10", "r01", "r06", "r03", "r12", "r08", "r02", "r05", "r11", "r09", "r04", "r07"]
JOINED = [i for i in A_ORDER if i != "r99"]  # the join keeps the first party's order


def value(record: str, column: int) -> str:
    """A deterministic cell: the group's level plus a small spread."""
    n = int(record[1:]) if record != "r99" else 3
    base = 10.0 if record in FAR else 0.0
    return f"{base + 0.1 * ((n * (column + 2)) % 7):.2f}"


def write_csv(path: Path, header: list[str], order: list[str]) -> None:
    rows = [[record] + [value(record, j) for j in range(len(header) - 1)] for record in order]
    path.write_text("\n".join(",".join(r) for r in [header, *rows]) + "\n")


def read_labels(path: Path) -> list[tuple[str, int]]:
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        assert next(reader) == ["id", "cluster"]
        return [(row[0], int(row[1])) for row in reader]


def ppc_cmd(*args) -> list[str]:
    return [sys.executable, "-m", "ppcsim", *map(str, args)]


@pytest.fixture(scope="module")
def roles(tmp_path_factory):
    """One session run by hand: the coordinator, then both parties at once."""
    tmp = tmp_path_factory.mktemp("roles")
    write_csv(tmp / "a.csv", ["id", "x1", "x2", "x3"], A_ORDER)
    write_csv(tmp / "b.csv", ["key", "y1", "y2"], B_ORDER)
    scenario = tmp / "s.toml"
    scenario.write_text(
        'name = "by-hand"\nseed = 11\ndeadline = 60\n'
        '[[parties]]\nname = "a"\ndata = "a.csv"\nid_column = "id"\ncolumns = ["x1", "x2", "x3"]\n'
        'method = "drbt"\nk = 2\n'
        '[[parties]]\nname = "b"\ndata = "b.csv"\nid_column = "key"\ncolumns = ["y1", "y2"]\nmethod = "none"\n'
        '[clustering]\nalgorithm = "kmeans"\nn_clusters = 2\n'
    )
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
                ppc_cmd("party", "--coordinator", address, "--scenario", scenario, "--party", party,
                        "--labels-out", tmp / f"{party}-labels.csv", "--credentials", creds / "parties" / party),
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


def test_each_party_sent_its_ids_in_its_own_order(roles):
    _, out, _ = roles
    for party, order in (("a", A_ORDER), ("b", B_ORDER)):
        with np.load(out / "sent" / f"{party}.npz") as sent:
            assert sent["ids"].tolist() == order
            assert sent["data"].shape == (len(order), 2)


def test_labels_csv_has_the_joined_ids_and_separates_the_groups(roles):
    _, out, _ = roles
    labels = read_labels(out / "labels.csv")
    assert [i for i, _ in labels] == JOINED
    assert "r99" not in dict(labels)
    by_id = dict(labels)
    near, far = {by_id[i] for i in NEAR}, {by_id[i] for i in FAR}
    assert len(near) == 1 and len(far) == 1 and near != far
    assert sorted(near | far) == [0, 1]


def test_party_labels_follow_the_partys_own_order_and_agree(roles):
    tmp, out, _ = roles
    shared = dict(read_labels(out / "labels.csv"))
    a = read_labels(tmp / "a-labels.csv")
    b = read_labels(tmp / "b-labels.csv")
    # one row per joined id of the party's CSV, in the CSV's order; a's unjoined r99 is left out
    assert [i for i, _ in a] == [i for i in A_ORDER if i != "r99"]
    assert [i for i, _ in b] == B_ORDER
    for party_labels in (a, b):
        assert all(label == shared[i] for i, label in party_labels)


def test_roles_print_their_summaries(roles):
    _, _, results = roles
    assert results["a"].stderr.splitlines() == [
        "party a: 13 rows x 3 columns -> drbt data[13, 2]",
        "party a: 12 of 13 records clustered into 2 clusters, sizes [6, 6]",
    ]
    assert results["b"].stderr.splitlines() == [
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
