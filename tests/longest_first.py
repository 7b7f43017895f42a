"""The longest tests first, so that ``-n`` (the README's command) ends with every worker busy.

With several workers, a test of a minute started last keeps one worker busy for that minute while the others have
nothing left to do. Started first, the short tests fill in around it. The test files are put in the order of
their longest known test (``SECONDS``), the longest first; inside a file, its known-long tests come first, then
the others in their written order. A file's tests stay together, so a module-scoped fixture (a Dask cluster, a
server) is still made once per worker. Files with no known-long test keep their order, after those.

A session fixture made once per run (``once_per_run``: the demo's run, the documentation site) is charged to
one test only, its leader, listed in ``SECONDS`` with the fixture's time; its other tests run last, in their
written order, when the leader has made it, rather than wait for it on another worker.

The order changes when tests run, never what they check: every test passes in any order, and
``pytest -p no:longest_first`` runs them in their written order.

``SECONDS`` comes from ``python -m pytest -n 2 --durations=0`` (setup, call and teardown summed per test), kept
to the tests of ten seconds or more. A stale figure only moves a test in the queue, and the id of a test renamed
or removed is ignored: refresh the table from a new run when the longest tests change.
"""

from __future__ import annotations

import os

import pytest
from tiers import SHARED

#: Seconds each known-long test took in a whole run on two workers (setup + call + teardown). The tests made
#: smaller since (comparison.py's smoke run, the sweep command) are given their share of a 2-worker run of the
#: longest test files at load 12, scaled by the ratio of the unchanged bench tests' figures in the two runs (0.4).
SECONDS: dict[str, float] = {
    "tests/bench/test_bench_scripts.py::test_every_benchmark_runs_at_smoke_size_and_writes_well_formed_figures"
    "[comparison.py]": 45,
    # the leader of the docs_site fixture: the site's build (about 54 s) when PPC_DOCS_SITE names no build
    "tests/docs/test_docs_site.py::test_the_site_builds_with_no_warning": 54,
    "tests/bench/test_bench_scripts.py::test_every_benchmark_runs_at_smoke_size_and_writes_well_formed_figures"
    "[sweep_scaling.py]": 46,
    "tests/coordinator/test_many_sessions_load.py::"
    "test_one_coordinator_serves_10_sessions_of_4_parties_like_10_runs_alone": 30,
    "tests/bench/test_bench_scripts.py::test_every_benchmark_runs_at_smoke_size_and_writes_well_formed_figures"
    "[mpc_engines.py]": 32,
    "tests/bench/test_bench_scripts.py::test_every_benchmark_runs_at_smoke_size_and_writes_well_formed_figures"
    "[osbr_memory.py]": 24,
    "tests/bench/test_bench_scripts.py::test_every_benchmark_runs_at_smoke_size_and_writes_well_formed_figures"
    "[coordinator_load.py]": 24,
    "tests/ppcsim/run/test_process_faults.py::test_party_that_never_arrives_fails_only_its_session": 22,
    "tests/ppcsim/run/test_spu_labels_runs.py::"
    "test_a_program_waiting_for_go_connects_to_no_peer_and_exits_when_the_party_refuses": 20,
    "tests/ppcsim/run/test_secure_labels_runs.py::"
    "test_the_default_opens_the_labels_only_and_the_distances_mode_places_every_record": 18,
    "tests/parties/test_party_restart_mid_upload.py::"
    "test_a_party_killed_mid_upload_comes_back_from_its_state_file_with_the_same_labels": 25,
    "tests/ppcsim/run/test_mpc_runs.py::test_bundled_wine_scenario_runs_through_ppc_run": 16,
    "tests/ppcsim/cli/test_roles_by_hand.py::test_parties_draw_their_own_secrets_unless_given_a_seed": 16,
    "tests/ppcsim/run/test_output_folders.py::test_ppc_run_twice_into_one_folder": 15,
    "tests/ppcsim/run/test_mpc_runs.py::"
    "test_ppc_run_three_parties_gives_plain_lloyds_labels_and_counts_every_relayed_byte": 15,
    "tests/ppcsim/run/test_dask_cluster.py::test_ctrl_c_cancels_the_sweep_and_leaves_no_process_behind": 15,
    "tests/bench/test_bench_scripts.py::test_every_benchmark_runs_at_smoke_size_and_writes_well_formed_figures"
    "[mpc_relay.py]": 15,
    "tests/ppcsim/run/test_process_faults.py::test_coordinator_killed_while_parties_wait_then_restarted": 14,
    "tests/ppcsim/run/test_mpc_runs.py::test_roles_by_hand_over_mutual_tls_two_parties_and_the_coordinators_helper":
    14,
    "tests/bench/test_bench_scripts.py::test_every_benchmark_runs_at_smoke_size_and_writes_well_formed_figures"
    "[e2e_drbt.py]": 14,
    "tests/test_static.py::test_mypy_reports_nothing": 13,
    "tests/coordinator/test_many_sessions_load.py::test_sessions_must_agree_on_the_transport": 13,
    "tests/ppcsim/run/test_spu_labels_runs.py::"
    "test_the_argmin_program_keeps_its_compiled_program_and_a_warm_run_gives_the_same_labels": 12,
    "tests/ppcsim/run/test_mpc_runs.py::test_two_parties_with_the_coordinators_helper_as_third_share_holder": 12,
    "tests/parties/test_progress_messages.py::"
    "test_a_party_with_no_coordinator_says_so_every_few_seconds_and_nothing_when_quiet": 12,
    "tests/coordinator/test_many_sessions_load.py::test_credentials_from_two_cas_are_refused_naming_the_session": 12,
    "tests/bench/test_bench_scripts.py::test_every_benchmark_runs_at_smoke_size_and_writes_well_formed_figures"
    "[scaling.py]": 12,
    "tests/ppcsim/run/test_sweep.py::test_run_html_report_is_self_contained": 11,
    "tests/ppcsim/run/test_sweep.py::test_sweep_command_writes_csv_figures_and_html": 15,
    "tests/ppcsim/run/test_sweep.py::test_in_process_points_equal_real_multiprocess_runs": 11,
    "tests/ppcsim/run/test_ledger_layers.py::test_every_scenarios_ledger_lines_add_up[wine-spu]": 11,
    # the leader of the demo_run fixture: the demo's run (about 10 s)
    "tests/ppcsim/report/test_html_in_browser.py::test_demo_report_renders_in_chromium": 11,
    "tests/parties/test_owner_nmds.py::test_party_processes_send_what_the_observers_replay_computes": 10,
}


