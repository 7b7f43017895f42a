"""The tiers' guard (tests/tiers.py) fails an unmarked test that starts a process, and lets a marked one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

TIERS = Path(__file__).with_name("tiers.py")

SPAWNING = """
import subprocess, sys
import pytest

def test_unmarked_spawns():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

@pytest.mark.processes
def test_marked_spawns():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_unit():
    assert sum(range(4)) == 6
"""


@pytest.mark.processes  # the marked inner test starts its process under this one
def test_an_unmarked_test_that_starts_a_process_fails_naming_the_mark_and_a_marked_one_passes(pytester):
    shutil.copy(TIERS, pytester.path / "tiers.py")
    pytester.makeconftest('pytest_plugins = ("tiers",)\n')
    pytester.makeini("[pytest]\nmarkers =\n    processes: starts processes\n    slow: slow\n")
    pytester.makepyfile(test_spawn=SPAWNING)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*test_unmarked_spawns starts a subprocess: mark it @pytest.mark.processes*"])
    unit = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-m", "not processes")
    unit.assert_outcomes(passed=1, failed=1, deselected=1)


def test_ci_runs_the_test_command_the_readme_gives():
    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    command = next(line for line in readme.splitlines() if "pip install -e '.[test]'" in line and "pytest" in line)
    assert command.strip() in (root / ".ci" / "run").read_text(encoding="utf-8")
