"""The two tiers of the tests, kept honest by the tests themselves.

A test that starts an OS process (``subprocess``, ``multiprocessing``) or a gRPC server, in its own body or in
a fixture it uses, is marked ``processes``; every other test is a unit test, and ``pytest -m "not processes"``
runs those alone in about a minute. The mark cannot go stale: while an unmarked test sets up, runs and tears
down, starting a process or a server fails it with a message that names the mark to add. ``PPC_TIERS_RECORD=FILE``
also writes the node id of each such test to FILE: a run of the suite with nothing marked lists every test to mark
in the time of the unit tier (each such test fails at its first process).
"""

from __future__ import annotations

import contextlib
import multiprocessing.process
import os
import subprocess

import grpc
import grpc.aio
import pytest

MARK = "processes"

#: Test files every test of which starts a process or a server (paths from the repository's root).
PROCESS_FILES = frozenset({
    "tests/ppcsim/run/test_spu_runs.py",
    "tests/ppcsim/run/test_spu_labels_runs.py",
    "tests/ppcsim/run/test_paper_evaluation.py",
    "tests/parties/test_party_terms.py",
    "tests/parties/test_party_text.py",
    "tests/ppcsim/run/test_secure_labels_runs.py",
    "tests/coordinator/test_greedy_clients.py",
    "tests/coordinator/test_hostile_messages.py",
    "tests/coordinator/test_hostile_uploads.py",
    "tests/coordinator/test_malloc_arenas.py",
    "tests/coordinator/test_many_sessions_load.py",
    "tests/coordinator/test_mpc_relay.py",
    "tests/coordinator/test_servicer_rpc.py",
    "tests/docs/test_docs_site.py",
    "tests/parties/test_mpc_active_coordinator.py",
    "tests/parties/test_party_restart_mid_upload.py",
    "tests/ppcsim/cli/test_cli_errors.py",
    "tests/ppcsim/cli/test_roles_by_hand.py",
    "tests/ppcsim/report/test_html_in_browser.py",
    "tests/ppcsim/run/test_across_hosts.py",
    "tests/ppcsim/run/test_end_to_end.py",
    "tests/ppcsim/run/test_secure_aggregation_runs.py",
    "tests/protos/test_client_from_protocol_doc.py",
    "tests/test_static.py",
})
#: Single tests that do, in files that are otherwise unit tests (file::function, every parametrisation).
PROCESS_TESTS = frozenset({
    # importing mpyc runs `uname -p` (platform.processor) in a subprocess, when no test imported it before
    "tests/coordinator/test_secagg_labels.py::test_the_field_element_bytes_are_mpycs",
    "tests/ppcsim/scenario/test_bundled_scenarios.py::test_the_readmes_demo_output_is_what_the_demo_prints",
    "tests/ppcsim/run/test_spu_runs.py::test_an_interpreter_without_spu_is_refused_naming_it",
    "tests/ppcsim/run/test_spu_runs.py::test_ppc_run_refuses_before_anything_starts_when_spu_is_not_set_up",
    "tests/coordinator/test_coordinator_refusals.py::test_a_post_after_the_id_upload_but_before_every_confirm_is_refused_at_once_not_taken_as_round_0",
    "tests/coordinator/test_gate.py::test_a_party_holding_4200_silent_streams_does_not_stall_another_session",
    "tests/coordinator/test_handler_failures.py::test_a_message_over_4_mib_is_resource_exhausted",
    "tests/coordinator/test_handler_failures.py::test_refused_outsider_streams_write_a_few_log_lines_not_one_each",
    "tests/ppcsim/run/test_helper_flood.py::test_a_relay_flood_to_the_helper_is_refused_within_the_sessions_budget",
    "tests/parties/test_owner_nmds.py::test_party_processes_send_what_the_observers_replay_computes",
    "tests/ppcsim/scenario/test_refused_before_start.py::test_a_party_by_hand_is_told_the_closest_column_of_a_built_in_set_as_ppc_run_is",
    "tests/parties/test_keel.py::test_keel_pima_runs_offline_end_to_end",
    "tests/parties/test_missing.py::test_a_headerless_file_with_missing_cells_runs_end_to_end_by_row_number",
    "tests/parties/test_geometric_optimize.py::test_ppc_run_names_the_party_that_refuses",
    "tests/parties/test_nmf_methods.py::test_ppc_run_names_the_party_and_the_column",
    "tests/bench/test_bench_scripts.py::test_every_benchmark_runs_at_smoke_size_and_writes_well_formed_figures",
    "tests/coordinator/test_limits.py::test_the_id_bomb_is_refused_at_the_default_settings_naming_the_id_budget_before_it_inflates",
    "tests/coordinator/test_transport_security.py::test_a_party_does_not_trust_a_coordinator_signed_by_another_ca",
    "tests/coordinator/test_transport_security.py::test_a_run_with_mutual_tls_reports_what_protected_each_connection",
    "tests/coordinator/test_transport_security.py::test_a_second_session_never_accepts_the_first_sessions_tokens",
    "tests/coordinator/test_transport_security.py::test_mutual_tls_needs_a_certificate_naming_the_party",
    "tests/coordinator/test_transport_security.py::test_tokens_decide_who_may_act_as_whom",
    "tests/docs/test_tutorials.py::test_tutorial_is_stored_without_outputs_and_runs",
    "tests/parties/test_extra_disguises.py::test_mixed_feature_consortium_runs_through_the_cli",
    "tests/parties/test_keys_bound_to_session.py::test_a_party_refuses_a_coordinator_asking_for_plain_ids_when_its_scenario_says_pseudonymous",
    "tests/parties/test_keys_bound_to_session.py::test_a_party_refuses_a_coordinator_whose_certificate_is_not_for_a_server",
    "tests/parties/test_keys_bound_to_session.py::test_a_partys_summary_holding_its_seed_is_0600",
    "tests/parties/test_keys_bound_to_session.py::test_ppc_coordinator_out_takes_the_folder_as_ppc_run_does",
    "tests/parties/test_keys_bound_to_session.py::test_ppc_credentials_fixes_weak_files_and_refuses_a_symlinked_key",
    "tests/parties/test_keys_bound_to_session.py::test_the_coordinator_refuses_another_sessions_certificate_without_tokens",
    "tests/parties/test_keys_bound_to_session.py::test_under_mutual_tls_every_party_refuses_swapped_keys_before_sending_an_id",
    "tests/parties/test_keys_bound_to_session.py::test_without_mutual_tls_a_coordinator_swapping_keys_reads_every_raw_id",
    "tests/parties/test_lying_coordinator.py::test_a_label_count_one_short_is_refused_before_the_next_post",
    "tests/parties/test_lying_coordinator.py::test_every_party_refuses_a_lying_alignment_before_round_0",
    "tests/parties/test_progress_messages.py::test_a_joined_party_says_how_many_parties_are_present_and_who_is_missing",
    "tests/parties/test_progress_messages.py::test_a_party_with_no_coordinator_says_so_every_few_seconds_and_nothing_when_quiet",
    "tests/parties/test_state_file.py::test_a_party_killed_in_its_session_comes_back_from_its_state_file",
    "tests/ppcsim/evaluate/test_evaluation_plugins.py::test_a_new_attack_is_one_registry_line",
    "tests/ppcsim/report/test_secure_aggregation_wording.py::test_console_and_page_of_a_seeded_secure_run",
    "tests/ppcsim/reproduce/test_paper_reproduction.py::test_parallel_and_serial_runs_agree",
    "tests/ppcsim/reproduce/test_paper_reproduction.py::test_reproduce_without_uci_files",
    "tests/ppcsim/run/test_counting_relay.py::test_network_table_is_validated",
    "tests/ppcsim/run/test_counting_relay.py::test_runs_report_wire_bytes_and_the_link",
    "tests/ppcsim/run/test_dask_cluster.py::test_a_failed_point_is_reported_and_the_sweep_goes_on",
    "tests/ppcsim/run/test_dask_cluster.py::test_a_party_pinned_to_a_host_no_worker_is_on_is_refused",
    "tests/ppcsim/run/test_dask_cluster.py::test_a_point_whose_worker_dies_is_run_again_on_a_worker",
    "tests/ppcsim/run/test_dask_cluster.py::test_ctrl_c_cancels_the_sweep_and_leaves_no_process_behind",
    "tests/ppcsim/run/test_dask_cluster.py::test_in_process_sweep_on_two_workers_equals_the_local_sweep",
    "tests/ppcsim/run/test_dask_cluster.py::test_multi_process_points_start_on_the_workers_and_their_outputs_come_back",
    "tests/ppcsim/run/test_dask_cluster.py::test_one_scenarios_parties_on_workers_give_the_local_runs_labels_and_payload",
    "tests/ppcsim/run/test_dask_cluster.py::test_reproduction_projections_on_the_cluster_equal_the_serial_run",
    "tests/ppcsim/run/test_mpc_runs.py::test_bundled_wine_scenario_runs_through_ppc_run",
    "tests/ppcsim/run/test_mpc_runs.py::test_labels_of_the_mpc_equal_plain_lloyds_in_numpy",
    "tests/ppcsim/run/test_mpc_runs.py::test_ppc_run_three_parties_gives_plain_lloyds_labels_and_counts_every_relayed_byte",
    "tests/ppcsim/run/test_mpc_runs.py::test_roles_by_hand_over_mutual_tls_two_parties_and_the_coordinators_helper",
    "tests/ppcsim/run/test_mpc_runs.py::test_the_mpc_program_never_outlives_the_party_that_started_it",
    "tests/ppcsim/run/test_mpc_runs.py::test_two_parties_with_the_coordinators_helper_as_third_share_holder",
    "tests/ppcsim/run/test_output_folders.py::test_a_claim_held_by_another_process_is_refused_and_freed_when_it_dies",
    "tests/ppcsim/run/test_output_folders.py::test_a_party_starts_without_unix_only_modules",
    "tests/ppcsim/run/test_output_folders.py::test_a_run_into_a_busy_folder_is_refused_at_once",
    "tests/ppcsim/run/test_output_folders.py::test_ppc_run_twice_into_one_folder",
    "tests/ppcsim/run/test_process_faults.py::test_coordinator_killed_while_parties_wait_then_restarted",
    "tests/ppcsim/run/test_process_faults.py::test_coordinator_stopped_by_sigterm_tells_the_waiting_parties",
    "tests/ppcsim/run/test_process_faults.py::test_failed_run_leaves_a_whole_report_and_no_temporary_files",
    "tests/ppcsim/run/test_process_faults.py::test_party_killed_mid_upload_is_discarded_and_the_party_started_again_completes",
    "tests/ppcsim/run/test_process_faults.py::test_party_that_never_arrives_fails_only_its_session",
    "tests/ppcsim/run/test_process_faults.py::test_write_atomic_killed_mid_write_leaves_the_old_file_whole",
    "tests/ppcsim/run/test_python_api.py::test_in_process_and_processes_give_the_same_labels_and_payload",
    "tests/ppcsim/run/test_sweep.py::test_in_process_points_equal_real_multiprocess_runs",
    "tests/ppcsim/run/test_sweep.py::test_run_html_report_is_self_contained",
    "tests/ppcsim/run/test_sweep.py::test_sweep_command_writes_csv_figures_and_html",
    "tests/ppcsim/scenario/test_bundled_scenarios.py::test_clinic_insurer_reports_dropped_rows",
    "tests/ppcsim/scenario/test_bundled_scenarios.py::test_demo_runs_with_no_files",
    "tests/ppcsim/scenario/test_bundled_scenarios.py::test_readme_sample_errors_are_what_ppc_prints",
    "tests/ppcsim/scenario/test_refused_before_start.py::test_a_party_started_by_hand_checks_its_own_file_before_it_joins",
    "tests/ppcsim/scenario/test_refused_before_start.py::test_an_mpc_scenario_without_mpyc_is_refused_before_anything_starts_naming_the_extra",
    "tests/ppcsim/scenario/test_refused_before_start.py::test_ppc_run_refuses_before_any_process_starts",
})
#: Unit tests that take more than a few seconds (reproductions of whole tables, paper-sized data sets): marked
#: ``slow``, so that ``-m "not processes and not slow"`` answers in about a minute.
SLOW_TESTS = frozenset({
    "tests/ppcsim/reproduce/test_paper_reproduction.py::test_reproduce_without_uci_files",
    "tests/ppcsim/reproduce/test_paper_reproduction.py::test_reproduce_writes_report_and_records_seeds",
    "tests/ppcsim/reproduce/test_paper_reproduction.py::test_thesis_tables_match_the_thesis_where_the_methods_are_defined",
    "tests/ppcsim/reproduce/test_paper_reproduction.py::test_rp2_is_rarely_orthogonal",
    "tests/ppcsim/evaluate/test_observer.py::test_paper_metrics_are_reported",
    "tests/ppcsim/run/test_sweep.py::test_a_sweep_over_methods_draws_them_in_one_figure",
    "tests/coordinator/test_mixed_consortia_and_nmds.py::test_nmds_reports_stress_1_of_its_final_configuration",
    "tests/ppcsim/report/test_page_details.py::test_two_zero_bars_of_one_column_get_one_zero",
})


