"""The check of SPU's environment (parties.spu_env.problem) is kept once passed: the next check of the same
environment, unchanged, on the same CPU, does not start SPU's interpreter again; any change to the interpreter, the
installed packages or SPU's native library, a failed check, or another CPU checks again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from parties import spu_env


def _environment(root: Path) -> Path:
    """A virtual environment's layout with SPU's package in it; its python is never started here."""
    python = root / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\n")
    spu = root / "lib" / "python3.11" / "site-packages" / "spu"
    spu.mkdir(parents=True)
    (spu / "libspu.so").write_bytes(b"\0" * 64)
    return python


@pytest.fixture
def probes(monkeypatch, tmp_path):
    """The interpreters the check starts, by path, answering what ``answer[0]`` says (None: it passed)."""
    if spu_env.machine_problem():
        pytest.skip("this CPU cannot run SPU: every check says so before any probe")
    started: list[str] = []
    answer: list[str | None] = [None]

    def probe(python: str) -> str | None:
        started.append(python)
        return answer[0]

    monkeypatch.setattr(spu_env, "probe", probe)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(spu_env.CHECKED, raising=False)
    return started, answer


def test_a_passed_check_is_kept_until_the_environment_changes(tmp_path, probes):
    started, _ = probes
    python = _environment(tmp_path / "env")
    assert spu_env.problem(python) is None and len(started) == 1
    assert spu_env.problem(python) is None and len(started) == 1  # kept: not started again
    assert spu_env.check_file().read_text().strip() == spu_env.fingerprint(python)
    library = python.parent.parent / "lib" / "python3.11" / "site-packages" / "spu" / "libspu.so"
    os.utime(library, ns=(1, 1))  # SPU reinstalled
    assert spu_env.problem(python) is None and len(started) == 2
    (python.parent.parent / "lib" / "python3.11" / "site-packages" / "jax").mkdir()  # a package added or removed
    assert spu_env.problem(python) is None and len(started) == 3
    other = _environment(tmp_path / "other")
    assert spu_env.problem(other) is None and len(started) == 4  # another environment
    assert spu_env.problem(python) is None and len(started) == 5  # the one kept is the last that passed


def test_a_failed_check_is_not_kept_and_another_cpu_checks_again(tmp_path, probes, monkeypatch):
    started, answer = probes
    python = _environment(tmp_path / "env")
    answer[0] = "SPU does not load"
    assert "SPU does not load" in spu_env.problem(python)
    assert "SPU does not load" in spu_env.problem(python) and len(started) == 2  # checked every time
    answer[0] = None
    assert spu_env.problem(python) is None and spu_env.problem(python) is None and len(started) == 3
    monkeypatch.setattr(spu_env, "_cpu_flags", lambda: "flags : fpu avx aes another_cpu")
    assert spu_env.problem(python) is None and len(started) == 4


def test_an_environment_whose_spu_package_is_elsewhere_is_checked_every_time(tmp_path, probes):
    started, _ = probes
    python = tmp_path / "bare" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\n")
    assert spu_env.fingerprint(python) is None
    assert spu_env.problem(python) is None and spu_env.problem(python) is None and len(started) == 2
