"""The typed report (ppcsim.report.model): built once, written as report.json, read back, and described by the
JSON Schema published in docs/report.schema.json.

Every report here comes from a real (in-process) run of the iris data; the schema is checked with an independent
validator (jsonschema), not with the code that generated it.
"""

from __future__ import annotations

import copy
import json
import re

import jsonschema
import pytest

import ppcsim
from conftest import ROOT
from coordinator.summary import summarise
from ppcsim.api import load
from ppcsim.report.model import (
    ABSENT,
    AttackScore,
    PartyPrivacy,
    Report,
    ReportError,
    SecurePrivacy,
    Skipped,
    schema,
    schema_text,
)
from ppcsim.report.model import (
    load as read,
)
from ppcsim.report.outputs import build, summary_table, write_outputs
from ppcsim.report.schema import main as schema_main
from ppcsim.run.inprocess import simulate as simulate_session

DOCS_SCHEMA = ROOT / "docs" / "report.schema.json"

IRIS = {
    "name": "iris-two", "seed": 5,
    "data": {"source": "sklearn:iris"},
    "parties": [{"name": "a", "columns": ["sepal length (cm)", "sepal width (cm)"], "method": "drbt", "k": 1},
                {"name": "b", "columns": ["petal length (cm)", "petal width (cm)"], "method": "osbr"}],
    "clustering": {"algorithm": "agglomerative", "linkage": "average", "n_clusters": 3},
}
SECURE = {
    "name": "iris-secure", "seed": 5,
    "data": {"source": "sklearn:iris"},
    "parties": [{"name": "a", "columns": ["sepal length (cm)", "sepal width (cm)"]},
                {"name": "b", "columns": ["petal length (cm)", "petal width (cm)"]}],
    "clustering": {"algorithm": "kmeans", "n_clusters": 3, "protocol": "secure_aggregation", "reveal": "distances"},
}


