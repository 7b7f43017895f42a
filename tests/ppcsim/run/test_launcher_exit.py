"""How ``ppc run`` waits for its party processes to exit after the session (ppcsim.run.launcher._wait): woken as a
process ends, not up to a twentieth of a second later as ``Popen.wait`` polls, and never past its grace."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from ppcsim.run.launcher import _wait

pytestmark = pytest.mark.processes


def _sleeper(seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds}); raise SystemExit(7)"])
    time.sleep(0.3)  # the interpreter started
    return proc


def test_a_party_that_ends_is_seen_at_once_with_its_exit_code():
    proc = _sleeper(1.5)  # it ends about 1.2 s from now
    began = time.monotonic()
    assert _wait(proc, 10.0) == 7
    late = time.monotonic() - began
    assert 0.5 < late < 10.0 and proc.returncode == 7
    assert _wait(proc, 1.0) == 7  # ended already: at once


def test_a_party_that_does_not_end_within_its_grace_times_out_at_its_grace_not_twice_it():
    proc = _sleeper(30)
    try:
        began = time.monotonic()
        with pytest.raises(subprocess.TimeoutExpired):
            _wait(proc, 0.5)
        assert 0.45 < time.monotonic() - began < 0.95
    finally:
        proc.kill()
        proc.wait()
