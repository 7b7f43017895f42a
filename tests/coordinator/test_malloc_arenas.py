"""The coordinator caps glibc's malloc arenas when its server starts (coordinator.server.bound_malloc_arenas).

Each check runs in a fresh interpreter: the cap applies to a whole process, and
glibc reads a user's own setting (MALLOC_ARENA_MAX) only at a process's start.
glibc's ``malloc_info`` lists one ``<heap nr=...>`` per arena in use.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc arenas: Linux only")

#: Starts the coordinator's server as ``ppc coordinator`` and ``ppc run`` do (or not, with "none" as argv[1]), then
#: has 12 threads allocate at once and prints how many arenas glibc then holds.
PROGRAM = textwrap.dedent("""
    import ctypes, os, sys, tempfile, threading
    from coordinator.server import start_server
    from coordinator.registry import Registry

    if sys.argv[1] == "server":
        server, port = start_server("127.0.0.1:0", Registry())
    barrier = threading.Barrier(12)
    held = []

    def allocate():
        held.append(bytearray(64 * 1024))  # below glibc's mmap threshold: from the thread's arena
        barrier.wait()

    threads = [threading.Thread(target=allocate) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    libc = ctypes.CDLL(None)
    libc.fopen.restype = ctypes.c_void_p
    path = os.path.join(tempfile.mkdtemp(), "malloc.xml")
    fh = libc.fopen(path.encode(), b"w")
    libc.malloc_info(0, ctypes.c_void_p(fh))
    libc.fclose(ctypes.c_void_p(fh))
    print(open(path).read().count("<heap nr="))
    if sys.argv[1] == "server":
        server.stop(0).wait(5)
""")


def arenas(mode: str, **env: str) -> int:
    """Arenas in use after 12 threads allocated, in a fresh interpreter (``mode`` "server": the coordinator's
    server started first)."""
    environment = {k: v for k, v in os.environ.items() if k not in ("MALLOC_ARENA_MAX", "GLIBC_TUNABLES")}
    proc = subprocess.run([sys.executable, "-c", PROGRAM, mode], capture_output=True, text=True, timeout=120,
                          env={**environment, **env})
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.split()[-1])


def test_starting_the_server_caps_the_arenas_of_every_thread_after_it():
    from coordinator.server import MALLOC_ARENAS

    assert arenas("none") > MALLOC_ARENAS  # glibc's default: an arena for each thread, up to eight a core
    assert arenas("server") <= MALLOC_ARENAS


def test_a_cap_the_user_set_is_left_as_it_is():
    assert arenas("server", MALLOC_ARENA_MAX="4") == 4


def test_the_cap_is_not_set_where_the_user_chose_one():
    program = ("import os, sys\nfrom coordinator.server import bound_malloc_arenas\n"
               "print(bound_malloc_arenas(), end=' ')\nos.environ.pop('MALLOC_ARENA_MAX')\n"
               "print(bound_malloc_arenas(3))")
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MALLOC_ARENA_MAX": "4"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["None", "3"]
