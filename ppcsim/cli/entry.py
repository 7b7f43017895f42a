"""Where a ``ppc`` process starts (``python -m ppcsim`` and the ``ppc`` command, whatever its role: ``run``,
``party``, ``coordinator``, ``sweep``...): the process-wide settings it runs with, made here and nowhere at
import, so that importing ``ppcsim`` (or ``parties``, ``coordinator``) in a program of one's own changes none
of that program's environment or allocator.

``process_settings`` must run before numpy is imported (numpy reads
``NUMPY_MADVISE_HUGEPAGE`` once, at import): this module imports nothing of
the project at its top, and ``main`` imports the command line only after it.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn


def process_settings() -> None:
    """Set what a ``ppc`` process (and each party process it starts, which inherits its environment) runs with,
    each only where the user has not set it:

    - ``GRPC_VERBOSITY=NONE``: gRPC's C core logs its own errors (a port it
      cannot bind) to stderr next to ppc's one-line message; set it to keep
      gRPC's logs.
    - ``NUMPY_MADVISE_HUGEPAGE=0``: numpy asks the kernel for huge pages for
      big arrays. On virtual machines that back guest memory lazily
      (Firecracker) each first touch of a huge page costs the host's faults
      for it, and filling fresh arrays ran 8x slower (300 MB/s against
      2.5 GB/s; bench/README.md). ppc, its party processes and its
      benchmarks allocate far more than they reuse; set it to 1 to keep
      numpy's default. Takes effect only before numpy is imported.
    - glibc's malloc gives blocks of 128 KiB and more straight back to the
      system when freed (``M_MMAP_THRESHOLD``). By default glibc raises that
      threshold to the largest block freed so far, after which the 1 MiB
      message buffers of every upload come from per-thread arenas that keep
      what is freed: the coordinator then grew by tens of MiB for every party
      uploading at once, beyond the data it holds (bench/osbr_memory.py,
      bench/scaling.py). Set ``MALLOC_MMAP_THRESHOLD_`` to choose another
      threshold; nothing happens off glibc.
    """
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        from coordinator.malloc import M_MMAP_THRESHOLD, mallopt

        mallopt(M_MMAP_THRESHOLD, 128 << 10)  # which also stops glibc's adjustment of it


def main(argv: list[str] | None = None) -> int:
    """The ``ppc`` command: the process's settings, then the command line (``ppcsim.cli.parser.main``)."""
    process_settings()
    from ppcsim.cli.parser import main as command_line

    return command_line(argv)


def program() -> NoReturn:
    """``ppc`` and ``python -m ppcsim`` as a program: ``main``, then the process ends with its exit code
    (``leave``)."""
    leave(main())


def leave(code: int) -> NoReturn:
    """End this process with exit code ``code`` once its command has returned: at once, without the
    interpreter's teardown, when nothing would be lost by it; else as usual (``SystemExit``).

    The teardown frees every module's objects one by one: a tenth of a second or more with numpy, scipy
    and gRPC loaded, which ``ppc run`` waits for at its end and at the end of each of its party processes.
    Nothing is lost when no other thread would still be waited for (a non-daemon thread) and no child
    process is left to reap: then the exit handlers run (``atexit``, as they would), every file still open
    for writing (the standard streams among them) and the log handlers are flushed, and the process ends
    (``os._exit``).
    """
    import atexit
    import threading

    others = [t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon]
    if others or threading.current_thread() is not threading.main_thread() or _children():
        raise SystemExit(code)
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is None:  # an interpreter without it: the usual exit runs them
        raise SystemExit(code)
    run_exit_handlers()
    _flush_everything()
    os._exit(code)


def _children() -> bool:
    """Whether this process has a child process not yet reaped (one that ended is reaped here)."""
    try:
        while True:
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return True  # one still runs
    except ChildProcessError:
        return False


def _writing_to_files() -> bool:
    """Whether this process holds a regular file open for writing besides its standard streams (Linux:
    ``/proc/self/fd``); True where it cannot tell."""
    import stat

    try:
        fds = [int(fd) for fd in os.listdir("/proc/self/fd")]
    except (OSError, ValueError):
        return True
    for fd in fds:
        if fd <= 2:
            continue  # the standard streams: flushed in any case
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue  # a pipe, a socket, a device
            with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as fh:
                flags = int(next(line for line in fh if line.startswith("flags:")).split()[1], 8)
        except (OSError, ValueError, StopIteration):
            continue  # closed meanwhile (the listing's own)
        if flags & (os.O_WRONLY | os.O_RDWR):
            return True
    return False


def _flush_everything() -> None:
    """Flush the log handlers and every file this process holds open for writing (standard streams included),
    as the interpreter's teardown would have. The files are found among all of the interpreter's objects (a few
    hundredths of a second with scikit-learn loaded) only when the process holds a file open for writing at all
    (``_writing_to_files``): at the end of a command it usually holds none."""
    import gc
    import io

    if "logging" in sys.modules:
        sys.modules["logging"].shutdown()
    streams = [sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__]
    for obj in [*streams, *(gc.get_objects() if _writing_to_files() else ())]:
        if isinstance(obj, io.IOBase):
            try:
                if not obj.closed and obj.writable():
                    obj.flush()
            except (OSError, ValueError):  # a pipe whose reader is gone, a stream closed under us
                pass