class UnmarkedProcess(AssertionError):
    """An unmarked test started a process or a server."""


#: Commands a library runs for itself on the way (loky's count of physical cores, asked for by scikit-learn's
#: k-means once per process): not a process the test starts.
ALLOWED = {"lscpu"}


def _command(args: tuple, kwargs: dict) -> str:
    argv = kwargs.get("args", args[1] if len(args) > 1 else None)
    first = argv if isinstance(argv, str) else (argv[0] if argv else "")
    return os.path.basename(str(first)).split()[0] if first else ""


def _refuse(item: pytest.Item, what: str):
    record = os.environ.get("PPC_TIERS_RECORD")

    def refuse(*args, **kwargs):
        if what == "a subprocess" and _command(args, kwargs) in ALLOWED:
            return original[what](*args, **kwargs)
        if record:
            with open(record, "a", encoding="utf-8") as out:
                out.write(f"{item.nodeid}\t{what}\n")
        raise UnmarkedProcess(f"{item.nodeid} starts {what}: mark it @pytest.mark.{MARK} (or add it to "
                              f"PROCESS_TESTS or its file to PROCESS_FILES in tests/tiers.py) so that the unit tier "
                              f"(-m 'not {MARK}') leaves it out")

    return refuse


original = {
    "a subprocess": subprocess.Popen.__init__,
    "a multiprocessing process": multiprocessing.process.BaseProcess.start,
    "a gRPC server": grpc.server,
    "a gRPC asyncio server": grpc.aio.server,
}


