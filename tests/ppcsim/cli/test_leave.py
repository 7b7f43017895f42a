"""How a ``ppc`` process ends once its command returned (``ppcsim.cli.entry.leave``): at once, without the
interpreter's teardown, when nothing is lost (files flushed, exit handlers run, exit code kept); the usual way
while a child process or another thread is still running."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.processes

#: A program that leaves files unflushed and an exit handler and a finaliser behind, then calls ``leave(3)``.
PROGRAM = """
import atexit, subprocess, sys, threading, time
from ppcsim.cli.entry import leave

class TornDown:
    def __del__(self):
        sys.stdout.write("torn down\\n")  # only the interpreter's teardown runs it

kept = TornDown()
unflushed = open(sys.argv[1], "w", buffering=1 << 20)
unflushed.write("every line\\n" * 1000)
atexit.register(lambda: open(sys.argv[1] + ".atexit", "w").write("ran"))
sys.stdout.write("no newline, still buffered")
{extra}
leave(3)
"""


def _run(tmp_path, extra: str = "") -> tuple[subprocess.CompletedProcess, str]:
    path = tmp_path / "out.txt"
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(PROGRAM.format(extra=extra)), str(path)],
                          capture_output=True, text=True, timeout=60)
    return proc, path.read_text()


def test_with_nothing_left_the_process_ends_at_once_with_every_file_flushed_and_its_exit_handlers_run(tmp_path):
    proc, written = _run(tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert written == "every line\n" * 1000
    assert (tmp_path / "out.txt.atexit").read_text() == "ran"
    assert proc.stdout == "no newline, still buffered"  # flushed, and no teardown ran the finaliser


@pytest.mark.parametrize("extra", [
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(0.5)'])",
    "threading.Thread(target=time.sleep, args=(0.5,)).start()",
], ids=["a child process running", "a thread running"])
def test_with_a_child_process_or_a_thread_running_the_process_ends_the_usual_way(tmp_path, extra):
    proc, written = _run(tmp_path, extra)
    assert proc.returncode == 3, proc.stderr
    assert written == "every line\n" * 1000 and (tmp_path / "out.txt.atexit").read_text() == "ran"
    assert proc.stdout == "no newline, still bufferedtorn down\n"  # the teardown ran


def test_the_files_open_for_writing_are_looked_for_only_when_there_are_any(tmp_path):
    code = textwrap.dedent("""
        import sys
        from ppcsim.cli.entry import _writing_to_files
        before = _writing_to_files()
        reading = open(__import__("os").__file__)  # a regular file, read only
        after_reading = _writing_to_files()
        fh = open(sys.argv[1], "w")
        writing = _writing_to_files()
        fh.close()
        print(before, after_reading, writing, _writing_to_files())
    """)
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "f.txt")], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.split() == ["False", "False", "True", "False"], done.stderr