def _test_id(item: pytest.Item) -> str:
    """The node id as written, without the ``@group`` pytest-xdist's ``--dist loadgroup`` may append."""
    nodeid = item.nodeid
    return nodeid[:nodeid.rfind("@")] if nodeid.rfind("@") > nodeid.rfind("]") else nodeid


def order(items: list[pytest.Item], seconds: dict[str, float] | None = None,
          shared: tuple[str, ...] = SHARED) -> list[pytest.Item]:
    """``items`` with their files in the order of their longest known test (``seconds``, by node id), the longest
    first, and inside a file its known-long tests first (longest first), then the others as they came; files
    with no known-long test after, as they came. Last, as they came: the tests that use a fixture of ``shared``
    and are not its leader (its longest known user), which would otherwise wait on another worker for the
    leader to make it."""
    seconds = SECONDS if seconds is None else seconds
    known = [seconds.get(_test_id(item), 0.0) for item in items]
    paths = [_test_id(item).partition("::")[0] for item in items]
    followers: set[int] = set()
    for fixture in shared:
        users = [i for i, item in enumerate(items) if fixture in getattr(item, "fixturenames", ())]
        leader = max(users, key=known.__getitem__, default=None)
        if leader is not None and known[leader]:
            followers.update(i for i in users if i != leader)
    longest: dict[str, float] = {}
    first: dict[str, int] = {}
    for i, path in enumerate(paths):
        longest[path] = max(longest.get(path, 0.0), known[i])
        first.setdefault(path, i)
    ranked = sorted(range(len(items)), key=lambda i: (i in followers, -longest[paths[i]], first[paths[i]], -known[i]))
    return [items[i] for i in ranked]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    items[:] = order(items)


#: Workers per CPU under ``-n auto``: most of the suite's time is spent waiting on the processes a test starts
#: (parties, coordinators, MPC programs), so one worker per CPU leaves the CPUs idle about a fifth of the time. Two
#: cores, the whole suite with the site built in it: 590 s with 2 workers (81% busy on the process tests), 453 s
#: with 4 (96-99% busy).
WORKERS_PER_CPU = 2


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: ``WORKERS_PER_CPU`` workers for each CPU this process may use (``PYTEST_XDIST_AUTO_NUM_WORKERS``
    in the environment still decides, as pytest-xdist documents)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    return WORKERS_PER_CPU * len(os.sched_getaffinity(0))
