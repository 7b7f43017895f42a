"""Sweeps and reproductions on a Dask cluster: a two-worker LocalCluster (worker processes) on this machine."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from conftest import LAB_SHOP_DRBT, WINE, WINE_LABELLED, party_table, scenario_toml, write_scenario
from ppcsim.cli.parser import main
from ppcsim.errors import RunError
from ppcsim.reproduce import reproduction as rp
from ppcsim.run.observer import Settings

distributed = pytest.importorskip("distributed")
psutil = pytest.importorskip("psutil")

from ppcsim.reproduce.on_cluster import ClusterTasks  # noqa: E402
from ppcsim.run.cluster import parse_local, run_all, sweep_on_cluster  # noqa: E402
from ppcsim.run.sweep import sweep  # noqa: E402

CL = dict(parties=LAB_SHOP_DRBT, seed=3, data=WINE_LABELLED, clustering={"n_clusters": 3})
SCENARIO = scenario_toml("cl", **CL)


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes of one thread each, as ``--scheduler local:2`` starts them."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as c:
        yield c


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_in_process_sweep_on_two_workers_equals_the_local_sweep(tmp_path, cluster):
    """Four points (two seeds, two methods; bench/sweep_scaling.py's smoke run compares a grid over k the same
    way), attacks and classifiers measured at each: every column but the time equal to a local sweep's."""
    path = write_scenario(tmp_path, SCENARIO + "\n[sweep]\nseed = [0, 1]\nmethod = ['drbt', 'rotation']\n")
    log = []
    rows, failed = sweep_on_cluster(path, tmp_path / "dask", cluster.scheduler_address, in_process=True,
                                    log=type("L", (), {"write": lambda s, t: log.append(t), "flush": lambda s: 0})())
    assert failed == [] and len(rows) == 4
    # Dask's workers run numpy with one BLAS thread; so does the local run compared with them
    with threadpool_limits(1):
        local = sweep(path, tmp_path / "local", in_process=True, log=open(os.devnull, "w"))
    ours, theirs = read_csv(tmp_path / "dask" / "sweep.csv"), read_csv(tmp_path / "local" / "sweep.csv")
    assert list(ours[0]) == list(theirs[0])
    for a, b in zip(ours, theirs, strict=True):
        assert {k: v for k, v in a.items() if k != "seconds"} == {k: v for k, v in b.items() if k != "seconds"}
    assert sorted(p.name for p in (tmp_path / "dask" / "points").iterdir()) == \
        sorted(p.name for p in (tmp_path / "local" / "points").iterdir())
    # a local run with several BLAS threads sums the stress's dot products in another order: last digits only
    for a, b in zip(rows, local):
        assert a["stress"] == pytest.approx(b["stress"], rel=1e-12)
    text = "".join(log)
    assert "4/4 done, 0 running, 0 failed" in text and "4 of 4 points done, 0 failed" in text


def test_multi_process_points_start_on_the_workers_and_their_outputs_come_back(tmp_path, cluster):
    path = write_scenario(tmp_path, SCENARIO + "\n[sweep]\nk = [2, 3]\n")
    rows, failed = sweep_on_cluster(path, tmp_path / "dask", cluster.scheduler_address, in_process=False,
                                    settings=Settings(attacks=False), log=open(os.devnull, "w"))
    assert failed == []
    local = sweep(path, tmp_path / "local", in_process=True, settings=Settings(attacks=False),
                  log=open(os.devnull, "w"))
    for a, b in zip(rows, local, strict=True):
        assert a["ari"] == b["ari"] and a["bytes_serialized"] == b["bytes_serialized"]
        assert a["stress"] == pytest.approx(b["stress"], rel=1e-12)
    for name in ("cl-000", "cl-001"):
        run = tmp_path / "dask" / "runs" / name
        assert sorted(p.name for p in run.iterdir()) == ["clustered.npz", "labels.csv", "logs", "report.json", "sent"]
        assert sorted(p.name for p in (run / "sent").iterdir()) == ["lab.npz", "shop.npz"]
        assert sorted(p.name for p in (run / "logs").iterdir()) == ["lab.log", "shop.log"]
        assert np.load(run / "sent" / "lab.npz")["ids"].shape == (178,)


