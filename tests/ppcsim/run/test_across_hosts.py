"""Across hosts: the coordinator and two parties on separate network hosts of this machine, over TLS.

The test builds its own small network out of Linux network namespaces: a
coordinator host, party host ``lab`` and party host ``winery``, each with
only ``lo`` and one veth link (``ppc0``) to a bridge that lives in a fourth
namespace. The addresses (``10.250.61.0/24``) exist only inside those
namespaces, no namespace has any other route, and nothing is added to the
root namespace, so the session's traffic can only flow between the hosts the
test made. Everything is removed afterwards, also when the test fails.

``ppc credentials --host 10.250.61.1`` makes the certificates, ``ppc
coordinator`` listens on the coordinator host's address and each ``ppc party``
runs on its own host (``ip netns exec``), so every byte of the session crosses
the veth links: the link counters must show at least the bytes the report
says were sent. It runs once with the default ``[security]`` (TLS and a token
per party) and once with ``mutual = true``.

Skipped, with the reason, where ``ip`` is missing or namespaces, veth pairs
or bridges may not be created (not root, a restricted container).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from conftest import read_report, run_ppc

pytestmark = pytest.mark.slow

SUBNET = "10.250.61"  # private, assigned only inside the test's own namespaces
ADDRESSES = {"coordinator": f"{SUBNET}.1", "lab": f"{SUBNET}.2", "winery": f"{SUBNET}.3"}
PARTIES = ("lab", "winery")
IFACE = "ppc0"  # each host's one link, inside its own namespace
IP_TIMEOUT = 15.0
RUN_TIMEOUT = 120.0

SCENARIO = """\
name = "across-hosts"
seed = 7
deadline = 90

[data]
source = "sklearn:wine"
label_column = "target"

[[parties]]
name = "lab"
columns = ["alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols"]
method = "drbt"
projection = "gaussian"
k = 3

[[parties]]
name = "winery"
columns = ["flavanoids", "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue",
           "od280/od315_of_diluted_wines", "proline"]
method = "rotation"

[clustering]
algorithm = "kmeans"
n_clusters = 3
"""

# Run inside the coordinator's namespace before the session: accept one TCP
# connection per party host, echo what it sends and print where it came from.
PROBE_SERVER = """\
import socket, sys
from pathlib import Path
with socket.socket() as srv:
    srv.settimeout(20)
    srv.bind((sys.argv[1], 0))
    srv.listen()
    Path(sys.argv[2]).write_text(str(srv.getsockname()[1]))
    for _ in range(int(sys.argv[3])):
        conn, peer = srv.accept()
        with conn:
            conn.settimeout(10)
            conn.sendall(conn.recv(64))
            print(peer[0], flush=True)
"""

PROBE_CLIENT = """\
import socket, sys
with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5) as s:
    s.settimeout(5)
    s.sendall(b"hello from " + sys.argv[3].encode())
    print(s.recv(64).decode())
"""


def ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=IP_TIMEOUT, stdin=subprocess.DEVNULL)


def ip_json(*args: str):
    done = ip("-j", *args)
    assert done.returncode == 0, f"ip -j {' '.join(args)}: {done.stderr.strip()}"
    return json.loads(done.stdout or "[]")


NOT_PERMITTED = ("Operation not permitted", "Permission denied", "not supported", "Unknown device type")


@dataclass
class Network:
    """Names of the namespaces the test made: one per host, and the bridge's."""

    hosts: dict[str, str]
    bridge: str
    made: list[str] = field(default_factory=list)

    def exec(self, host: str, *cmd) -> list[str]:
        return ["ip", "netns", "exec", self.hosts[host], *map(str, cmd)]

    def counters(self, host: str) -> dict[str, int]:
        """Bytes through this host's one link so far, both ways."""
        (link,) = ip_json("-n", self.hosts[host], "-s", "link", "show", IFACE)
        return {"rx": link["stats64"]["rx"]["bytes"], "tx": link["stats64"]["tx"]["bytes"]}


