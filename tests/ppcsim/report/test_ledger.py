"""The ledger's totals split by caller (ppcsim.report.ledger): the parties' protocol traffic in the totals, the
helper's and status polls' apart, and every line checked for wire >= serialized >= payload."""

from __future__ import annotations

import copy

import pytest

import ppcsim
from coordinator.ledger import DOWN, UP, Ledger
from ppcsim.report.ledger import apart_lines, layer_problems, split
from ppcsim.report.model import Report

PARTIES = ["a", "b"]


def ledger() -> Ledger:
    """Two parties' messages, the helper's stream and two status polls, as the coordinator records them."""
    book = Ledger()
    book.record("a", "Join", UP, 120)
    book.record("a", "Upload", UP, 1_100, payload=1_000)
    book.record("b", "Upload", UP, 2_150, payload=2_000)
    book.record("a", "Relay", DOWN, 530, payload=500)  # a frame of the helper's, as a receives it
    book.record("helper", "Relay", UP, 520, payload=500)
    book.record("helper", "Relay", DOWN, 260, payload=250)
    book.record("", "GetStatus", UP, 20)
    book.record("", "GetStatus", DOWN, 380)
    return book


def test_the_totals_are_the_parties_alone_and_the_helper_and_polls_are_apart():
    total, by_party, helper, status = split(ledger().totals(), PARTIES)
    assert sorted(by_party) == PARTIES
    assert (total.up.messages, total.up.serialized, total.up.payload) == (3, 120 + 1_100 + 2_150, 3_000)
    assert (total.down.messages, total.down.serialized, total.down.payload) == (1, 530, 500)
    assert (helper.up.serialized, helper.up.payload, helper.down.serialized) == (520, 500, 260)
    assert (status.up.messages, status.up.serialized, status.down.serialized, status.up.payload) == (1, 20, 380, 0)


def test_a_session_without_helper_or_polls_has_neither():
    book = Ledger()
    book.record("a", "Join", UP, 120)
    _, by_party, helper, status = split(book.totals(), PARTIES)
    assert list(by_party) == ["a"] and helper is None and status is None


def _report(data: dict) -> Report:
    return Report.from_json(data, "report")


@pytest.fixture(scope="module")
def wine_like_report() -> dict:
    """A real (in-process) run's report, with wire bytes set as a relay would count them: a little above each
    party's serialized bytes."""
    data = ppcsim.simulate({"name": "iris", "seed": 1, "data": {"source": "sklearn:iris"},
                            "parties": [{"name": "a", "columns": ["sepal length (cm)"], "method": "none"},
                                        {"name": "b", "columns": ["petal length (cm)"], "method": "none"}],
                            "clustering": {"algorithm": "kmeans", "n_clusters": 3}}, attacks=False).report
    for p in data["parties"]:
        row = data["communication"]["by_party"][p["name"]]
        p["bytes"]["wire"] = row["up"]["serialized"] + 300
        p["bytes"]["wire_down"] = row["down"]["serialized"] + 300
    return data


def test_layer_problems_names_each_line_that_does_not_add_up(wine_like_report):
    good = wine_like_report
    assert layer_problems(_report(good)) == []
    bad = copy.deepcopy(good)
    name = bad["parties"][0]["name"]
    bad["parties"][0]["bytes"]["wire"] = bad["parties"][0]["bytes"]["serialized"] - 1
    bad["communication"]["helper"] = {"up": {"messages": 1, "payload": 9, "serialized": 8},
                                      "down": {"messages": 0, "payload": 0, "serialized": 0}}
    problems = layer_problems(_report(bad))
    assert any(p.startswith(f"party {name}: serialized") for p in problems)
    assert "helper up: payload 9 B > serialized 8 B" in problems
    # the helper's line is printed apart, saying why it is outside the totals
    (line,) = apart_lines(_report(bad))
    assert line.startswith("helper (") and "no wire bytes" in line and "up 1, 8 B serialized (9 B payload)" in line