def test_a_failed_point_is_reported_and_the_sweep_goes_on(tmp_path, cluster, capsys):
    (tmp_path / "t.csv").write_text("id,a,b,c,d\n" + "".join(
        f"{i},{i % 3},{i % 5},{'x' if i == 4 else i % 7},{i % 2}\n" for i in range(1, 13)))
    path = write_scenario(tmp_path, scenario_toml(
        "f", [party_table("lab", ["a", "b"]), party_table("shop", ["d"])], seed=0,
        data={"source": "t.csv", "id_column": "id"}, clustering={"n_clusters": 2},
        sweep={"lab.columns": [["a", "b"], ["a", "c"], ["b"]]}))
    code = main(["sweep", str(path), "--out", str(tmp_path / "out"), "--in-process", "--no-attacks",
                 "--scheduler", cluster.scheduler_address])
    err = capsys.readouterr().err
    assert code == 1
    assert "FAILED: " in err and "column 'c', line 5 is not a number: 'x'" in err
    assert "2 of 3 points done, 1 failed" in err and "error: 1 of 3 points failed" in err
    assert [r["point"] for r in read_csv(tmp_path / "out" / "sweep.csv")] == ["0", "2"]
    (failure,) = read_csv(tmp_path / "out" / "failures.csv")
    assert failure["point"] == "1" and "not a number" in failure["error"]


def test_a_point_whose_worker_dies_is_run_again_on_a_worker(tmp_path, cluster):
    marker = str(tmp_path / "died")

    def once_fatal(x):  # defined here: Dask ships it to the worker by value
        import os
        import signal
        if x == 1 and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        return x * 10

    with distributed.Client(cluster.scheduler_address) as client:
        outcomes = run_all(client, once_fatal, [0, 1, 2], label="t")
        client.wait_for_workers(2, timeout=60)  # the nanny restarts the killed worker, for the next tests
    assert [o.value for o in outcomes] == [0, 10, 20]
    # the point that killed its worker ran again; one queued on that worker (not yet started) may count too
    assert outcomes[1].retries == 1 and all(o.retries <= 1 for o in outcomes)
    assert all(o.error is None for o in outcomes)


def test_reproduction_projections_on_the_cluster_equal_the_serial_run(cluster):
    X = rp.normalize(np.random.default_rng(0).integers(0, 4, size=(60, 8)).astype(float), "zscore")
    d = rp.pdist(X)
    tasks = [((8,), (k,), p, s) for p in ("gaussian", "sparse") for k in (3, 6) for s in range(3)]
    tasks += [((4, 4), (2, 2), "gaussian", 0), ((8,), (4,), rp.ORTHONORMAL, 1)]
    serial = rp.run_tasks(X, d, tasks, jobs=1, label="t", progress=lambda _: None)
    lines = []
    with distributed.Client(cluster.scheduler_address) as client:
        jobs = ClusterTasks(client)
        assert str(jobs) == "2 Dask worker processes"
        on_cluster = rp.run_tasks(X, d, tasks, jobs=jobs, label="t", progress=lines.append)
    assert on_cluster == serial
    assert lines[-1].startswith(f"  t: {len(tasks)}/{len(tasks)} projections")


def test_scheduler_errors_say_what_to_do(tmp_path, monkeypatch, capsys):
    with pytest.raises(RunError, match="expected local:N with N >= 1"):
        parse_local("local:zero")
    assert parse_local("local:3") == 3 and parse_local("tcp://h:8786") is None
    path = write_scenario(tmp_path, SCENARIO + "\n[sweep]\nk = [2]\n")
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if Dask were not installed
    assert main(["sweep", str(path), "--out", str(tmp_path / "o"), "--scheduler", "local:2"]) == 1
    assert "install it with: pip install 'ppc-sim[dask]'" in capsys.readouterr().err


