"""The counting relay: exact byte counts in both directions, and a shaped link is never faster than its rate."""

from __future__ import annotations

import socket
import threading
import time

from conftest import IRIS_DRBT_OSBR, read_report, run_ppc, scenario_toml, write_scenario
from ppcsim.run.relay import Link, Relay


def echo_server(expect: int):
    """A plain TCP server that reads ``expect`` bytes and answers 'ok'."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()

    def serve():
        conn, _ = srv.accept()
        n = 0
        while n < expect and (data := conn.recv(1 << 16)):
            n += len(data)
        conn.sendall(b"ok")
        conn.close()
        srv.close()

    threading.Thread(target=serve, daemon=True).start()
    return srv.getsockname()[1]


def send_through(link: Link, size: int) -> tuple[Relay, float]:
    port = echo_server(size)
    relay = Relay(f"127.0.0.1:{port}", link).start()
    t = time.monotonic()
    with socket.create_connection(("127.0.0.1", relay.port), timeout=30) as s:
        s.sendall(b"x" * size)
        assert s.recv(2) == b"ok"
    elapsed = time.monotonic() - t
    time.sleep(0.1)
    relay.stop()
    return relay, elapsed


def test_counts_every_byte_once_each_way():
    relay, _ = send_through(Link(), 3_000_017)
    assert relay.counts.up.bytes == 3_000_017 and relay.counts.down.bytes == 2 and relay.counts.connections == 1


def test_counts_the_same_where_the_kernel_cannot_splice(monkeypatch):
    monkeypatch.delattr("os.splice")  # the relay then copies each chunk itself
    relay, _ = send_through(Link(), 3_000_017)
    assert relay.counts.up.bytes == 3_000_017 and relay.counts.down.bytes == 2 and relay.counts.connections == 1


def test_a_shaped_link_takes_at_least_its_transmission_time_and_latency():
    relay, elapsed = send_through(Link(bandwidth_mbit=80, latency_ms=30), 2_000_000)
    assert relay.counts.up.bytes == 2_000_000
    # 2 MB at 80 Mbit/s is 0.2 s, plus 30 ms each way for the reply
    assert elapsed >= 0.2 + 0.06
    assert Link(bandwidth_mbit=80, latency_ms=30).describe() == "80 Mbit/s, 30 ms one way"


def test_runs_report_wire_bytes_and_the_link(tmp_path):
    path = write_scenario(tmp_path, scenario_toml(
        "wire", IRIS_DRBT_OSBR, data="sklearn:iris", clustering={"algorithm": "agglomerative", "n_clusters": 3},
        network={"latency_ms": 5, "b": {"bandwidth_mbit": 50}}))
    proc = run_ppc("run", path, "--out", tmp_path / "out", "--no-attacks")
    assert proc.returncode == 0, proc.stderr
    a, b = read_report(tmp_path / "out")["parties"]
    for p in (a, b):
        # TLS records, HTTP/2 frames and headers come on top of the serialised messages
        assert p["bytes"]["wire"] > p["bytes"]["serialized"] > p["bytes"]["payload"] == p["bytes"]["predicted"]
        assert p["bytes"]["wire_down"] > 0 and p["network"]["connections"] >= 1 and "wire_down" not in p["network"]
    assert a["network"]["link"] == "unlimited bandwidth, 5 ms one way"
    assert b["network"]["link"] == "50 Mbit/s, 5 ms one way"
    assert "network b: 50 Mbit/s, 5 ms one way; join and upload took" in proc.stderr


def test_network_table_is_validated(tmp_path):
    path = write_scenario(tmp_path, """
        [data]
        source = "sklearn:iris"
        [[parties]]
        name = "a"
        columns = ["sepal length (cm)"]
        method = "none"
        [network]
        bandwidth_mbit = 0
        jitter = 3
    """)
    proc = run_ppc("run", path, "--out", tmp_path / "out")
    assert proc.returncode == 2
    assert "[network]: 'bandwidth_mbit' must be a positive number, got 0" in proc.stderr
    assert "[network]: unknown field 'jitter'" in proc.stderr
