"""Shared helpers: run the real ``ppc`` command in a subprocess, write scenario files."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest


def run_ppc(*args: str, timeout: float = 180.0, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python -m ppcsim ARGS`` in a fresh process; never hangs past ``timeout``."""
    return subprocess.run(
        [sys.executable, "-m", "ppcsim", *map(str, args)],
        capture_output=True, text=True, timeout=timeout, cwd=cwd, stdin=subprocess.DEVNULL,
    )


def by_hand(path: Path, tmp_path: Path, parties: list[str], timeout: float = 120.0) -> dict[str, str]:
    """The by-hand roles of scenario ``path``: ``ppc credentials``, then ``ppc coordinator`` and one ``ppc party``
    per name, each in its own process over loopback; every party writes ``tmp_path/<name>.csv`` and the
    coordinator ``tmp_path/out``. Returns each party's stderr; asserts every process exited 0."""
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
                       str(creds / "parties" / name), "--labels-out", str(tmp_path / f"{name}.csv")], **opts)
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


def write_scenario(directory: Path, text: str, name: str = "scenario.toml") -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return path


#: The JSON Schema of report.json as the docs publish it: every report a test produces is checked against it.
REPORT_SCHEMA = Path(__file__).resolve().parent.parent / "docs" / "report.schema.json"


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


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """``ppc demo`` run once for every test that reads its outputs: the folder and the finished process."""
    tmp = tmp_path_factory.mktemp("demo")
    return tmp / "demo", run_ppc("demo", "--out", tmp / "demo", cwd=tmp)


@pytest.fixture(scope="session")
def docs_site(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """The documentation site as the README builds it (``sphinx-build -W -b html docs ...``), built once per test
    session into a temporary folder: its html folder and the build's process. The tutorials are executed by the
    build (myst-nb), and their executed notebooks are in ``<html>/../jupyter_execute/tutorials/``."""
    pytest.importorskip("sphinx", reason="the documentation site needs the docs extra: pip install -e '.[docs]'")
    pytest.importorskip("myst_nb", reason="the documentation site needs the docs extra: pip install -e '.[docs]'")
    html = tmp_path_factory.mktemp("site") / "html"
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", str(root / "docs"),
                           str(html)], capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    return html, proc
