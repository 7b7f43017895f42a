"""Every ledger line adds up: wire >= serialized >= payload, on the console and in the report, for every scenario in
scenarios/ and every protocol and mode (upload, secure aggregation with either reveal, MPC over three parties and
over two with the coordinator's helper, SPU where its environment exists, a coordinator run by hand with status
polls).

Each scenario runs at a small size (``rows`` cut to a few hundred, a sweep's first point, a few rounds), without
measurement (``--no-eval``): the bytes are the subject, and their layers do not depend on the size.
"""

import re

import pytest
from ledger_lines import check

from conftest import ROOT, by_hand, kmeans, party_table, read_report, run_ppc, scenario_toml, write_scenario
from parties import spu_env
from ppcsim.report.ledger import layer_problems
from ppcsim.report.model import as_report
from ppcsim.run.sweep import plan

pytestmark = pytest.mark.processes

SCENARIOS = sorted(ROOT.joinpath("scenarios").glob("*.toml"))
#: Scenarios whose ledger is checked on a run another test makes anyway: the demo's (the session's ``ppc demo``,
#: the same file) below, tests/ppcsim/run/test_mpc_runs.py's run of wine-mpc.toml and
#: tests/ppcsim/scenario/test_bundled_scenarios.py's of clinic-insurer.toml, each as bundled. The MPC over three
#: parties, and over two with the coordinator's helper, are checked in test_mpc_runs.py too, on its runs.
CHECKED_ELSEWHERE = {"wine-mpc", "clinic-insurer"}
def small(path, tmp_path, **replace: str):
    """Scenario ``path`` at a small size, in ``tmp_path``: a sweep's first point, at most 240 records of generated
    data, at most 2 rounds; ``replace``: further ``key = value`` lines to set (``value`` as TOML)."""
    if "[sweep]" in path.read_text():
        path = plan(path, tmp_path / "points")[0].path
    text = path.read_text()
    text = re.sub(r"(?m)^rows = \d+", "rows = 240", text)
    text = re.sub(r"(?m)^max_iter = \d+", "max_iter = 2", text)
    for key, value in replace.items():
        text, n = re.subn(rf"(?m)^{key} = .*$", f"{key} = {value}", text)
        if not n:
            text = text.replace("[clustering]\n", f"[clustering]\n{key} = {value}\n", 1)
    if "data/" in text:  # relative data paths: keep them pointing at the bundled files
        text = text.replace('"data/', f'"{path.parent / "data"}/')
    out = tmp_path / f"{path.stem}-small.toml"
    out.write_text(text)
    return out


def run(scenario, tmp_path, *options):
    out = tmp_path / "out"
    proc = run_ppc("run", scenario, "--out", out, "--no-eval", *options, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out, proc.stdout + proc.stderr


def test_the_demos_ledger_lines_add_up(demo_run):
    """scenarios/demo.toml is what ``ppc demo`` runs: its lines checked on the session's demo run."""
    out, proc = demo_run
    assert proc.returncode == 0, proc.stderr
    check(out, proc.stdout + proc.stderr)


@pytest.mark.parametrize("path", [p for p in SCENARIOS if p.stem not in CHECKED_ELSEWHERE | {"demo"}],
                         ids=lambda p: p.stem)
def test_every_scenarios_ledger_lines_add_up(path, tmp_path):
    text = path.read_text()
    if 'engine = "spu"' in text and spu_env.problem() is not None:
        pytest.skip(f"SPU cannot run here: {spu_env.problem()}")
    check(*run(small(path, tmp_path), tmp_path))


def test_secure_aggregation_opening_the_labels_only_adds_up(tmp_path):
    """The comparison's two parties, opening the labels only: an MPC argmin with the coordinator's helper."""
    scenario = small(ROOT / "scenarios" / "comparison.toml", tmp_path, reveal='"labels"', init='"random"',
                     helper="true")
    report = check(*run(scenario, tmp_path))
    assert report["secure_aggregation"]["reveal"] == "labels" and report["communication"]["helper"]["up"]["messages"]


def test_status_polls_of_a_coordinator_run_by_hand_are_counted_apart(tmp_path):
    """By hand, each party's progress line asks GetStatus: anonymous polls, outside the protocol's totals."""
    path = write_scenario(tmp_path, scenario_toml("polls", [party_table("lab", ("alcohol", "ash"), "drbt", k=1),
                                                            party_table("shop", ("hue", "proline"), "none")],
                                                  seed=3, clustering=kmeans(3)))
    # each party's progress line asks GetStatus once a wait has lasted 0.1 s (the parties' default: 5 s)
    by_hand(path, tmp_path, ["lab", "shop"], party_options=("--progress", "0.1"))
    report = read_report(tmp_path / "out")
    assert layer_problems(as_report(report)) == []
    comm = report["communication"]
    polls = [e for e in comm["ledger"] if e["party"] == ""]
    assert polls and {e["rpc"] for e in polls} == {"GetStatus"}
    assert comm["status"]["up"]["messages"] + comm["status"]["down"]["messages"] == len(polls)
    assert "" not in comm["by_party"]
    up = [e for e in comm["ledger"] if e["direction"] == "up" and e["party"]]
    assert comm["totals"]["up"]["messages"] == len(up)
