"""Load: one ``ppc coordinator`` process serves 10 sessions of 4 parties each at once.

Ten scenarios over four data sets and every disguise method (with
k-means, agglomerative, ward and DBSCAN clusterings; most sessions mix
methods) are served by ONE coordinator over TLS with a token per party; all
40 ``ppc party`` processes start at once. Every session's labels.csv must
equal the labels of running that scenario alone: through ppcsim.run.inprocess
(the same party and coordinator code in one process, which
tests/ppcsim/run/test_sweep.py shows equals a real run), and for two of the ten
also through a real ``ppc run``.

The small tests below it check how ``ppc coordinator`` refuses bad sets of
scenarios and credentials (tests/ppcsim/run/test_process_faults.py serves two sessions with
``--credentials`` given once per scenario).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ppc_cmd, read_report, run_ppc
from ppcsim.cli.parser import main as ppc_main
from ppcsim.run.inprocess import simulate
from ppcsim.scenario.load import load_scenario, party_seed
from protos.ids import as_text

#: Seconds the whole test may take before it gives up: a guard against hangs, far above the ~1 min it
#: takes on 2 idle cores (most of it the start-up of 40 party processes).
TIMEOUT = 420.0
#: Each session's deadline: far above the time it needs, so only a hang or a bug reaches it.
DEADLINE = 400

WINE = [
    ["alcohol", "malic_acid", "ash"],
    ["alcalinity_of_ash", "magnesium", "total_phenols"],
    ["flavanoids", "nonflavanoid_phenols", "proanthocyanins"],
    ["color_intensity", "hue", "od280/od315_of_diluted_wines", "proline"],
]
BLOBS = [[f"x{2 * i}", f"x{2 * i + 1}"] for i in range(4)]
IRIS = [["sepal length (cm)"], ["sepal width (cm)"], ["petal length (cm)"], ["petal width (cm)"]]
CANCER_COLUMNS = [
    "mean radius", "mean texture", "mean perimeter", "mean area", "mean smoothness", "mean compactness",
    "mean concavity", "mean concave points", "mean symmetry", "mean fractal dimension",
    "radius error", "texture error", "perimeter error", "area error", "smoothness error", "compactness error",
    "concavity error", "concave points error", "symmetry error", "fractal dimension error",
    "worst radius", "worst texture", "worst perimeter", "worst area", "worst smoothness", "worst compactness",
    "worst concavity", "worst concave points", "worst symmetry", "worst fractal dimension",
]
CANCER = [CANCER_COLUMNS[0:8], CANCER_COLUMNS[8:16], CANCER_COLUMNS[16:23], CANCER_COLUMNS[23:30]]

WINE_DATA = 'source = "sklearn:wine"\nlabel_column = "target"'
IRIS_DATA = 'source = "sklearn:iris"\nlabel_column = "target"'
CANCER_DATA = 'source = "sklearn:breast_cancer"\nlabel_column = "target"'


def blobs(rows: int = 300) -> str:
    return f'source = "synthetic:blobs"\nrows = {rows}\ncolumns = 8\nclusters = 3\nlabel_column = "target"'


KMEANS3 = 'algorithm = "kmeans"\nn_clusters = 3'
AVERAGE3 = 'algorithm = "agglomerative"\nn_clusters = 3\nlinkage = "average"'

#: name, seed, [data] table, each party's (columns, method fields), [clustering] table
SESSIONS = [
    ("wine-drbt", 1, WINE_DATA, [
        (WINE[0], 'method = "drbt"\nk = 2'), (WINE[1], 'method = "drbt"\nprojection = "sparse"\nk = 2'),
        (WINE[2], 'method = "rotation"'), (WINE[3], 'method = "drbt"\nprojection = "sparse"\nk = 3'),
    ], KMEANS3),
    ("wine-osbr", 2, WINE_DATA, [(c, 'method = "osbr"') for c in WINE], AVERAGE3),
    ("wine-mixed", 5, WINE_DATA, [
        (WINE[0], 'method = "drbt"\nk = 2'), (WINE[1], 'method = "none"'),
        (WINE[2], 'method = "rotation"'), (WINE[3], 'method = "osbr"'),
    ], AVERAGE3),
    ("wine-nmds", 6, WINE_DATA, [(c, 'method = "osbr-nmds"\ndims = 2\nn_init = 1') for c in WINE], KMEANS3),
    ("blobs-geometric", 7, blobs(), [
        (BLOBS[0], 'method = "geometric"\nsigma = 0.2'), (BLOBS[1], 'method = "noise"\ndistribution = "uniform"'),
        (BLOBS[2], 'method = "pca"\nk = 1'), (BLOBS[3], 'method = "svd"\nk = 1'),
    ], KMEANS3),
    ("blobs-dbscan", 12, blobs(), [(c, 'method = "none"') for c in BLOBS],
     'algorithm = "dbscan"\neps = 0.8\nmin_samples = 5'),
    ("blobs-ward", 13, blobs(400), [
        (BLOBS[0], 'method = "drbt"\nk = 1'), (BLOBS[1], 'method = "dct"\nk = 1'),
        (BLOBS[2], 'method = "noise"'), (BLOBS[3], 'method = "rotation"'),
    ], 'algorithm = "agglomerative"\nn_clusters = 3\nlinkage = "ward"'),
    ("blobs-gower", 14, blobs(200), [(c, 'method = "osbr"\nmetric = "gower"') for c in BLOBS], AVERAGE3),
    ("iris-drbt", 15, IRIS_DATA, [(c, 'method = "drbt"\nk = 1') for c in IRIS], KMEANS3),
    ("cancer-drbt", 16, CANCER_DATA, [(c, 'method = "drbt"\nk = 3') for c in CANCER],
     'algorithm = "kmeans"\nn_clusters = 2'),
]
PARTIES = ("north", "south", "east", "west")
#: One BLAS/OpenMP thread per party process, as ``ppc run`` gives its parties (ppcsim.run.launcher.PARTY_ENV):
#: 40 processes share two cores.
PARTY_ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: The sessions also run alone through ``ppc run`` (one feature session, one mixed with OSBR).
ALONE = ("blobs-geometric", "wine-mixed")


def scenario_text(name: str, seed: int, data: str, parties: list, clustering: str) -> str:
    text = f'name = "{name}"\nseed = {seed}\ndeadline = {DEADLINE}\n\n[data]\n{data}\n'
    for party, (columns, method) in zip(PARTIES, parties):
        quoted = ", ".join(f'"{c}"' for c in columns)
        text += f'\n[[parties]]\nname = "{party}"\ncolumns = [{quoted}]\n{method}\n'
    return text + f"\n[clustering]\n{clustering}\n"


def alone_labels(path: Path) -> tuple[str, dict[str, str]]:
    """The scenario run on its own, in process: labels.csv as the coordinator writes it (by the pseudonyms it
    received, in hexadecimal), and each joined record's cluster by its own id (as the parties write theirs)."""
    session, own = simulate(load_scenario(path))
    assert session.outcome is not None, f"{path.name}: {session.error}"
    outcome = session.outcome
    lines = ["id,cluster"] + [f"{i},{c}" for i, c in zip(as_text(outcome.join.ids).tolist(), outcome.labels.tolist())]
    first = next(iter(own))
    raw = own[first].data.ids[outcome.join.index[first]]
    return "\n".join(lines) + "\n", dict(zip(as_text(raw).tolist(), map(str, outcome.labels.tolist())))


