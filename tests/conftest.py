"""Shared helpers: run the real ``ppc`` command in a subprocess, write scenario files."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def run_ppc(*args: str, timeout: float = 180.0, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python -m ppcsim ARGS`` in a fresh process; never hangs past ``timeout``."""
    return subprocess.run(
        [sys.executable, "-m", "ppcsim", *map(str, args)],
        capture_output=True, text=True, timeout=timeout, cwd=cwd, stdin=subprocess.DEVNULL,
    )


def write_scenario(directory: Path, text: str, name: str = "scenario.toml") -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return path


def read_report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


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