@contextlib.contextmanager
def guarded(item: pytest.Item):
    """While an unmarked test's phase runs, every way to start a process or a server refuses."""
    if item.get_closest_marker(MARK) is not None:
        yield
        return
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(subprocess.Popen, "__init__", _refuse(item, "a subprocess"))
        mp.setattr(multiprocessing.process.BaseProcess, "start", _refuse(item, "a multiprocessing process"))
        mp.setattr(grpc, "server", _refuse(item, "a gRPC server"))
        mp.setattr(grpc.aio, "server", _refuse(item, "a gRPC asyncio server"))
        yield
    finally:
        mp.undo()


#: Session fixtures that cost a run or a site build: with -n, the tests that use one run on one worker.
SHARED = ("demo_run", "docs_site")


# tryfirst: pytest-xdist's own hook, which makes a test's xdist_group part of its node id (what --dist loadgroup
# sends to one worker), must see the marks added here (run after it, they grouped nothing). Under pytest 9.2 that
# hook groups nothing anyway, so the shared fixtures also make their run once across workers
# (conftest.once_per_run).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        for fixture in SHARED:
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.xdist_group(fixture))
        path, _, name = item.nodeid.partition("::")
        function = f"{path}::{name.partition('[')[0]}"
        if path in PROCESS_FILES or function in PROCESS_TESTS:
            item.add_marker(MARK)
        if function in SLOW_TESTS:
            item.add_marker("slow")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with guarded(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with guarded(item):
        return (yield)
