"""Target 2: a party's upload throughput against a plain TCP socket sending the same bytes, same run.

A coordinator process (plaintext loopback, and again over TLS) receives one
party's ROWS x COLS float64 block through the real Upload stream; a plain
socket then sends the same number of bytes to a process that reads and
discards them. Throughput is payload bytes over the time of the transfer.

Two more lines split the gap between the socket and the Upload: the same
serialised messages sent to a gRPC server that only counts them (what gRPC's
Python binding carries on its own), and to one that also keeps their bytes in
one buffer (what any receiver that keeps the data pays on top: the socket's
reader reuses one 1 MiB buffer). A third reads them as the coordinator does,
on gRPC's asyncio server's event loop, and copies them in a thread (what the
coordinator's design costs before any of its own work). The Upload adds
parsing and checking.

Every receiver has finished starting before its clock starts: the sinks have
imported what they use when they print their port, and the coordinator is
left until it is idle, since a session imports scikit-learn in the
background as it is created (``coordinator.clustering.preload_in_background``),
which in a ``ppc run`` overlaps the parties' own start.

Every transfer is made ``--repeat`` times (3 by default), in turn, and each
line keeps its fastest: on a machine shared with other work one transfer of
400 MB varies by up to 2x from run to run, and the fastest is the one least
disturbed.

    python bench/throughput.py [--rows 500000] [--cols 100] [--repeat 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
import numpy as np
import psutil

from parties.client import ClientSecurity, CoordinatorClient, agree_pseudonym_key, upload_messages
from parties.keys import KeyPair
from parties.methods import Sent
from parties.pseudonyms import pseudonyms
from ppcsim.cli.entry import process_settings
from protos.serde import CHUNK_BYTES, Layout

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Figures  # noqa: E402

process_settings()  # ppc's process settings: this process's allocator, and what the processes it starts inherit

ASYNC_SINK = """
import asyncio, mmap, sys
import grpc
from ppcsim.cli.entry import process_settings; process_settings()  # ppc's process settings, before numpy
import numpy as np
async def up(messages, context):
    keep = np.frombuffer(mmap.mmap(-1, int(sys.argv[1])), dtype=np.uint8)
    loop = asyncio.get_running_loop()
    def take():
        n = 0
        while True:
            try:
                m = asyncio.run_coroutine_threadsafe(messages.__anext__(), loop).result()
            except StopAsyncIteration:
                return n
            keep[n : n + len(m)] = np.frombuffer(m, dtype=np.uint8)
            n += len(m)
    return (await loop.run_in_executor(None, take)).to_bytes(8, "little")
async def main():
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "sink.Sink", {"Up": grpc.stream_unary_rpc_method_handler(up)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()
asyncio.run(main())
"""

GRPC_SINK = """
import mmap, sys
from concurrent import futures
import grpc
from ppcsim.cli.entry import process_settings; process_settings()  # ppc's process settings, before numpy
import numpy as np
def up(messages, context):
    keep = np.frombuffer(mmap.mmap(-1, int(sys.argv[1])), dtype=np.uint8) if int(sys.argv[1]) else None
    n = 0
    for m in messages:
        if keep is not None:
            keep[n : n + len(m)] = np.frombuffer(m, dtype=np.uint8)
        n += len(m)
    return n.to_bytes(8, "little")
server = grpc.server(futures.ThreadPoolExecutor(2))
server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
    "sink.Sink", {"Up": grpc.stream_unary_rpc_method_handler(up)}),))
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print(port, flush=True)
server.wait_for_termination()
"""

SINK = """
import socket, sys
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
print(srv.getsockname()[1], flush=True)
conn, _ = srv.accept(); want = int(sys.argv[1]); got = 0
buf = bytearray(1 << 20)
while got < want:
    n = conn.recv_into(buf)
    if not n: break
    got += n
