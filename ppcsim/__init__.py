"""ppc-sim: command line and launcher for multi-party privacy-preserving clustering scenarios."""

__version__ = "0.1.0"

import os as _os

# gRPC's C core logs its own errors (e.g. a port it cannot bind) to stderr next to
# ppc's one-line message; keep it quiet unless the user asks for its logs.
_os.environ.setdefault("GRPC_VERBOSITY", "NONE")
# numpy asks the kernel for huge pages for big arrays. On virtual machines that back guest
# memory lazily (e.g. Firecracker) each first touch of a huge page costs the host's faults for
# it, and filling fresh arrays ran 8x slower (300 MB/s against 2.5 GB/s; bench/README.md).
# ppc, its party processes and its benchmarks allocate far more than they reuse; set
# NUMPY_MADVISE_HUGEPAGE=1 to keep numpy's default. Takes effect only before numpy is imported.
_os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


def _return_freed_memory() -> None:
    """Have glibc's malloc give blocks of 128 KiB and more straight back to the system when freed.

    By default glibc raises that threshold to the largest block freed so far,
    after which the 1 MiB message buffers of every upload come from per-thread
    arenas that keep what is freed: the coordinator then grew by tens of MiB
    for every party uploading at once, beyond the data it holds
    (bench/osbr_memory.py, bench/scaling.py). Set MALLOC_MMAP_THRESHOLD_ to
    choose another threshold; nothing happens off glibc.
    """
    if "MALLOC_MMAP_THRESHOLD_" in _os.environ:
        return
    from coordinator.malloc import M_MMAP_THRESHOLD, mallopt

    mallopt(M_MMAP_THRESHOLD, 128 << 10)  # which also stops glibc's adjustment of it


_return_freed_memory()


def simulate(scenario, processes: bool = False, **options):
    """Run a scenario and return a ``ppcsim.api.Run`` (see ppcsim.api.simulate and docs/api.md)."""
    from ppcsim.api import simulate as run

    return run(scenario, processes, **options)
