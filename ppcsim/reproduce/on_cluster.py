"""``ppc reproduce --scheduler``: the projections' stress computed on the workers of a Dask cluster
(``ppcsim.run.cluster`` connects and runs the tasks)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ppcsim.errors import RunError
from ppcsim.reproduce.projection import projection_stress
from ppcsim.run.cluster import connect, run_all

_local = threading.local()


def processes(jobs: int | ClusterTasks) -> str:
    """What runs ``ppc reproduce``'s projections, in words: "1 process", "4 processes", "2 Dask worker processes"."""
    n, what = (jobs.workers, "Dask worker process") if isinstance(jobs, ClusterTasks) else (jobs, "process")
    return f"{n} {what}{'es' if n != 1 else ''}"


def _stress_task(task: tuple, X, d) -> float:
    """On a worker: one seeded projection's stress (004 eq. 6) against the original distances ``d``."""
    sizes, ks, projection, seed = task
    out = getattr(_local, "out", None)
    if out is None or out.shape != d.shape:  # one buffer per worker thread, reused across projections
        out = _local.out = d.copy()
    return projection_stress(X, d, list(sizes), list(ks), projection, seed, out=out)


class ClusterTasks:
    """``ppc reproduce``'s projections on a Dask cluster: pass it as ``jobs`` to ``run_tasks``."""

    def __init__(self, client):
        self.client = client
        self.workers = len(client.scheduler_info()["workers"])

    def __str__(self) -> str:
        return processes(self)

    def stress(self, X, d, tasks: list[tuple], report: Callable[[int], object]) -> list[float]:
        """The stress of every ``(sizes, ks, projection, seed)`` task, in order; RunError when one fails."""
        # the data and its distances go to every worker once, not once per task
        Xf, df = self.client.scatter([X, d], broadcast=True)
        try:
            outcomes = run_all(self.client, _stress_task, tasks, args=(Xf, df), label="projection",
                               on_done=lambda o, c: report(c.done))
        finally:
            self.client.cancel([Xf, df])
        bad = [o for o in outcomes if o.error]
        if bad:
            raise RunError(f"{len(bad)} of {len(tasks)} projections failed on the cluster; the first, "
                           f"{tasks[bad[0].index]}: {bad[0].error}")
        return [o.result() for o in outcomes]


@contextmanager
def cluster_tasks(address: str, *, log=None) -> Iterator[ClusterTasks]:
    """``ClusterTasks`` on the scheduler at ``address`` (or ``local:N``), for the length of the block."""
    with connect(address, log=log) as client:
        yield ClusterTasks(client)
