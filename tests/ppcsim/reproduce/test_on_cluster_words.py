"""``ppc reproduce`` says what runs its projections in words that agree with the number ("1 processes" did not)."""

from ppcsim.reproduce.on_cluster import ClusterTasks, processes


def _cluster(workers: int) -> ClusterTasks:
    tasks = ClusterTasks.__new__(ClusterTasks)  # no scheduler: only the count of its workers is read
    tasks.workers = workers
    return tasks


def test_one_is_singular_and_more_are_plural():
    assert [processes(n) for n in (1, 2, 4)] == ["1 process", "2 processes", "4 processes"]
    assert [str(_cluster(n)) for n in (1, 2)] == ["1 Dask worker process", "2 Dask worker processes"]
