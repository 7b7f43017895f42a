"""The ledger's layers checked on a finished run (``ppc run``'s outputs and what it printed): wire >= serialized >=
payload on every line of the console and of the report, and the totals the parties' traffic alone. Shared by the
tests that run scenarios (tests/ppcsim/run/test_ledger_layers.py runs every bundled one; the MPC and bundled-scenario
tests check their own runs with it)."""

from __future__ import annotations

import re

from conftest import read_report
from ppcsim.report.ledger import layer_problems
from ppcsim.report.model import as_report

NUMBER = r"[\d,]+"


def _int(text: str) -> int:
    return int(text.replace(",", ""))


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
