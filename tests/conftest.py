"""Shared helpers: run the real ``ppc`` command in a subprocess, write scenario files."""

from __future__ import annotations

import csv
import html
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from parties.serde import varint

#: The unit and process tiers (tests/tiers.py): a test that starts a process or a server is marked "processes";
#: the longest tests first (tests/longest_first.py), so that the workers of -n finish together.
pytest_plugins = ("tiers", "longest_first", "pytester")

#: The repository's root folder.
ROOT = Path(__file__).resolve().parent.parent


def run_ppc(*args: str, timeout: float = 180.0, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python -m ppcsim ARGS`` in a fresh process; never hangs past ``timeout``."""
    return subprocess.run(
        [sys.executable, "-m", "ppcsim", *map(str, args)],
        capture_output=True, text=True, timeout=timeout, cwd=cwd, stdin=subprocess.DEVNULL,
    )


def by_hand(path: Path, tmp_path: Path, parties: list[str], timeout: float = 120.0,
            party_options: tuple[str, ...] = ()) -> dict[str, str]:
    """The by-hand roles of scenario ``path``: ``ppc credentials``, then ``ppc coordinator`` and one ``ppc party``
    per name (with ``party_options`` added), each in its own process over loopback; every party writes
    ``tmp_path/<name>.csv`` and the coordinator ``tmp_path/out``. Returns each party's stderr; asserts every
    process exited 0."""
    creds, out, port_file = tmp_path / "creds", tmp_path / "out", tmp_path / "port"
    assert run_ppc("credentials", path, "--out", creds).returncode == 0
    ppc = [sys.executable, "-m", "ppcsim"]
    opts = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    coordinator = subprocess.Popen(ppc + ["coordinator", "--listen", "127.0.0.1:0", "--port-file", str(port_file),
                                          "--scenario", str(path), "--out", str(out), "--credentials", str(creds)],
                                   **opts)
    procs, errors = {}, {}
    try:
        end = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip().isdigit()):
            assert time.monotonic() < end and coordinator.poll() is None
            time.sleep(0.05)
        address = f"127.0.0.1:{port_file.read_text().strip()}"
        for name in parties:
            procs[name] = subprocess.Popen(
                ppc + ["party", "--coordinator", address, "--scenario", str(path), "--party", name, "--credentials",
                       str(creds / "parties" / name), "--labels-out", str(tmp_path / f"{name}.csv"),
                       *party_options], **opts)
        for name, p in procs.items():
            _, errors[name] = p.communicate(timeout=timeout)
            assert p.returncode == 0, errors[name]
        coordinator.communicate(timeout=60)
        assert coordinator.returncode == 0
    finally:
        for p in [coordinator, *procs.values()]:
            if p.poll() is None:
                p.kill()
                p.wait()
    return errors


#: The thirteen feature columns of scikit-learn's wine data (``sklearn:wine``), in its order.
WINE = ("alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols", "flavanoids",
        "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue", "od280/od315_of_diluted_wines", "proline")


def party_table(name: str, columns, method: str | None = "none", **params) -> dict:
    """One ``[[parties]]`` table: its name, its columns, its disguise method (None: no ``method`` field, as in a
    secure-aggregation or MPC session) and the method's parameters."""
    return {"name": name, "columns": list(columns), "method": method, **params}


def changed(parties, name: str, **fields) -> list[dict]:
    """``parties`` with party ``name``'s fields changed (a field given None is removed); the others as they are."""
    out = [dict(one) for one in parties]
    one = next(one for one in out if one.get("name") == name)
    one.update(fields)
    for key in [k for k, v in fields.items() if v is None]:
        del one[key]
    return out


#: ``[data]`` of scikit-learn's wine data with its true classes, for the observer's utility.
WINE_LABELLED = {"source": "sklearn:wine", "label_column": "target"}

#: Two wine parties disguising with DRBT: the lab's six columns to k = 4, the shop's four to k = 3 (sparse).
LAB_SHOP_DRBT = (party_table("lab", WINE[:6], "drbt", k=4),
                 party_table("shop", ("hue", "proline", "color_intensity", "flavanoids"), "drbt", projection="sparse",
                             k=3))


#: The wine columns of the shop in the three-party wine scenarios (the lab holds ``WINE[:5]``, the winery
#: ``WINE[5:9]``).
SHOP = ("color_intensity", "hue", "proline")

#: The four feature columns of scikit-learn's iris data (``sklearn:iris``).
IRIS = ("sepal length (cm)", "sepal width (cm)", "petal length (cm)", "petal width (cm)")

#: Two iris parties: a's sepals by DRBT to one dimension, b's petals as OSBR dissimilarities.
IRIS_DRBT_OSBR = (party_table("a", IRIS[:2], "drbt", k=1), party_table("b", IRIS[2:], "osbr"))

#: ``[security]`` of a plain-text session on loopback: no TLS, no tokens.
NO_TLS = {"tls": False, "tokens": False}


def blobs(rows: int, columns: int, clusters: int, **options) -> dict:
    """``[data]`` of generated Gaussian blobs (``synthetic:blobs``): ``rows`` records of the columns x0, x1 ...
    around ``clusters`` centres; ``options``: the source's other fields (``cluster_std``, ``label_column`` ...)."""
    return {"source": "synthetic:blobs", "rows": rows, "columns": columns, "clusters": clusters, **options}


def split_x(*widths: int, method: str | None = None) -> list[dict]:
    """Parties a, b, c ... holding the blob columns x0, x1 ... in turn, ``widths[i]`` columns each, with no
    ``method`` field unless one is given (a secure-aggregation or MPC session's parties)."""
    parties, first = [], 0
    for i, width in enumerate(widths):
        columns = [f"x{j}" for j in range(first, first + width)]
        parties.append(party_table("abcdefghijklmnopqrstuvwxyz"[i], columns, method))
        first += width
    return parties


def kmeans(n_clusters: int, protocol: str | None = None, **fields) -> dict:
    """``[clustering]`` of k-means, under ``protocol`` (``secure_aggregation``, ``mpc``) when one is given."""
    return {"algorithm": "kmeans", "protocol": protocol, "n_clusters": n_clusters, **fields}


def _toml_key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return "[" + ", ".join(_toml_value(v) for v in value) + "]"


def _toml_table(header: str, table: dict, inline: bool = False) -> list[str]:
    """``[header]`` (or nothing for the top level), its plain fields, then its sub-tables as ``[header.key]``
    (or, ``inline``, as inline tables among its fields)."""
    lines = [f"[{header}]"] if header else []
    lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in table.items()
              if v is not None and (inline or not isinstance(v, dict))]
    for k, v in table.items():
        if isinstance(v, dict) and not inline:
            lines += _toml_table(f"{header}.{_toml_key(k)}" if header else _toml_key(k), v)
    return lines