conn.sendall(b"k"); conn.close()
"""


def coordinator(tmp: Path, rows: int, tls: bool) -> tuple[subprocess.Popen, int, Path | None]:
    security = "" if tls else "[security]\ntls = false\ntokens = false\n"
    scenario = tmp / f"tp-{tls}.toml"
    scenario.write_text(f'name = "tp"\ndeadline = 3600\n{security}[data]\nsource = "synthetic:blobs"\nrows = {rows}\n'
                        'columns = 2\nclusters = 2\n[[parties]]\nname = "a"\ncolumns = ["x0"]\nmethod = "none"\n'
                        '[clustering]\nn_clusters = 2\nn_init = 1\n')
    creds = None
    if tls:
        creds = tmp / "creds"
        subprocess.run([sys.executable, "-m", "ppcsim", "credentials", str(scenario), "--out", str(creds)], check=True,
                       capture_output=True)
    port_file = tmp / f"port-{tls}"
    proc = subprocess.Popen([sys.executable, "-m", "ppcsim", "coordinator", "--listen", "127.0.0.1:0", "--port-file",
                             str(port_file), "--scenario", str(scenario), *(["--credentials", str(creds)] if creds else [])],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not (port_file.exists() and port_file.read_text().strip()):
        time.sleep(0.05)
    return proc, int(port_file.read_text()), creds


def idle(pid: int, seconds: float = 1.0, limit: float = 120.0) -> None:
    """Wait until process ``pid`` has used (almost) no CPU for ``seconds``: its start-up work is done."""
    proc = psutil.Process(pid)

    def used() -> float:
        times = proc.cpu_times()
        return times.user + times.system

    step, quiet, end = 0.25, 0.0, time.monotonic() + limit
    last = used()
    while quiet < seconds and time.monotonic() < end:
        time.sleep(step)
        now = used()
        quiet = quiet + step if now - last < 0.005 else 0.0
        last = now


def grpc_upload(rows: int, cols: int, tls: bool) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        proc, port, creds = coordinator(Path(tmp), rows, tls)
        try:
            security = ClientSecurity.load(creds, "a") if creds else None
            client = CoordinatorClient(f"127.0.0.1:{port}", "tp", "a", security, tls=tls)
            pair = KeyPair.generate()  # pseudonymous ids, the default: Join carries the party's public key
            reply = client.join(60, pair.public)
            key = agree_pseudonym_key(client, reply, pair, None, security, 60)
            block = np.random.default_rng(0).standard_normal((rows, cols))
            ids = pseudonyms(key, np.arange(rows))
            # serialised as a party sends them, before the clock starts, as the socket's bytes are
            messages = list(upload_messages("tp", "a", "none", {}, ids, [Sent("data", block, Layout.ROWS)], cols,
                                            CHUNK_BYTES, serialised=True))
            idle(proc.pid)  # the session's background import of scikit-learn done, as the sinks' imports are
            t = time.perf_counter()
            client.upload(iter(messages), timeout=600)
            return time.perf_counter() - t, block.nbytes
        finally:
            proc.kill()
            proc.wait()


def grpc_alone(messages: list[bytes], keep: bool, server: str = GRPC_SINK) -> float:
    """Seconds to stream ``messages`` (serialised) to a gRPC server that counts them (and, with ``keep``,
    copies them into one buffer of their total size, allocated as the stream starts); ``server`` ASYNC_SINK:
    gRPC's asyncio server, each message read on its event loop and copied by a thread, as the coordinator
    takes an upload in."""
    total = sum(map(len, messages)) + 2 * len(messages[0]) if keep else 0
    sink = subprocess.Popen([sys.executable, "-c", server, str(total)], stdout=subprocess.PIPE, text=True)
    try:
        port = int(sink.stdout.readline())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            up = channel.stream_unary("/sink.Sink/Up")
            up(iter(messages[:2]), wait_for_ready=True, timeout=60)  # connected before the clock starts
            t = time.perf_counter()
            up(iter(messages), timeout=600)
            return time.perf_counter() - t
    finally:
        sink.kill()
        sink.wait()


def socket_send(nbytes: int) -> float:
    sink = subprocess.Popen([sys.executable, "-c", SINK, str(nbytes)], stdout=subprocess.PIPE, text=True)
    port = int(sink.stdout.readline())
    data = np.random.default_rng(0).bytes(nbytes)
    with socket.create_connection(("127.0.0.1", port)) as s:
        t = time.perf_counter()
        s.sendall(data)
        s.recv(1)
        seconds = time.perf_counter() - t
    sink.wait()
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--cols", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3, metavar="N",
                        help="rounds of every transfer, one after the other; each line keeps its fastest (default 3)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON (see harness.Figures)")
    args = parser.parse_args()
    block = np.random.default_rng(0).standard_normal((args.rows, args.cols))
    ids = pseudonyms(os.urandom(32), np.arange(args.rows))
    serialised = list(upload_messages("tp", "a", "none", {}, ids, [Sent("data", block, Layout.ROWS)], args.cols,
                                      CHUNK_BYTES, serialised=True))
    del block
    names = ("socket", "Upload", "Upload over TLS", "gRPC alone", "gRPC bytes kept", "gRPC asyncio bytes kept")
    times: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(max(args.repeat, 1)):  # in turn, so that a passing load weighs on every line alike
        plain, nbytes = grpc_upload(args.rows, args.cols, tls=False)
        times["Upload"].append(plain)
        times["Upload over TLS"].append(grpc_upload(args.rows, args.cols, tls=True)[0])
        times["gRPC alone"].append(grpc_alone(serialised, keep=False))
        times["gRPC bytes kept"].append(grpc_alone(serialised, keep=True))
        times["gRPC asyncio bytes kept"].append(grpc_alone(serialised, keep=True, server=ASYNC_SINK))
        times["socket"].append(socket_send(nbytes))
    best = {name: min(seconds) for name, seconds in times.items()}
    raw, plain, tls, alone, kept, kept_async = (best[name] for name in names)
    mb = nbytes / 1e6
    print(f"{mb:,.0f} MB of float64 ({args.rows:,} x {args.cols}) from one party; each line the fastest of "
          f"{len(times['socket'])} rounds (MB/s of every round in brackets)")

    def spread(name: str) -> str:
        return "[" + " ".join(f"{mb / s:.0f}" for s in times[name]) + "]"

    print(f"plain TCP socket      {raw:7.2f} s  {mb / raw:8.0f} MB/s   {spread('socket')}")
    print(f"gRPC Upload           {plain:7.2f} s  {mb / plain:8.0f} MB/s   ratio {raw / plain:.2f}  (target >= 0.5)  "
          f"{spread('Upload')}")
    print(f"gRPC Upload over TLS  {tls:7.2f} s  {mb / tls:8.0f} MB/s   ratio {raw / tls:.2f}  {spread('Upload over TLS')}")
    print(f"gRPC alone            {alone:7.2f} s  {mb / alone:8.0f} MB/s   ratio {raw / alone:.2f}  "
          f"(the same messages, counted and dropped)  {spread('gRPC alone')}")
    print(f"gRPC, bytes kept      {kept:7.2f} s  {mb / kept:8.0f} MB/s   ratio {raw / kept:.2f}  "
          f"(the same messages, copied into one buffer)  {spread('gRPC bytes kept')}")
    print(f"gRPC asyncio, kept    {kept_async:7.2f} s  {mb / kept_async:8.0f} MB/s   ratio {raw / kept_async:.2f}  "
          f"(the same, read by gRPC's asyncio server and copied by a thread)  {spread('gRPC asyncio bytes kept')}")
    print(f"Upload / gRPC bytes kept {kept / plain:.2f} (target >= 0.9); Upload / gRPC asyncio kept "
          f"{kept_async / plain:.2f}")
    out = Figures("throughput.py")
    for name, seconds in best.items():
        out.add(f"{name} MB/s", mb / seconds)
    out.check("Upload / socket", raw / plain, ">=", 0.5)
    out.check("Upload / gRPC bytes kept", kept / plain, ">=", 0.9)
    f = out.figures
    out.write(args.json, f"socket {f['socket MB/s']:,.0f} MB/s; Upload {f['Upload MB/s']:,.0f} MB/s, over TLS "
              f"{f['Upload over TLS MB/s']:,.0f} MB/s; gRPC alone {f['gRPC alone MB/s']:,.0f} MB/s, keeping the bytes "
              f"{f['gRPC bytes kept MB/s']:,.0f} MB/s, on gRPC's asyncio server with a thread "
              f"{f['gRPC asyncio bytes kept MB/s']:,.0f} MB/s ({mb:,.0f} MB from one party, fastest of "
              f"{len(times['socket'])} rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