def setup_step(*args: str) -> None:
    """One ``ip`` command of the set-up; skip where the kernel or the sandbox forbids it, fail otherwise."""
    done = ip(*args)
    if done.returncode != 0:
        message = f"'ip {' '.join(args)}' failed: {done.stderr.strip()}"
        if any(s.lower() in done.stderr.lower() for s in NOT_PERMITTED):
            pytest.skip(f"cannot build the test network here: {message}")
        raise AssertionError(message)


@pytest.fixture(scope="module")
def network(tmp_path_factory):
    if not sys.platform.startswith("linux"):
        pytest.skip("needs Linux network namespaces")
    if shutil.which("ip") is None:
        pytest.skip("needs the 'ip' command from iproute2 (e.g. apt-get install iproute2), not found on PATH")
    tag = f"ppct{os.getpid()}"
    net = Network(hosts={h: f"{tag}-{h}" for h in ADDRESSES}, bridge=f"{tag}-br")
    try:
        for ns in (net.bridge, *net.hosts.values()):
            done = ip("netns", "add", ns)
            if done.returncode != 0:
                pytest.skip(f"'ip netns add' is not permitted here: {done.stderr.strip()}")
            net.made.append(ns)
        # The bridge and both ends of every veth pair are created inside the
        # test's namespaces; the root namespace is never touched.
        setup_step("-n", net.bridge, "link", "add", "br0", "type", "bridge")
        setup_step("-n", net.bridge, "link", "set", "br0", "up")
        for n, (host, ns) in enumerate(net.hosts.items()):
            port = f"v{n}"
            setup_step("-n", net.bridge, "link", "add", port, "type", "veth", "peer", "name", IFACE, "netns", ns)
            setup_step("-n", net.bridge, "link", "set", port, "master", "br0")
            setup_step("-n", net.bridge, "link", "set", port, "up")
            setup_step("-n", ns, "link", "set", "lo", "up")
            setup_step("-n", ns, "addr", "add", f"{ADDRESSES[host]}/24", "dev", IFACE)
            setup_step("-n", ns, "link", "set", IFACE, "up")
        check_isolation(net)
        check_connectivity(net, tmp_path_factory.mktemp("probe") / "port")
        yield net
    finally:
        failed = []
        for ns in reversed(net.made):  # deleting a namespace deletes its links, and their veth peers
            done = ip("netns", "del", ns)
            if done.returncode != 0:
                failed.append(f"{ns}: {done.stderr.strip()}")
        left = set(ip("netns", "list").stdout.split()) & set(net.made)
        assert not failed and not left, f"could not remove the test's namespaces: {failed or sorted(left)}"


def check_isolation(net: Network) -> None:
    """The test's network is closed: the bridge joins only the three hosts, each host has no route out."""
    links = {link["ifname"]: link for link in ip_json("-n", net.bridge, "-d", "link", "show")}
    ports = {f"v{n}" for n in range(len(net.hosts))}
    assert set(links) == {"lo", "br0", *ports}, sorted(links)
    assert all(links[p].get("master") == "br0" for p in ports)
    for host, ns in net.hosts.items():
        assert {link["ifname"] for link in ip_json("-n", ns, "link", "show")} == {"lo", IFACE}
        # beyond its own addresses (the "local" table), a host routes only to the test's /24 (and to
        # IPv6 link-local neighbours, which are on the bridge too): no default route, no way out
        for family, allowed in (("-4", {f"{SUBNET}.0/24"}), ("-6", {"fe80::/64"})):
            routes = ip_json("-n", ns, family, "route", "show", "table", "all")
            outward = [r for r in routes if r.get("table") != "local" and r["dst"] not in allowed]
            assert not outward, f"{host} has routes beyond the test's network: {outward}"
            assert all(r.get("dev") in ("lo", IFACE) for r in routes), routes
        addresses = [a["local"] for link in ip_json("-n", ns, "addr", "show") for a in link.get("addr_info", [])
                     if a["family"] == "inet"]
        assert sorted(addresses) == sorted(["127.0.0.1", ADDRESSES[host]])
    # and the root namespace holds none of the test's addresses
    root = [a["local"] for link in ip_json("addr", "show") for a in link.get("addr_info", [])]
    assert not [a for a in root if a.startswith(f"{SUBNET}.")], root