def wait_all(procs: dict, end: float) -> dict:
    """Wait for every process until ``end`` (monotonic); {key: return code}."""
    codes = {}
    for key, proc in procs.items():
        try:
            codes[key] = proc.wait(timeout=max(end - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            codes[key] = None
    return codes


def wait_for_port(path: Path, coordinator: subprocess.Popen, log: Path, seconds: float = 60.0) -> int:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        assert coordinator.poll() is None, log.read_text()
        text = path.read_text().strip() if path.exists() else ""
        if text.isdigit():
            return int(text)
        time.sleep(0.05)
    raise AssertionError(f"the coordinator wrote no port to {path} within {seconds} s")


def stop(procs) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
    for proc in procs:
        if proc.returncode is None:
            proc.wait(timeout=30)


@pytest.mark.slow
def test_one_coordinator_serves_10_sessions_of_4_parties_like_10_runs_alone(tmp_path):
    started = time.monotonic()
    end = started + TIMEOUT
    paths = {}
    for name, seed, data, parties, clustering in SESSIONS:
        paths[name] = tmp_path / f"{name}.toml"
        paths[name].write_text(scenario_text(name, seed, data, parties, clustering))
    names = list(paths)
    assert len(names) == 10 and len(set(names)) == 10
    creds, out, logs = tmp_path / "creds", tmp_path / "out", tmp_path / "logs"
    logs.mkdir()
    procs: list[subprocess.Popen] = []
    quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        # one CA and coordinator certificate, a folder per session (in this process: a Python start-up saved)
        assert ppc_main(["credentials", *[str(paths[n]) for n in names], "--out", str(creds)]) == 0

        # one coordinator for all ten sessions
        port_file = tmp_path / "port"
        with open(logs / "coordinator.log", "wb") as fh:
            coordinator = subprocess.Popen(
                ppc_cmd("coordinator", "--listen", "127.0.0.1:0", "--port-file", port_file,
                        *[a for n in names for a in ("--scenario", paths[n])],
                        "--credentials", creds, "--out", out, "--linger", "1"),
                stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT, cwd=tmp_path)
        procs.append(coordinator)
        address = f"127.0.0.1:{wait_for_port(port_file, coordinator, logs / 'coordinator.log')}"

        # all 40 parties at once
        parties = {}
        for n in names:
            for party in PARTIES:
                with open(logs / f"{n}.{party}.log", "wb") as fh:
                    parties[n, party] = subprocess.Popen(
                        ppc_cmd("party", "--coordinator", address, "--scenario", paths[n], "--party", party,
                                "--credentials", creds / n / "parties" / party,
                                "--labels-out", tmp_path / f"{n}.{party}.csv", "--timeout", DEADLINE,
                                # the seed 'ppc run' would give it, so that the session equals the one run alone
                                "--seed", party_seed(load_scenario(paths[n]).seed, party)),
                        stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT, cwd=tmp_path, env=PARTY_ENV)
                procs.append(parties[n, party])

        # meanwhile, two of them alone through real multi-process runs (each its own coordinator) ...
        runs = {n: subprocess.Popen(ppc_cmd("run", paths[n], "--out", tmp_path / "alone" / n, "--quiet",
                                            "--no-attacks"), **quiet) for n in ALONE}
        procs += runs.values()
        # ... and each of the ten alone in this process
        alone = {n: alone_labels(paths[n]) for n in names}

        codes = wait_all(parties, end)
        failed = {f"{n}.{p}": (code, (logs / f"{n}.{p}.log").read_text()[-500:])
                  for (n, p), code in codes.items() if code != 0}
        assert not failed, failed
        assert coordinator.wait(timeout=max(end - time.monotonic(), 1)) == 0, (logs / "coordinator.log").read_text()
        served = time.monotonic() - started
        assert wait_all(runs, end) == dict.fromkeys(ALONE, 0), {n: p.stderr.read() for n, p in runs.items()}
        print(f"load test: 40 parties served in {served:.0f} s, everything in {time.monotonic() - started:.0f} s")
    finally:
        stop(procs)

    log = (logs / "coordinator.log").read_text()
    assert "Traceback" not in log
    assert "listening on port" in log and "(TLS), 10 sessions" in log
    for n in names:
        report = read_report(out / n)
        assert report["scenario"] == n
        assert report["state"] == "done" and report["error"] is None, report["error"]
        assert report["security"]["parties"] == {p: {"transport": "TLS", "identity": "token"} for p in PARTIES}
        labels = (out / n / "labels.csv").read_text()
        assert labels == alone[n][0], f"session {n}: the labels differ from running it alone"
        # every party got the labels of its own records, the same as the coordinator's (by the records' own ids)
        shared = alone[n][1]
        for party in PARTIES:
            own = (tmp_path / f"{n}.{party}.csv").read_text().splitlines()
            assert own[0] == "id,cluster" and len(own) == len(shared) + 1
            assert all(shared[i] == c for i, c in (line.split(",") for line in own[1:]))
    for n in ALONE:  # ppc run's labels.csv lists the records by their own ids, as its first party wrote them
        written = (tmp_path / "alone" / n / "labels.csv").read_text().splitlines()
        assert dict(line.split(",") for line in written[1:]) == alone[n][1], f"ppc run {n} differs"
    # the sessions really ran side by side: many were open (first party joined, result not ready) at once
    spans = [(t["first_join"], t["done"]) for t in (read_report(out / n)["timing"]["coordinator"] for n in names)]
    side_by_side = max(sum(start <= at < done for start, done in spans) for at, _ in spans)
    assert side_by_side >= 4, spans


# -- how several scenarios and credentials are given ------------------------------------------------------


def small_scenario(tmp: Path, name: str, seed: int = 1, security: str = "") -> Path:
    path = tmp / f"{name}.toml"
    path.write_text(scenario_text(name, seed, WINE_DATA, [(c, 'method = "none"') for c in WINE[:2]], KMEANS3)
                    .replace(f"deadline = {DEADLINE}", "deadline = 60") + security)
    return path


def coordinator_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("ppc coordinator: error: ")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_sessions_of_one_coordinator_need_different_names(tmp_path):
    a = small_scenario(tmp_path, "same")
    b = tmp_path / "other.toml"
    b.write_text(a.read_text())
    proc = run_ppc("coordinator", "--listen", "127.0.0.1:0", "--scenario", a, "--scenario", b, timeout=60, cwd=tmp_path)
    assert coordinator_error(proc) == (f"ppc coordinator: error: {a} and {b} both name session 'same': "
                                       "the sessions of one coordinator need different names")


def test_credentials_once_per_scenario_or_once_for_all(tmp_path):
    a, b = small_scenario(tmp_path, "a"), small_scenario(tmp_path, "b")
    proc = run_ppc("coordinator", "--listen", "127.0.0.1:0", "--scenario", a, "--scenario", b,
                   *["--credentials", tmp_path] * 3, timeout=180, cwd=tmp_path)
    assert "--credentials given 3 times for 2 scenarios" in coordinator_error(proc)
    proc = run_ppc("coordinator", "--listen", "127.0.0.1:0", "--scenario", a, "--scenario", b, timeout=180, cwd=tmp_path)
    assert "session 'a': the scenario's [security] asks for TLS" in coordinator_error(proc)


def test_sessions_must_agree_on_the_transport(tmp_path):
    a = small_scenario(tmp_path, "a")
    b = small_scenario(tmp_path, "b", security="\n[security]\ntls = false\ntokens = false\n")
    proc = run_ppc("coordinator", "--listen", "127.0.0.1:0", "--scenario", a, "--scenario", b,
                   "--credentials", tmp_path / "ca", "--credentials", tmp_path / "cb", timeout=180, cwd=tmp_path)
    assert "session 'b' asks for plaintext but session 'a' for TLS" in coordinator_error(proc)


def test_credentials_from_two_cas_are_refused_naming_the_session(tmp_path):
    a, b = small_scenario(tmp_path, "a"), small_scenario(tmp_path, "b")
    for name, path in (("a", a), ("b", b)):
        assert ppc_main(["credentials", str(path), "--out", str(tmp_path / f"c{name}")]) == 0
    proc = run_ppc("coordinator", "--listen", "127.0.0.1:0", "--scenario", a, "--scenario", b,
                   "--credentials", tmp_path / "ca", "--credentials", tmp_path / "cb", timeout=60, cwd=tmp_path)
    line = coordinator_error(proc)
    assert line.startswith(f"ppc coordinator: error: session 'b': its credentials ({tmp_path / 'cb'}) hold "
                           "another coordinator certificate or CA than session 'a'")
