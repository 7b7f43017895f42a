"""Bad input through the real ``ppc`` command: a non-zero exit, no traceback, one line naming the fault.

Every case starts from the same small, valid two-party scenario (two CSVs whose
ids come in different orders) and changes one thing, so each failure can only
come from that change. Party-side errors travel the whole way: the party
process fails, the coordinator fails the session and ``ppc run`` reports it.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from conftest import GRPC_LOG, kill_a_party, read_report, run_ppc
from parties.client import WITHOUT_MUTUAL_TLS

TIMEOUT = 120.0

A_ROWS = [  # id, x1, x2, x3
    ("r1", "1.0", "2.0", "3.0"),
    ("r2", "2.0", "1.0", "0.5"),
    ("r3", "3.0", "0.0", "1.5"),
    ("r4", "4.5", "1.0", "2.0"),
    ("r5", "0.5", "3.0", "1.0"),
    ("r6", "2.5", "2.5", "2.5"),
]
B_ROWS = [  # key, y1, y2 -- the same ids, in another order
    ("r3", "1.0", "2.0"),
    ("r1", "2.0", "1.0"),
    ("r2", "3.0", "1.0"),
    ("r6", "1.0", "1.0"),
    ("r5", "0.0", "0.0"),
    ("r4", "1.5", "2.0"),
]


def write_csv(path: Path, header: tuple[str, ...], rows: list[tuple[str, ...]]) -> Path:
    path.write_text("\n".join(",".join(r) for r in [header, *rows]) + "\n")
    return path.resolve()


def make_scenario(
    tmp: Path,
    *,
    a_rows=A_ROWS,
    b_rows=B_ROWS,
    a_columns='"x1", "x2", "x3"',
    a_method='method = "drbt"\nk = 2',
    b_method='method = "none"',
    algorithm="kmeans",
    top="",
    deadline=60,
) -> Path:
    """A two-party scenario in ``tmp``: party a (a.csv, id column 'id'), party b (b.csv, 'key')."""
    write_csv(tmp / "a.csv", ("id", "x1", "x2", "x3"), list(a_rows))
    write_csv(tmp / "b.csv", ("key", "y1", "y2"), list(b_rows))
    path = tmp / "s.toml"
    path.write_text(
        f'name = "t"\nseed = 3\ndeadline = {deadline}\n{top}\n'
        f'[[parties]]\nname = "a"\ndata = "a.csv"\nid_column = "id"\ncolumns = [{a_columns}]\n{a_method}\n'
        f'[[parties]]\nname = "b"\ndata = "b.csv"\nid_column = "key"\ncolumns = ["y1", "y2"]\n{b_method}\n'
        f'[clustering]\nalgorithm = "{algorithm}"\nn_clusters = 2\n'
    )
    return path.resolve()


def ppc(*args, cwd: Path) -> subprocess.CompletedProcess:
    return run_ppc(*args, timeout=TIMEOUT, cwd=cwd)


def error_lines(proc: subprocess.CompletedProcess, prog: str = "ppc run") -> list[str]:
    """Assert a clean failure (non-zero exit, no traceback, nothing on stderr but the error and
    gRPC's own log lines) and return the error lines."""
    assert proc.returncode != 0, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not GRPC_LOG.match(line)]
    assert lines, "nothing on stderr"
    assert all(line.startswith(f"{prog}: error: ") for line in lines), proc.stderr
    return lines


def one_error(proc: subprocess.CompletedProcess, prog: str = "ppc run") -> str:
    lines = error_lines(proc, prog)
    assert len(lines) == 1, proc.stderr
    return lines[0]


def run_bad(tmp: Path, **changes) -> tuple[subprocess.CompletedProcess, Path]:
    scenario = make_scenario(tmp, **changes)
    out = tmp / "out"
    return ppc("run", scenario, "--out", out, "--quiet", cwd=tmp), out


# -- the party's data ---------------------------------------------------------------------------


def test_missing_column_names_column_and_csv_before_anything_starts(tmp_path):
    proc, out = run_bad(tmp_path, a_columns='"x1", "x9"')
    line = one_error(proc)
    csv_path = (tmp_path / "a.csv").resolve()
    assert proc.returncode == 2
    assert line.endswith(f"[[parties]] 'a': no column 'x9' in {csv_path} (known: id, x1, x2, x3)")
    assert not out.exists()  # refused before any process started


