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