def scenario_toml(name: str = "test", parties=(), *, data: str | dict | None = "sklearn:wine",
                  clustering: dict | None = None, security: dict | None = None, network: dict | None = None,
                  sweep: dict | None = None, tables: dict | None = None, **top) -> str:
    """A scenario file's text from keyword arguments, for tests that write their own scenario.

    ``parties`` are ``[[parties]]`` tables (see :func:`party_table`); ``data`` is the ``[data]`` table, or its
    ``source`` alone (None: no ``[data]``, every party reads its own file); ``clustering``, ``security``,
    ``network`` and ``sweep`` are those tables (a dict inside a table is its sub-table: ``network={"b": {...}}``
    writes ``[network.b]``), ``tables`` any other tables; every other keyword is a top-level field (``seed``,
    ``deadline``, ``chunk_bytes`` ...). A field whose value is None is left out. Keys that are not bare TOML keys
    (``"lab.columns"``) are quoted. The tables come in the order top-level fields, ``[data]``, ``[[parties]]``,
    ``[clustering]``, ``[security]``, ``[network]``, ``tables``, ``[sweep]``, so text appended to the result
    without a header of its own lands in the last of them.

    Example: ``scenario_toml("two", [party_table("a", IRIS[:2], "drbt", k=1), party_table("b", IRIS[2:])],
    seed=3, data="sklearn:iris", clustering=kmeans(3), security=NO_TLS)``."""
    lines = _toml_table("", {"name": name, **top})
    if data is not None:
        lines += _toml_table("data", {"source": data} if isinstance(data, str) else data)
    for one in parties:
        lines += ["[[parties]]", *_toml_table("", one, inline=True)]
    sections = {"clustering": clustering, "security": security, "network": network, **(tables or {}), "sweep": sweep}
    for header, table in sections.items():
        if table is not None:
            lines += _toml_table(header, table)
    return "\n".join(lines) + "\n"


