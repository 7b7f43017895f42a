"""SPU's program started before its MPC (parties.spu_run.Warm): it loads, waits for its command line, and ends
if it never gets one."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from parties import spu_env
from parties.spu_run import PROGRAM, Warm, warm

_problem = spu_env.problem()
needs_spu = pytest.mark.skipif(_problem is not None, reason=f"SPU cannot run here: {_problem}")


def test_only_a_party_whose_terms_run_spu_starts_one():
    assert warm("mpyc") is None and warm("") is None


@needs_spu
@pytest.mark.processes
def test_a_warm_program_that_never_gets_its_command_line_ends_when_closed():
    started = Warm()
    folder = Path(started.folder.name)
    assert folder.is_dir()
    t = time.monotonic()
    started.close()
    assert started.process.returncode == 3  # it exited by itself, before any MPC
    assert time.monotonic() - t < 5 and not folder.exists()


@needs_spu
@pytest.mark.processes
def test_a_warm_program_runs_the_command_line_it_is_given():
    started = Warm()
    try:
        process = started.start(["python", str(PROGRAM), "--help"])
        out, _ = process.communicate(timeout=60)
        assert process.returncode == 0
        assert b"--wait-go" in out and b"--warm alone" in out
    finally:
        started.close()
