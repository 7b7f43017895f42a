"""The code type-checks (mypy) and lints (ruff) clean, with the settings in pyproject.toml.

Both run from the repository root as the test command's own subprocesses,
so that ``python -m pytest`` (the command CI runs) checks them too. mypy
keeps its cache in ``.mypy_cache``: a second run takes a few seconds.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(tool: str, *args: str) -> subprocess.CompletedProcess:
    if importlib.util.find_spec(tool) is None:
        pytest.fail(f"{tool} is not installed: pip install -e '.[test]' installs it")
    return subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_reports_nothing():
    done = _run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, f"ruff check . found problems:\n{done.stdout}{done.stderr}"


def test_mypy_reports_nothing():
    done = _run("mypy")  # the files and settings of [tool.mypy]
    assert done.returncode == 0, f"mypy found problems:\n{done.stdout}{done.stderr}"
    assert "Success: no issues found" in done.stdout, done.stdout