def write_scenario(directory: Path, text: str | None = None, filename: str = "scenario.toml", **scenario) -> Path:
    """Write ``directory/filename``: ``text`` (dedented), or the scenario that :func:`scenario_toml` builds from
    the keyword arguments (``name``, ``parties``, ``data`` ...). Returns the path."""
    path = directory / filename
    path.write_text(textwrap.dedent(text) if text is not None else scenario_toml(**scenario))
    return path


#: Three wine parties (lab, winery, shop: all thirteen columns) in a secure-aggregation k-means session in which the
#: arbiter reads the summed distances (reveal = "distances", FATE's design; the default opens the labels only).
WINE_SECURE_AGGREGATION = scenario_toml(
    "wine-secure", [party_table("lab", WINE[:5], None), party_table("winery", WINE[5:9], None),
                    party_table("shop", WINE[9:], None)],
    seed=7, deadline=120, data=WINE_LABELLED, clustering=kmeans(3, "secure_aggregation", reveal="distances"))


#: The JSON Schema of report.json as the docs publish it: every report a test produces is checked against it.
REPORT_SCHEMA = ROOT / "docs" / "report.schema.json"


def check_report(data: dict, where: Path) -> None:
    """``data`` (a report.json) is what the published schema describes, checked by an independent validator
    (jsonschema), and reads back through ppcsim.report.model.Report to the same JSON."""
    import jsonschema

    from ppcsim.report.model import Report

    validator = jsonschema.Draft202012Validator(json.loads(REPORT_SCHEMA.read_text(encoding="utf-8")))
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    assert error is None, f"{where} is not what docs/report.schema.json describes: {error.json_path}: {error.message}"
    assert Report.from_json(data).to_json() == data, f"{where} does not read back through Report to the same JSON"


def read_report(out: Path) -> dict:
    data = json.loads((out / "report.json").read_text())
    check_report(data, out / "report.json")
    return data