def as_from_a_terminal() -> None:
    """In the child before it runs: Ctrl-C's default disposition, as a shell's foreground job has it. A command
    started in the background of a non-interactive shell (as a CI script may start the tests) inherits SIGINT
    ignored, and Python then installs no KeyboardInterrupt handler: the sweep would rightly ignore the signal and
    finish, which is not what this test is about."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_cancels_the_sweep_and_leaves_no_process_behind(tmp_path):
    path = write_scenario(tmp_path, name="cc", deadline=120, **CL, sweep={"k": [2, 3], "seed": [0, 1, 2]})
    proc = subprocess.Popen([sys.executable, "-m", "ppcsim", "sweep", str(path), "--out", str(tmp_path / "o"),
                             "--no-attacks", "--scheduler", "local:2"], preexec_fn=as_from_a_terminal,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)
    me = psutil.Process(proc.pid)
    seen: dict[int, psutil.Process] = {}
    end = time.monotonic() + 120
    while time.monotonic() < end:  # wait until party processes run on the workers
        try:
            children = me.children(recursive=True)
            for child in children:
                seen.setdefault(child.pid, child)
            if sum("party" in c.cmdline() for c in children) >= 2:
                break
        except psutil.Error:
            pass
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("no party process started within 120 s")
    os.kill(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out
    assert "interrupted" in out
    time.sleep(0.5)
    alive = [p for p in seen.values() if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert alive == [], [p.cmdline() for p in alive]
    assert not (tmp_path / "o" / "sweep.csv").exists()


THREE = scenario_toml(
    "three", [party_table("lab", WINE[:4], "drbt", k=2),
              party_table("winery", ["magnesium", "total_phenols", "flavanoids", "hue"], "rotation"),
              party_table("shop", ["proline", "color_intensity"])],
    seed=8, data=WINE_LABELLED, clustering={"n_clusters": 3})


def test_one_scenarios_parties_on_workers_give_the_local_runs_labels_and_payload(tmp_path, cluster):
    """Three parties on a two-worker cluster (round-robin, so one worker runs two at once); the coordinator
    and its relays stay here. Same labels, same arrays, same payload as a local run."""
    from ppcsim.run.cluster import ClusterParties
    from ppcsim.run.launcher import run_scenario
    from ppcsim.scenario.load import load_scenario

    scenario = load_scenario(write_scenario(tmp_path, THREE))
    local = run_scenario(scenario, tmp_path / "local", log=open(os.devnull, "w"), settings=None)
    with distributed.Client(cluster) as client:
        parties = ClusterParties(client, local=True)
        remote = run_scenario(scenario, tmp_path / "remote", log=open(os.devnull, "w"), settings=None,
                              parties=parties)
    assert set(parties.placed) == {"lab", "winery", "shop"} and len(set(parties.placed.values())) == 2
    assert remote["state"] == "done"
    assert (tmp_path / "remote" / "labels.csv").read_text() == (tmp_path / "local" / "labels.csv").read_text()
    for name in ("lab", "winery", "shop"):
        with np.load(tmp_path / "local" / "sent" / f"{name}.npz") as a, \
                np.load(tmp_path / "remote" / "sent" / f"{name}.npz") as b:
            assert np.array_equal(a["data"], b["data"]) and a["ids"].tolist() == b["ids"].tolist()
    assert [p["bytes"]["payload"] for p in remote["parties"]] == [p["bytes"]["payload"] for p in local["parties"]]
    assert all(p["bytes"]["wire"] > p["bytes"]["payload"] for p in remote["parties"])  # counted by our relays
    log = (tmp_path / "remote" / "logs" / "lab.log").read_text().splitlines()
    # without mutual TLS a party first says what an active coordinator could do, then works as here
    assert log[0].startswith("ppc party lab: security: without mutual TLS") and log[1].startswith("party lab: 178 rows")


def test_a_party_pinned_to_a_host_no_worker_is_on_is_refused(tmp_path, cluster):
    from ppcsim.run.cluster import ClusterParties

    with distributed.Client(cluster) as client:
        parties = ClusterParties(client, local=True)
        with pytest.raises(RunError, match="party 'lab': no Dask worker on host 'elsewhere.example.org'"):
            parties.worker_for("lab", "elsewhere.example.org")
        assert parties.worker_for("lab", "127.0.0.1") in client.scheduler_info()["workers"]