def check_connectivity(net: Network, with_port: Path) -> None:
    """A TCP round trip from each party host to the coordinator host (not ping: ICMP may be filtered)."""
    server = subprocess.Popen(
        net.exec("coordinator", sys.executable, "-c", PROBE_SERVER, ADDRESSES["coordinator"], with_port, len(PARTIES)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        port = wait_for_port(with_port, server, 20)
        for party in PARTIES:
            client = subprocess.run(
                net.exec(party, sys.executable, "-c", PROBE_CLIENT, ADDRESSES["coordinator"], port, party),
                capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
            assert client.returncode == 0, f"{party} cannot reach the coordinator host: {client.stderr}"
            assert client.stdout.strip() == f"hello from {party}"
        out, err = server.communicate(timeout=30)
        assert server.returncode == 0, err
        # the coordinator host saw each party host's own address
        assert out.split() == [ADDRESSES[p] for p in PARTIES]
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()


def wait_for_port(path: Path, proc: subprocess.Popen, seconds: float, log: Path | None = None) -> int:
    end = time.monotonic() + seconds
    while not (path.exists() and path.read_text().strip().isdigit()):
        if proc.poll() is not None:
            said = log.read_text() if log else proc.communicate()[1]
            raise AssertionError(f"exited {proc.returncode} before writing its port: {said}")
        assert time.monotonic() < end, f"no port in {path} after {seconds} s"
        time.sleep(0.05)
    return int(path.read_text())


def assert_root_namespace_cannot_reach(net: Network, port: int) -> None:
    """Nothing outside the test's namespaces can talk to the coordinator.

    The coordinator's host has no route beyond 10.250.61.0/24 (checked by
    ``check_isolation``), so it cannot answer the root namespace's address:
    the kernel there says so without a packet being sent. Where the root
    namespace has no route to 10.250.61.1 either, a real connect is tried
    and must fail at once. Where it has one (a default route), the connect
    is not tried: its SYN would leave this machine through that route, to
    an address the test does not own.
    """
    route = ip("-j", "route", "get", ADDRESSES["coordinator"])
    if route.returncode != 0:
        started = time.monotonic()
        with socket.socket() as s, pytest.raises(OSError):
            s.settimeout(3)
            s.connect((ADDRESSES["coordinator"], port))
        assert time.monotonic() - started < 3
        return
    (towards,) = json.loads(route.stdout)
    root_links = {link["ifname"] for link in ip_json("link", "show")}
    # the root namespace would use one of its own links (off the machine), never one of the test's
    assert towards["dev"] in root_links and towards["dev"] != IFACE
    source = towards.get("prefsrc") or towards.get("src")
    assert source, towards
    back = ip("-n", net.hosts["coordinator"], "route", "get", source)
    assert back.returncode != 0 and "unreachable" in back.stderr.lower(), (back.stdout, back.stderr)


def read_labels(path: Path) -> dict[str, int]:
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["id", "cluster"]
    return {r[0]: int(r[1]) for r in rows[1:]}


@pytest.mark.parametrize("mutual", [False, True], ids=["tls-and-tokens", "mutual-tls"])
def test_coordinator_and_parties_on_separate_hosts_over_tls(network: Network, tmp_path: Path, mutual: bool):
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(SCENARIO + ("\n[security]\nmutual = true\n" if mutual else ""))
    creds, out, port_file = tmp_path / "creds", tmp_path / "out", tmp_path / "port"
    made = run_ppc("credentials", scenario, "--out", creds, "--host", ADDRESSES["coordinator"],
                   cwd=tmp_path, timeout=60)
    assert made.returncode == 0, made.stderr

    before = {host: network.counters(host) for host in network.hosts}
    logs = tmp_path / "logs"
    logs.mkdir()
    procs: dict[str, subprocess.Popen] = {}

    def start(name: str, *args) -> None:
        # output to files, not pipes: nothing can block on a full pipe while the others are awaited
        with open(logs / f"{name}.out", "w") as stdout, open(logs / f"{name}.err", "w") as stderr:
            procs[name] = subprocess.Popen(network.exec(name, sys.executable, "-m", "ppcsim", *args), stdout=stdout,
                                           stderr=stderr, stdin=subprocess.DEVNULL, cwd=tmp_path)

    try:
        start("coordinator", "coordinator", "--listen", f"{ADDRESSES['coordinator']}:0", "--port-file", port_file,
              "--scenario", scenario, "--credentials", creds, "--out", out)
        port = wait_for_port(port_file, procs["coordinator"], 60, logs / "coordinator.err")
        assert_root_namespace_cannot_reach(network, port)
        for party in PARTIES:
            start(party, "party", "--coordinator", f"{ADDRESSES['coordinator']}:{port}", "--scenario", scenario,
                  "--party", party, "--credentials", creds / "parties" / party,
                  "--labels-out", tmp_path / f"{party}-labels.csv", "--timeout", 90)
        # wait for all three, but stop at the first one that fails instead of waiting out the deadline
        end = time.monotonic() + RUN_TIMEOUT
        while time.monotonic() < end:
            codes = [p.poll() for p in procs.values()]  # poll every one: each call updates its returncode
            if all(c is not None for c in codes) or any(c not in (None, 0) for c in codes):
                break
            time.sleep(0.1)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
    after = {host: network.counters(host) for host in network.hosts}

    results = {name: (proc.returncode, (logs / f"{name}.err").read_text()) for name, proc in procs.items()}
    # the ones that failed on their own first, then any the test had to kill
    failed = sorted((code < 0, name, code, stderr) for name, (code, stderr) in results.items() if code != 0)
    assert not failed, "\n".join(f"{name} {'was killed' if killed else f'exited {code}'}: {stderr}"
                                  for killed, name, code, stderr in failed)
    for name, (_, stderr) in results.items():
        assert "Traceback" not in stderr, f"{name}: {stderr}"
    transport = "mutual TLS" if mutual else "TLS"
    assert f"listening on port {port} ({transport})" in results["coordinator"][1]

    report = read_report(out)
    assert report["state"] == "done" and report["error"] is None
    assert report["join"] == {"rows_joined": 178, "dropped": {"lab": 0, "winery": 0}}
    assert [(p["name"], p["method"], p["output_dims"]) for p in report["parties"]] == [
        ("lab", "drbt", 3), ("winery", "rotation", 7)]
    security = report["security"]
    assert security["tls"] is True and security["tokens"] is True and security["mutual"] is mutual
    identity = "token and certificate" if mutual else "token"
    assert security["parties"] == {p: {"transport": transport, "identity": identity} for p in PARTIES}

    # each party got the shared clustering, over the wire from the other host; the coordinator's labels.csv
    # lists the records by the pseudonyms it received (both parties hold the wine rows 0..177 in order)
    shared = read_labels(out / "labels.csv")
    assert len(shared) == 178
    with np.load(out / "sent" / "lab.npz") as npz:
        pseudonym = dict(zip(map(str, range(178)), npz["ids"].tolist()))
    assert not set(shared) & set(pseudonym)
    for party in PARTIES:
        assert {pseudonym[i]: c for i, c in read_labels(tmp_path / f"{party}-labels.csv").items()} == shared

    # every byte of the session crossed the test's veth links (TLS adds to the serialized sizes)
    sent = {p: report["communication"]["by_party"][p] for p in PARTIES}
    grew = {h: {d: after[h][d] - before[h][d] for d in ("rx", "tx")} for h in network.hosts}
    for party in PARTIES:
        assert grew[party]["tx"] >= sent[party]["up"]["serialized"], (party, grew, sent)
        assert grew[party]["rx"] >= sent[party]["down"]["serialized"], (party, grew, sent)
    assert grew["coordinator"]["rx"] >= sum(s["up"]["serialized"] for s in sent.values()), (grew, sent)
    assert grew["coordinator"]["tx"] >= sum(s["down"]["serialized"] for s in sent.values()), (grew, sent)