@pytest.fixture(scope="session", autouse=True)
def every_report_validates(tmp_path_factory):
    """After the tests: every report.json a run wrote under the tests' temporary folders (the reports no test
    reads through read_report too) is checked against the published schema. Files that are not a run's report
    (placeholders some tests write, such as ``{}``) are left alone."""
    yield
    wrong = []
    for path in sorted(tmp_path_factory.getbasetemp().rglob("report.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "scenario" in data:
            try:
                check_report(data, path)
            except AssertionError as exc:
                wrong.append(str(exc).splitlines()[0])
    assert not wrong, "\n".join(wrong)


@pytest.fixture
def ppc():
    return run_ppc


def first_seen(labels) -> list[int]:
    """``labels`` renumbered in the order each cluster first appears (noise, -1, stays -1)."""
    seen: dict[int, int] = {}
    return [-1 if x == -1 else seen.setdefault(int(x), len(seen)) for x in labels]


def assert_same_partition(labels, expected) -> None:
    """The same clusters, whatever their numbers."""
    assert first_seen(labels) == first_seen(expected)


def once_per_run(tmp_path_factory, name: str, make) -> tuple[Path, subprocess.CompletedProcess]:
    """``make(folder)``, a finished process whose outputs are in ``folder``, done once per test run even with
    ``-n``: the first worker to ask makes it under a file lock in the folder every worker shares, the others wait
    for it and read the same folder and process. (``--dist loadgroup`` would send the tests that share it to one
    worker, but under pytest 9.2 it groups nothing: https://github.com/pytest-dev/pytest-xdist/issues/1386.)"""
    import fcntl

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        folder = tmp_path_factory.mktemp(name)
        return folder, make(folder)
    shared = tmp_path_factory.getbasetemp().parent
    folder, done = shared / name, shared / f"{name}.json"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            folder.mkdir()
            proc = make(folder)
            done.write_text(json.dumps([proc.args, proc.returncode, proc.stdout, proc.stderr], default=str))
    args, code, stdout, stderr = json.loads(done.read_text())
    return folder, subprocess.CompletedProcess(args, code, stdout, stderr)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """``ppc demo`` run once for every test that reads its outputs: the folder and the finished process."""
    tmp, proc = once_per_run(tmp_path_factory, "demo", lambda tmp: run_ppc("demo", "--out", tmp / "demo", cwd=tmp))
    return tmp / "demo", proc


@pytest.fixture(scope="session")
def docs_site(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """The documentation site as the README builds it (``sphinx-build -W -b html docs ...``), built once per test
    run (``once_per_run``) into a temporary folder: its html folder and the build's process. The tutorials are
    executed by the build (myst-nb), and their executed notebooks are in ``<html>/../jupyter_execute/tutorials/``.
    ``PPC_DOCS_SITE=DIR``: the tests read the build already made into ``DIR/html`` by the same command, with its
    exit code and output in ``DIR/build.rc``, ``build.stdout`` and ``build.stderr`` (``.ci/install-lines``
    writes them) instead of building the site again."""
    pytest.importorskip("sphinx", reason="the documentation site needs the docs extra: pip install -e '.[docs]'")
    pytest.importorskip("myst_nb", reason="the documentation site needs the docs extra: pip install -e '.[docs]'")
    given = os.environ.get("PPC_DOCS_SITE")
    if given:  # a build of the same checkout made beforehand (.ci/install-lines, by the docs extra alone)
        site = Path(given)
        build = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", str(ROOT / "docs"), str(site / "html")]
        return site / "html", subprocess.CompletedProcess(
            build, int((site / "build.rc").read_text()), (site / "build.stdout").read_text(),
            (site / "build.stderr").read_text())
    site, proc = once_per_run(tmp_path_factory, "site", lambda site: subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", str(ROOT / "docs"), str(site / "html")],
        capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL))
    return site / "html", proc


#: gRPC's C core logs to stderr by itself (e.g. "E1125 22:38:53.9 4482 add_port.cc:83] ...").
GRPC_LOG = re.compile(r"^[DIWEF]\d{4} \d\d:\d\d:\d\d")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The two parties' data of the roles by hand (tests/ppcsim/cli/test_roles_by_hand.py), a party's state file
# (tests/parties/test_state_file.py).
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


def children(pid: int) -> list[tuple[int, list[str]]]:
    """(pid, argv) of the live child processes of ``pid``, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            if ppid != pid:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                argv = [a.decode(errors="replace") for a in fh.read().split(b"\0") if a]
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        found.append((int(entry), argv))
    return found


def party_pid(ppc_pid: int, party: str) -> int | None:
    """The pid of the ``ppc party --party PARTY`` process that ``ppc_pid`` started, or None."""
    for pid, argv in children(ppc_pid):
        if "--party" in argv[:-1] and argv[argv.index("--party") + 1] == party:
            return pid
    return None


def kill_a_party(proc: subprocess.Popen, party: str, timeout: float = 120.0) -> str:
    """Kill (SIGKILL) party ``party``'s process once the ``ppc run`` process ``proc`` has started it, then wait for
    ``proc`` to end; returns its standard error. ``proc`` is killed if it is still running at the end."""
    try:
        end, victim = time.monotonic() + 60, None
        while victim is None and proc.poll() is None and time.monotonic() < end:
            victim = party_pid(proc.pid, party)
            time.sleep(0.01)
        assert victim is not None, f"party {party}'s process never appeared"
        os.kill(victim, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return stderr


def ppc_cmd(*args) -> list[str]:
    return [sys.executable, "-m", "ppcsim", *map(str, args)]


# The page in a real browser (tests/ppcsim/report/test_html_in_browser.py, tests/docs/test_docs_site.py).
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")

#: Put first in <head>: records every script or loading error, then, once the page has loaded, writes what it
#: found into the page, where --dump-dom shows it.
PROBE = """<script>
window.__errors = [];
window.addEventListener("error", e => window.__errors.push(
  (e.message || ("failed to load " + (e.target && (e.target.alt || e.target.src || e.target.tagName))))), true);
window.addEventListener("load", () => {
  const images = [...document.images];
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({
    images: images.map(i => ({alt: i.alt, src: i.getAttribute("src"), complete: i.complete, width: i.naturalWidth,
                              height: i.naturalHeight})),
    errors: window.__errors,
    title: document.title,
  });
  document.body.appendChild(out);
});
</script>"""


def browser() -> str:
    found = next((path for path in map(shutil.which, BROWSERS) if path), None)
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("no Chromium on this machine: CI must install it (apt-get install chromium), see .ci/run")
    pytest.skip("no Chromium on this machine (apt-get install chromium); CI runs this test")


def probe(chromium: str, page, tmp, copy=None) -> dict:
    """Load ``page`` in headless Chromium with the probe and return what it found; the probed copy is ``copy``
    (beside the page, for a page whose images are files of their own), else in ``tmp``."""
    text = page.read_text(encoding="utf-8")
    checked = copy or tmp / "probe.html"
    checked.write_text(text.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    proc = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         f"--user-data-dir={tmp / 'profile'}", "--virtual-time-budget=10000", "--dump-dom", checked.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    found = re.search(r'<pre id="probe"[^>]*>(.*?)</pre>', proc.stdout, re.S)  # a theme may add attributes
    assert found, f"the page did not finish loading in Chromium: {proc.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


# -- a coordinator that lies: the parties it serves, and the keys it swaps ----------------------------------------

def party_processes(port: int, path: Path, names, seed: int, extra=(), timeout: float = 120.0, until=None
                    ) -> dict[str, tuple[int, str]]:
    """Run ``ppc party`` for each of ``names`` against the coordinator on 127.0.0.1:``port`` (party p's seed
    ``seed + ord(p[0])``; ``extra``: more options, ``{name}`` standing for the party's name), all at once; each
    party's (exit code, standard error). A party still running after ``timeout`` seconds is killed. ``until``:
    the names whose exit is all the test waits for; the others still running then are killed (exit code < 0),
    rather than left waiting for the session's deadline."""
    procs: dict[str, subprocess.Popen] = {}
    out = {}
    try:
        for name in names:
            procs[name] = subprocess.Popen(
                [sys.executable, "-m", "ppcsim", "party", "--coordinator", f"127.0.0.1:{port}", "--scenario",
                 str(path), "--party", name, "--seed", str(seed + ord(name[0])), *(e.format(name=name) for e in extra)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        waited = [n for n in procs if until is None or n in until]
        for name in [*waited, *(n for n in procs if n not in waited)]:
            proc = procs[name]
            if name not in waited and proc.poll() is None:
                proc.kill()
            _, err = proc.communicate(timeout=timeout)
            out[name] = (proc.returncode, err)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return out


def swapped_keys(fake: dict, stolen: dict | None = None):
    """GetPeers and PostSealedKeys of a coordinator in the middle (replacements for coordinator.handlers' own):
    every party is given ``fake[p].public`` as party p's key, and the leader's pseudonym key is opened with the
    fake key of each receiver and sealed again under the leader's fake key (kept in ``stolen["key"]``)."""
    from coordinator import handlers
    from parties.keys import seal, unseal

    real_peers, real_post = handlers.peers, handlers.post_sealed

    def peers(session, request):
        reply = real_peers(session, request)
        for peer in reply.peers:
            if peer.party != request.party:
                peer.public_key = fake[peer.party].public
        return reply

    def post_sealed(session, request):
        leader = request.party
        for sealed in request.keys:
            key = unseal(fake[sealed.to], session.keys[leader].public_key, sealed.nonce, sealed.ciphertext,
                         session.spec.name, leader, sealed.to)
            if stolen is not None:
                stolen["key"] = key
            sealed.nonce, sealed.ciphertext = seal(fake[leader], session.keys[sealed.to].public_key, key,
                                                   session.spec.name, leader, sealed.to)
        return real_post(session, request)

    return peers, post_sealed


def lying_alignment(victim: str, lie):
    """A GetAlignment handler (a replacement for coordinator.handlers.alignment): the real one, but ``victim``
    gets the header and positions ``lie(header, positions)`` makes of the true ones (it changes the header in
    place and returns the positions)."""
    import numpy as np

    from coordinator import handlers
    from coordinator.wire.serde import int32_chunks
    from protos.ppcsim.v1 import session_pb2

    real = handlers.alignment

    def alignment(session, request):
        messages = list(real(session, request))
        if request.party != victim:
            return iter(messages)
        header = session_pb2.AlignmentHeader()
        header.CopyFrom(messages[0].header)
        positions = lie(header, np.frombuffer(b"".join(m.positions.data for m in messages[1:]), "<i4").copy())
        return iter([session_pb2.AlignmentMessage(header=header)]
                    + [session_pb2.AlignmentMessage(positions=c) for c in int32_chunks(positions, 1 << 20)])

    return alignment


def brpc_call(number: int, message: bytes) -> bytes:
    """A brpc call (baidu_std framing, parties.brpc) with correlation id ``number`` carrying ``message``, as a
    stand-in for SPU's runtime sends it."""
    meta = b"\x0a\x04\x0a\x02ab" + b"\x18\x00\x20" + varint(number)
    return b"PRPC" + (len(meta) + len(message)).to_bytes(4, "big") + len(meta).to_bytes(4, "big") + meta + message
