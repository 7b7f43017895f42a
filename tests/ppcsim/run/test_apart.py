"""The evaluation of an MPC session in a process of its own (ppcsim.run.apart): the same figures as ``ppc run``'s
own process gives, from the few fields it is sent; an exception raised there is raised in ``ppc run``; a process
that dies or is given nothing leaves ``ppc run`` to evaluate itself, and is reaped."""

from __future__ import annotations

import pickle
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.cluster import KMeans

from conftest import blobs, kmeans, scenario_toml, split_x, write_scenario
from coordinator.join import Join
from coordinator.types import Combined, Outcome
from parties.disguise import disguise
from ppcsim.evaluate.settings import Settings
from ppcsim.run.apart import Evaluator, available, portable
from ppcsim.run.observers import observer
from ppcsim.scenario.load import load_scenario
from protos.vocabulary import MPC

pytestmark = pytest.mark.processes

SCENARIO = scenario_toml("blobs-apart", split_x(2, 2, 2), seed=5, deadline=60,
                         data=blobs(80, 6, 3, label_column="target"),
                         clustering=kmeans(3, "mpc", max_iter=4, reveal_centres=True))


def finished_mpc(tmp_path, *, labels_off: bool = False):
    """A scenario and a finished MPC session as the coordinator holds one: every party's records joined, the labels
    and centres of scikit-learn's Lloyd's from the arbiter's initial records (what the MPC opens), one label
    changed when ``labels_off``."""
    scenario = load_scenario(write_scenario(tmp_path, SCENARIO))
    own = {cfg.name: disguise(cfg) for cfg in scenario.parties}
    first = scenario.parties[0].name
    n = len(own[first].data.ids)
    X = np.hstack([own[p.name].X for p in scenario.parties])
    init = np.array([3, 40, 71])
    fit = KMeans(n_clusters=3, init=X[init], n_init=1, max_iter=4, tol=0.0, algorithm="lloyd").fit(X)
    labels = fit.labels_.astype(np.int64)
    if labels_off:
        labels[0] = (labels[0] + 1) % 3
    join = Join(ids=own[first].data.ids, index={p.name: np.arange(n) for p in scenario.parties},
                dropped={p.name: 0 for p in scenario.parties})
    outcome = Outcome(join=join, combined=Combined(), labels=labels, by_party={p.name: labels for p in scenario.parties})
    centres = fit.cluster_centers_.astype("<f8").tobytes()
    session = SimpleNamespace(
        spec=scenario.session_spec(None, keep_uploads=False), outcome=outcome, contributions={},
        arbiter=SimpleNamespace(init=init, hub=SimpleNamespace(results={p.name: (labels.tobytes(), centres)
                                                                        for p in scenario.parties}),
                                lock=__import__("threading").Lock()))  # a lock: the session's own does not pickle
    return scenario, session


def test_the_evaluating_process_gives_the_figures_ppc_run_gives_in_its_own_process(tmp_path):
    scenario, session = finished_mpc(tmp_path, labels_off=True)
    here = observer(MPC).evaluate(scenario, session, Settings())
    apart = Evaluator(MPC, observer(MPC).modules(scenario))
    apart.send(scenario, session, Settings())
    there = apart.result()
    assert there is not None and apart.proc is None  # read, and the process reaped
    assert there.to_json() == here.to_json()
    utility = there.to_json()["utility"]
    assert utility["labels_equal_same_init"] is False and utility["vs_same_init"]["ari"] < 1.0  # the changed label
    assert utility["centres_max_abs_error"] == 0.0
    assert there.to_json()["privacy"]["assumption"].startswith("honest majority")


def test_what_is_sent_is_plain_values_without_the_session_s_locks(tmp_path):
    scenario, session = finished_mpc(tmp_path)
    with pytest.raises(TypeError):
        pickle.dumps(session)
    sent = pickle.loads(pickle.dumps(portable(session)))
    assert np.array_equal(sent.arbiter.init, session.arbiter.init)
    assert sent.arbiter.hub.results == session.arbiter.hub.results
    assert np.array_equal(sent.outcome.labels, session.outcome.labels) and sent.spec == session.spec