def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(DOCS_SCHEMA.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def features_and_osbr():
    """A drbt party beside an osbr one, every attack measured (multilateration included)."""
    return ppcsim.simulate(IRIS, known_fraction=0.2)


@pytest.fixture(scope="module")
def secure():
    return ppcsim.simulate(SECURE)


def test_the_published_schema_is_what_the_types_give():
    """docs/report.schema.json cannot go stale: it is the generated text, byte for byte."""
    assert DOCS_SCHEMA.read_text(encoding="utf-8") == schema_text()
    jsonschema.Draft202012Validator.check_schema(schema())
    assert schema_main([str(DOCS_SCHEMA), "--check"]) == 0


def test_the_schema_command_writes_and_checks(tmp_path, capsys):
    target = tmp_path / "report.schema.json"
    assert schema_main([str(target), "--check"]) == 1
    assert schema_main([str(target)]) == 0 and target.read_text(encoding="utf-8") == schema_text()
    target.write_text(schema_text().replace("Every party", "Each party"), encoding="utf-8")
    assert schema_main([str(target), "--check"]) == 1
    assert "out of date" in capsys.readouterr().err


@pytest.mark.parametrize("which", ["features_and_osbr", "secure"])
def test_a_run_report_validates_and_round_trips(which, request):
    run = request.getfixturevalue(which)
    data = run.report
    assert list(validator().iter_errors(data)) == []
    typed = Report.from_json(data)
    assert typed.to_json() == data
    # same keys in the same order: the text written is the text read
    assert json.dumps(typed.to_json()) == json.dumps(data)
    assert Report.from_json(typed.to_json()) == typed
    assert run.typed == typed


def test_the_typed_sections_hold_the_run(features_and_osbr):
    typed = features_and_osbr.typed
    a, b = typed.parties
    assert (a.name, a.method, a.sends, a.output_dims, a.arrays) == ("a", "drbt", "features", 1, {"data": [150, 1]})
    assert (b.name, b.sends, b.output_dims) == ("b", "dissimilarities", 150 * 149 // 2)
    assert b.bytes.payload == b.bytes.predicted == 150 * 149 // 2 * 8
    assert a.bytes.wire is ABSENT and a.network is ABSENT  # in process: no relay counted a wire
    assert typed.join.rows_joined == 150 and typed.clustering.algorithm == "agglomerative"
    assert sum(typed.clustering.sizes or []) == 150
    assert typed.observer is not ABSENT and typed.observer.seed == 5
    assert isinstance(typed.privacy, dict)
    assert isinstance(typed.privacy["a"], PartyPrivacy) and isinstance(typed.privacy["b"], PartyPrivacy)
    known = typed.privacy["a"].attacks["known_io"]
    assert isinstance(known, AttackScore) and set(known.columns) == {"sepal length (cm)", "sepal width (cm)"}
    # averaged over the draws of the known records: the mean of the columns is the mean (linear), min below it
    assert known.mean == pytest.approx(sum(known.columns.values()) / 2) and known.min <= known.mean
    assert isinstance(typed.privacy["b"].attacks["multilateration"], AttackScore)
    assert typed.utility is not ABSENT and typed.utility.vs_original["ari"] == features_and_osbr.report[
        "utility"]["vs_original"]["ari"]
    # the mapping view reads it as report.json holds it
    assert typed["parties"] == features_and_osbr.report["parties"] and "cluster" not in typed
    assert dict(typed) == features_and_osbr.report and list(typed) == list(features_and_osbr.report)
    assert typed.party("b") is b
    with pytest.raises(KeyError, match="parties: a, b"):
        typed.party("c")


def test_a_secure_aggregation_report_is_typed(secure):
    typed = secure.typed
    assert typed.secure_aggregation is not ABSENT and typed.secure_aggregation.rounds >= 1
    assert all(p.method == "secure_aggregation" and p.output_dims == 3 for p in typed.parties)
    assert isinstance(typed.privacy, SecurePrivacy)
    assert typed.utility is not ABSENT and typed.utility.labels_equal_same_init is True


def test_no_attacks_skips_privacy():
    run = ppcsim.simulate(IRIS, attacks=False)
    assert isinstance(run.typed.privacy, Skipped) and run.typed.privacy.skipped == "--no-attacks"
    assert list(validator().iter_errors(run.report)) == []


def test_a_by_hand_coordinator_report_and_a_cluster_section(tmp_path):
    """What ``ppc coordinator`` writes (no observer, what it cannot measure) and ``ppc run --scheduler``'s
    placement: built by the one builder, valid, written as report.json and read back."""
    scenario = load(IRIS)
    session, _ = simulate_session(scenario)
    by_hand = build(scenario, summarise(session), by_hand=True)
    data = by_hand.to_json()
    assert "observer" not in data and "utility" not in data and set(data["not_measured"]) == {
        "utility", "privacy", "observer"}
    assert list(data["timing"]) == ["coordinator"]
    assert list(validator().iter_errors(data)) == []
    write_outputs(tmp_path, by_hand, session.outcome, session.contributions, sent=False)
    assert read(tmp_path / "report.json") == by_hand
    assert "not measured by the coordinator: utility, privacy, observer" in summary_table(by_hand)
    placed = build(scenario, summarise(session), observer=True, cluster=("local:2", {"a": "tcp://w1", "b": "tcp://w2"}))
    assert placed.to_json()["cluster"] == {"scheduler": "local:2", "placed": {"a": "tcp://w1", "b": "tcp://w2"}}
    assert list(validator().iter_errors(placed.to_json())) == []


def test_the_summary_is_the_same_from_the_typed_report_and_its_json(features_and_osbr):
    text = summary_table(features_and_osbr.typed)
    assert text == summary_table(features_and_osbr.report)
    assert "privacy of a (column privacy, 0 = recovered): known_io min" in text


def _all(errors) -> list:
    """Schema errors and, below an anyOf that failed, each alternative's."""
    return [x for e in errors for x in [e, *_all(e.context or [])]]


def _broken(report: dict, where: list, value=None, delete: bool = False) -> dict:
    bad = copy.deepcopy(report)
    target = bad
    for key in where[:-1]:
        target = target[key]
    if delete:
        del target[where[-1]]
    else:
        target[where[-1]] = value
    return bad


@pytest.mark.parametrize("where, value, delete, field, problem", [
    (["parties", 1, "bytes", "payload"], "many", False, "parties[1].bytes.payload", "expected an integer, got text"),
    (["join", "rows_joined"], None, True, "join.rows_joined", "missing"),
    (["seed"], 5.5, False, "seed", "expected an integer"),
    (["security", "tls"], 1, False, "security.tls", "expected a boolean"),
    (["privacy", "a", "attacks", "ica", "min"], "low", False, "privacy.a.attacks.ica.min", "expected a number"),
    (["communication", "ledger", 0, "rpc"], None, True, "communication.ledger[0].rpc", "missing"),
    (["parties", 0, "colour"], "red", False, "parties[0].colour", "not a field of Party"),
])
def test_a_wrong_report_is_refused_naming_the_field(features_and_osbr, where, value, delete, field, problem):
    bad = _broken(features_and_osbr.report, where, value, delete)
    with pytest.raises(ReportError) as caught:
        Report.from_json(bad)
    assert caught.value.field == field and problem in str(caught.value)
    # the published schema refuses it too, at the same place
    errors = list(validator().iter_errors(bad))
    assert errors
    # a wrong value at its own path; a missing or unknown key at its object's
    paths = {".".join(map(str, e.absolute_path)) for e in _all(errors)}
    assert ".".join(map(str, where if value is not None and not problem.startswith("not a field") else where[:-1])) \
        in paths


def test_new_metrics_reach_the_report_through_open_sections(features_and_osbr):
    """A metric or parameter added by a registry is kept (utility, scores), not refused."""
    data = copy.deepcopy(features_and_osbr.report)
    data["utility"]["new_metric"] = {"mean": 0.5}
    data["privacy"]["a"]["attacks"]["new_attack"] = {"columns": {"x": 0.1}, "min": 0.1, "mean": 0.1, "extra": 2}
    typed = Report.from_json(data)
    assert typed.to_json() == data
    assert list(validator().iter_errors(data)) == []


def test_load_names_the_file(tmp_path, features_and_osbr):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_broken(features_and_osbr.report, ["state"], 3)))
    with pytest.raises(ReportError, match=r"bad\.json: state: expected text, got an integer"):
        read(path)
    path.write_text("{")
    with pytest.raises(ReportError, match="not valid JSON"):
        read(path)


def test_the_summary_says_why_an_attack_was_skipped(features_and_osbr):
    """"multilateration skipped" alone left the reader guessing; the console gives the report's reason."""
    report = copy.deepcopy(features_and_osbr.report)
    report["privacy"]["b"]["attacks"]["multilateration"] = {"skipped": "needs Euclidean distances, not metric 'gower'"}
    line = next(line for line in summary_table(report).splitlines() if line.startswith("privacy of b "))
    assert line.endswith("multilateration skipped (needs Euclidean distances, not metric 'gower')"), line


def test_the_summary_says_what_a_party_timed_of_its_own_check(features_and_osbr):
    """A bare "; 0.002 s" at the end of the own-check line did not say what took it: drbt times its draws and
    their local stress (004 §5.2 steps 2-3)."""
    line = next(line for line in summary_table(features_and_osbr.report).splitlines() if line.startswith("own check a:"))
    assert re.search(r"kept draw 1 of 1 tried; drawn and measured in \d+\.\d{3} s$", line), line
