"""Every ledger line adds up: wire >= serialized >= payload, on the console and in the report, for every scenario in
scenarios/ and every protocol and mode (upload, secure aggregation with either reveal, MPC over three parties and
over two with the coordinator's helper, SPU where its environment exists, a coordinator run by hand with status
polls).

Each scenario runs at a small size (``rows`` cut to a few hundred, a sweep's first point, a few rounds), without
measurement (``--no-eval``): the bytes are the subject, and their layers do not depend on the size.
"""

import re

import pytest

from conftest import ROOT, by_hand, kmeans, party_table, read_report, run_ppc, scenario_toml, write_scenario
from parties import spu_env
from ppcsim.report.ledger import layer_problems
from ppcsim.report.model import as_report
from ppcsim.run.sweep import plan

pytestmark = pytest.mark.processes

SCENARIOS = sorted(ROOT.joinpath("scenarios").glob("*.toml"))
#: Scenarios whose ledger is checked on a run another test makes anyway: the demo's (the session's ``ppc demo``,
#: the same file) below, and tests/ppcsim/run/test_mpc_runs.py's run of wine-mpc.toml as it is bundled. The MPC
#: over three parties, and over two with the coordinator's helper, are checked there too, on its runs.
CHECKED_ELSEWHERE = {"wine-mpc"}
NUMBER = r"[\d,]+"


def _int(text: str) -> int:
    return int(text.replace(",", ""))


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


def console_problems(printed: str) -> list[str]:
    """The console's ledger lines that break wire >= serialized >= payload: each row of the party table (payload,
    serialized, wire), the ``messages:`` totals against the ``wire`` line, and the lines printed apart (helper,
    status polls)."""
    lines = printed.splitlines()
    problems = []
    head = next(i for i, line in enumerate(lines) if line.startswith("party ") and "serialized B" in line)
    for row in lines[head + 2:]:
        cells = row.split()
        if len(cells) < 4 or not re.fullmatch(NUMBER + "|-", cells[-1]) or not re.fullmatch(NUMBER, cells[-2]):
            break
        payload, serialized = _int(cells[-3]), _int(cells[-2])
        wire = None if cells[-1] == "-" else _int(cells[-1])
        if payload > serialized or (wire is not None and serialized > wire):
            problems.append(row)
    totals = re.compile(rf"up \d+, ({NUMBER}) B serialized \(({NUMBER}) B payload\); down \d+, ({NUMBER}) B serialized")
    (messages,) = [line for line in lines if line.startswith("messages: ")]
    up, up_payload, down = map(_int, totals.search(messages).groups())
    if up_payload > up:
        problems.append(messages)
    wire = [line for line in lines if line.startswith("wire (TLS")]
    if wire:
        wire_up, wire_down = map(_int, re.findall(rf"({NUMBER}) B", wire[0]))
        if up > wire_up or down > wire_down:
            problems.append(f"{messages} / {wire[0]}")
    for line in lines:
        if line.startswith(("helper (", "status polls (")):
            serialized, payload, _ = map(_int, totals.search(line).groups())
            if payload > serialized:
                problems.append(line)
    return problems


def check(out, printed: str) -> dict:
    report = read_report(out)
    assert report["state"] == "done", report["error"]
    assert layer_problems(as_report(report)) == []
    assert console_problems(printed) == []
    comm = report["communication"]
    parties = [p["name"] for p in report["parties"]]
    assert sorted(comm["by_party"]) == sorted(parties)  # the totals are the parties' traffic alone
    for direction in ("up", "down"):
        assert comm["totals"][direction]["serialized"] == sum(comm["by_party"][p][direction]["serialized"]
                                                              for p in parties)
    return report


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