def test_an_exception_of_the_evaluation_is_raised_in_ppc_run_s_process(tmp_path):
    scenario, session = finished_mpc(tmp_path)
    session.arbiter.init = np.array([3, 40, 500])  # no such record
    apart = Evaluator(MPC, [])
    apart.send(scenario, session, Settings())
    with pytest.raises(IndexError, match="500"):
        apart.result()
    assert apart.proc is None


def test_a_process_that_died_or_was_given_nothing_answers_none_and_is_reaped(tmp_path):
    scenario, session = finished_mpc(tmp_path)
    dead = Evaluator(MPC, [])
    proc = dead.proc
    proc.kill()
    proc.wait()
    dead.send(scenario, session, Settings())
    assert dead.result() is None and dead.proc is None
    idle = Evaluator(MPC, observer(MPC).modules(scenario))
    proc = idle.proc
    assert idle.result() is None  # given nothing: ppc run evaluates itself
    assert proc.returncode is not None and idle.proc is None


def test_available_only_where_the_normal_priority_can_be_taken_back():
    import os

    if not hasattr(os, "SCHED_IDLE"):
        assert available() is False
    elif os.geteuid() == 0:
        assert available() is True


def test_a_run_evaluates_apart_only_an_mpc_it_measures_where_the_priority_can_be_taken_back(tmp_path):
    scenario = load_scenario(write_scenario(tmp_path, SCENARIO))
    upload = load_scenario(write_scenario(tmp_path, scenario_toml("blobs-upload", split_x(3, 3, method="none"),
                                                                  seed=5, data=blobs(80, 6, 3),
                                                                  clustering=kmeans(3)), filename="upload.toml"))
    assert Evaluator.for_run(scenario, None) is None  # --no-eval
    assert Evaluator.for_run(upload, Settings()) is None  # imported beside the session in ppc run's process
    apart = Evaluator.for_run(scenario, Settings())
    try:
        assert (apart is not None) == available()
        assert apart is None or apart.protocol == MPC
    finally:
        if apart is not None:
            apart.close()
            assert apart.proc is None


@pytest.mark.skipif(not available(), reason="this system would not let a process take its priority back")
def test_it_imports_at_idle_priority_and_every_thread_of_it_gets_the_normal_one_back():
    import os
    import subprocess
    import sys
    import time

    from ppcsim.run.apart import normal_priority

    apart = Evaluator(MPC, ["sklearn.cluster"])
    try:
        time.sleep(0.5)  # started, and importing
        assert os.sched_getscheduler(apart.proc.pid) == os.SCHED_IDLE
    finally:
        apart.close()
    code = ("import os, threading, time\nos.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\n"
            "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\nprint(flush=True)\ntime.sleep(30)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        proc.stdout.readline()  # both threads run, at idle priority
        threads = [int(t) for t in os.listdir(f"/proc/{proc.pid}/task")]
        assert len(threads) == 2 and {os.sched_getscheduler(t) for t in threads} == {os.SCHED_IDLE}
        normal_priority(proc.pid)
        assert {os.sched_getscheduler(t) for t in threads} == {os.SCHED_OTHER}
    finally:
        proc.kill()
        proc.wait()


#: A process that starts as ``ppc run`` does (its command line imported, no OpenMP yet) and evaluates the pickled
#: job in argv[1] in a copy of itself, printing the Evaluation's JSON.
FORKING = """
import json, pickle, sys
import ppcsim.cli.parser
from ppcsim.run.apart import Evaluator, Forked, forkable
assert forkable()
scenario, session, settings = pickle.load(open(sys.argv[1], "rb"))
apart = Evaluator("mpc", ["ppcsim.run.observers.mpc"], fork=True)
assert isinstance(apart.proc, Forked)
apart.send(scenario, session, settings)
print(json.dumps(apart.result().to_json()))
"""


def test_a_copy_of_ppc_run_s_process_gives_the_same_figures(tmp_path):
    import json
    import subprocess
    import sys

    from ppcsim.run.apart import forkable

    scenario, session = finished_mpc(tmp_path, labels_off=True)
    here = observer(MPC).evaluate(scenario, session, Settings())
    assert not forkable()  # this process ran scikit-learn's k-means (OpenMP): a copy of it would hang
    job = tmp_path / "job.pickle"
    job.write_bytes(pickle.dumps((scenario, portable(session), Settings())))
    done = subprocess.run([sys.executable, "-c", FORKING, str(job)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(json.dumps(here.to_json()))