def test_a_misspelt_column_of_a_built_in_set_is_refused_at_once_with_a_suggestion(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text('[data]\nsource = "sklearn:wine"\n[[parties]]\nname = "a"\ncolumns = ["alcohl", "hue"]\n'
                        'method = "none"\n')
    t0 = time.monotonic()
    proc = ppc("run", scenario, "--out", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 2 and time.monotonic() - t0 < 10  # no party process was started
    assert "[[parties]] 'a': no column 'alcohl' in sklearn:wine (known: alcohol, " in proc.stderr
    assert "did you mean 'alcohol'?" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_non_numeric_cell_names_column_and_line(tmp_path):
    rows = list(B_ROWS)
    rows[2] = ("r2", "3.0", "abc")  # data row 3 is line 4 of the file (line 1 is the header)
    proc, _ = run_bad(tmp_path, b_rows=rows)
    line = one_error(proc)
    assert f"party 'b': {(tmp_path / 'b.csv').resolve()}, column 'y2', line 4 is not a number: 'abc'" in line


def test_nan_cell_names_column_and_line(tmp_path):
    rows = list(A_ROWS)
    rows[4] = ("r5", "0.5", "nan", "1.0")  # line 6
    proc, _ = run_bad(tmp_path, a_rows=rows)
    line = one_error(proc)
    assert f"party 'a': {(tmp_path / 'a.csv').resolve()}, column 'x2', line 6 is 'nan'" in line
    assert "values must be finite numbers" in line


def test_duplicate_ids_name_the_repeated_id(tmp_path):
    rows = [*B_ROWS[:3], ("r5", "9.0", "9.0"), *B_ROWS[3:]]
    proc, _ = run_bad(tmp_path, b_rows=rows)
    line = one_error(proc)
    assert f"party 'b': {(tmp_path / 'b.csv').resolve()}, column 'key': duplicate ids 'r5'" in line


def test_no_common_ids(tmp_path):
    rows = [("q" + r[0][1:], *r[1:]) for r in B_ROWS]
    proc, out = run_bad(tmp_path, b_rows=rows)
    line = one_error(proc)
    assert line == "ppc run: error: no record id is common to all parties (a, b)"
    report = read_report(out)
    assert report["state"] == "failed" and "no record id is common" in report["error"]
    # both parties did upload: the failure is the coordinator's join
    assert [p["rows"] for p in report["parties"]] == [6, 6]


def test_k_larger_than_column_count(tmp_path):
    """Known from the scenario alone, so refused before any process starts."""
    proc, out = run_bad(tmp_path, a_method='method = "drbt"\nk = 4')
    line = one_error(proc)
    assert proc.returncode == 2
    assert "[[parties]] 'a': k = 4 is larger than the party's 3 columns" in line
    assert not out.exists()


# -- the scenario file ------------------------------------------------------------------------


def test_unknown_method_names_the_party(tmp_path):
    proc, out = run_bad(tmp_path, b_method='method = "rotate"')
    scenario = tmp_path / "s.toml"
    assert proc.returncode == 2
    assert one_error(proc) == (
        f"ppc run: error: {scenario.resolve()}: [[parties]] 'b': unknown method 'rotate' (known: drbt, osbr, none, nmds, rotation, geometric, noise, pca, svd, dct, cnmf, scnmf, comnmf, osbr-nmds; did you mean 'rotation'?)"
    )
    assert not out.exists()  # validation fails before anything starts


def test_unknown_clustering_algorithm(tmp_path):
    proc, _ = run_bad(tmp_path, algorithm="spectral")
    assert proc.returncode == 2
    line = one_error(proc)
    assert "[clustering]: 'algorithm' must be one of" in line and "got 'spectral'" in line


def test_every_scenario_error_is_reported(tmp_path):
    proc, _ = run_bad(tmp_path, b_method='method = "rotate"', top='colour = "red"', algorithm="spectral")
    assert proc.returncode == 2
    lines = error_lines(proc)
    prefix = f"ppc run: error: {(tmp_path / 's.toml').resolve()}: "
    assert len(lines) == 3, lines
    assert all(line.startswith(prefix) for line in lines)
    assert lines[0] == prefix + "unknown top-level field 'colour' (known: name, seed, deadline, description, data, parties, clustering, security, network, sweep, attacks)"
    assert lines[1] == prefix + "[[parties]] 'b': unknown method 'rotate' (known: drbt, osbr, none, nmds, rotation, geometric, noise, pca, svd, dct, cnmf, scnmf, comnmf, osbr-nmds; did you mean 'rotation'?)"
    assert lines[2].startswith(prefix + "[clustering]: 'algorithm' must be one of") and "'spectral'" in lines[2]


def test_scenario_file_that_does_not_exist(tmp_path):
    missing = tmp_path / "nowhere.toml"
    proc = ppc("run", missing, "--out", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 2
    assert one_error(proc) == f"ppc run: error: {missing}: no such file"


def test_invalid_toml(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "t"\n[[parties]\nname = "a"\n')
    proc = ppc("run", bad, "--out", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 2
    line = one_error(proc)
    assert line.startswith(f"ppc run: error: {bad}: not valid TOML: ")
    assert "line 2" in line


# -- the processes ----------------------------------------------------------------------------


def test_port_in_use_names_the_address(tmp_path):
    scenario = make_scenario(tmp_path)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = ppc("run", scenario, "--out", tmp_path / "out", "--quiet", "--port", port, cwd=tmp_path)
    assert proc.returncode == 2
    line = one_error(proc)
    assert line == f"ppc run: error: cannot listen on 127.0.0.1:{port}: the address is in use or not valid"


def test_party_process_that_dies(tmp_path):
    """Kill party a as soon as it exists: it cannot have uploaded yet (a Python start-up takes
    about a second), so the session cannot finish without it and the run must fail naming it."""
    scenario = make_scenario(tmp_path)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ppcsim", "run", str(scenario), "--out", str(out), "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, cwd=tmp_path,
    )
    stderr = kill_a_party(proc, "a", TIMEOUT)
    result = subprocess.CompletedProcess(proc.args, proc.returncode, "", stderr)
    line = one_error(result)
    assert proc.returncode == 1
    assert line.startswith("ppc run: error: party 'a' was killed by signal 9")
    report = read_report(out)
    assert report["state"] == "failed"
    assert report["error"].startswith("party 'a' was killed by signal 9")
    assert report["join"]["rows_joined"] is None


def wait_for_port(path: Path, coordinator: subprocess.Popen, seconds: float = 60.0) -> int:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        assert coordinator.poll() is None, coordinator.communicate()[1]
        text = path.read_text().strip() if path.exists() else ""
        if text.isdigit():
            return int(text)
        time.sleep(0.05)
    raise AssertionError(f"the coordinator wrote no port to {path} within {seconds} s")


def test_party_that_never_joins_fails_both_roles_at_the_deadline(tmp_path):
    # plaintext on loopback, as asked for; the roles-by-hand tests run over TLS with tokens
    scenario = make_scenario(tmp_path, deadline=7, top="[security]\ntls = false\ntokens = false")
    port_file, out = tmp_path / "port", tmp_path / "out"
    coordinator = subprocess.Popen(
        [sys.executable, "-m", "ppcsim", "coordinator", "--listen", "127.0.0.1:0", "--port-file", str(port_file),
         "--scenario", str(scenario), "--out", str(out), "--linger", "0.5"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, cwd=tmp_path,
    )
    try:
        port = wait_for_port(port_file, coordinator)
        t0 = time.monotonic()
        party = ppc("party", "--coordinator", f"127.0.0.1:{port}", "--scenario", scenario, "--party", "a",
                    "--labels-out", tmp_path / "a-labels.csv", cwd=tmp_path)
        party_seconds = time.monotonic() - t0
        _, coordinator_err = coordinator.communicate(timeout=TIMEOUT)
    finally:
        if coordinator.poll() is None:
            coordinator.kill()
            coordinator.communicate()

    failed = "session 't' failed: deadline of 7 s passed (never joined: b; upload not finished: a)"
    # the party: it joined and waited for b to agree the pseudonym key, then learnt that the session failed
    assert party.returncode == 1, party.stderr
    assert "Traceback" not in party.stderr
    assert party.stderr.splitlines()[:2] == [f"ppc party a: security: {WITHOUT_MUTUAL_TLS}",
                                             "party a: 6 rows x 3 columns -> drbt data[6, 2]"]
    assert party.stderr.strip().splitlines()[-1] == f"ppc party a: error: {failed}"
    assert party_seconds < 20
    assert not (tmp_path / "a-labels.csv").exists()
    # the coordinator
    assert coordinator.returncode == 1, coordinator_err
    assert "Traceback" not in coordinator_err
    assert coordinator_err.strip().splitlines()[-1] == f"ppc coordinator: error: {failed}"
    report = read_report(out)
    assert report["state"] == "failed"
    assert report["error"] == "deadline of 7 s passed (never joined: b; upload not finished: a)"
    assert [p["rows"] for p in report["parties"]] == [None, None]  # a waited for b before uploading


def test_a_party_whose_own_timeout_runs_out_names_that_timer(tmp_path):
    scenario = make_scenario(tmp_path, deadline=60, top="[security]\ntls = false\ntokens = false")
    port_file = tmp_path / "port"
    coordinator = subprocess.Popen(
        [sys.executable, "-m", "ppcsim", "coordinator", "--listen", "127.0.0.1:0", "--port-file", str(port_file),
         "--scenario", str(scenario)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, cwd=tmp_path,
    )
    try:
        port = wait_for_port(port_file, coordinator)
        party = ppc("party", "--coordinator", f"127.0.0.1:{port}", "--scenario", scenario, "--party", "a",
                    "--timeout", "5", cwd=tmp_path)  # time to join even on a loaded machine
    finally:
        coordinator.kill()
        coordinator.communicate()
    assert party.returncode == 2, party.stderr
    assert "Traceback" not in party.stderr
    assert party.stderr.strip().splitlines()[-1] == (
        "ppc party: error: party 'a': this party's --timeout of 5 s ran out while agreeing the pseudonym key with "
        "the other parties")


def test_a_bad_option_is_named_and_nothing_runs(tmp_path):
    proc = ppc("run", "--known-fraction", "2", "--out", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["ppc run: error: --known-fraction: must be in (0, 1], got 2.0"]
    assert not (tmp_path / "out").exists()
