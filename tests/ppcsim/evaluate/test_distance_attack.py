"""000 §4.4's distance-based attack on every disguise that sends rows, with n + 1 + j known records."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist, pdist

from conftest import WINE, WINE_LABELLED, party_table, scenario_toml, write_scenario
from ppcsim.evaluate.attacks import multilateration, multilateration_to
from ppcsim.run.inprocess import simulate
from ppcsim.run.observer import Settings, evaluate
from ppcsim.run.sweep import apply_point, sweep
from ppcsim.scenario.load import ScenarioError, load_scenario


def _evaluate(tmp_path, parties, attacks: dict | None = None):
    path = write_scenario(tmp_path, scenario_toml("dist", parties, seed=4, data=WINE_LABELLED,
                                                   clustering={"n_clusters": 3},
                                                   tables={"attacks": attacks} if attacks else None))
    scenario = load_scenario(path)
    session, own = simulate(scenario)
    return scenario, evaluate(scenario, session.wait(0), session.contributions, Settings(known_draws=10), own=own)


def test_multilateration_to_the_references_equals_the_full_matrix():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    refs = np.array([3, 7, 11, 19, 25])
    noisy = pdist(X) * (1 + 0.05 * rng.normal(size=435))
    from scipy.spatial.distance import squareform
    D = squareform(np.abs(noisy))
    assert np.array_equal(multilateration(D, refs, X[refs]), multilateration_to(D[:, refs], refs, X[refs]))
    with pytest.raises(ValueError, match="one column per reference"):
        multilateration_to(cdist(X, X[refs[:4]]), refs, X[refs])


def test_every_row_disguise_is_attacked_and_a_rotation_is_recovered(tmp_path):
    scenario, report = _evaluate(tmp_path, [party_table("a", WINE[:7], "drbt", k=3),
                                            party_table("b", WINE[7:], "rotation")])
    a, b = (report["privacy"][p]["attacks"]["multilateration"] for p in ("a", "b"))
    # a rotation keeps every distance: n + 1 records locate every other one exactly (000 §4.4)
    assert b["object_privacy_mean"] < 1e-9 and b["mean"] < 1e-9
    assert b["knowledge"].startswith("7 records' original values (n + 1) and the distances between the rows")
    # 3 of 7 dims: the distances are only approximate and the records are far off
    assert a["object_privacy_mean"] > 0.2 and a["mean"] > 0.05
    assert a["knowledge"].startswith("8 records'")


def test_more_known_records_are_a_setting_and_a_sweep_key(tmp_path):
    parties = [party_table("a", WINE[:7], "noise", sigma=0.3), party_table("b", WINE[7:], "geometric")]
    _, zero = _evaluate(tmp_path, parties)
    scenario, more = _evaluate(tmp_path, parties, {"known_extra": 20})
    assert scenario.attacks.known_extra == 20
    a0, a20 = (r["privacy"]["a"]["attacks"]["multilateration"] for r in (zero, more))
    assert a20["knowledge"].startswith("28 records' original values (n + 1 + 20)")
    # 000 Fig. 4.13: more known points, less privacy against noisy distances
    assert a20["object_privacy_mean"] < a0["object_privacy_mean"]
    raw = {"parties": parties, "sweep": {"known_extra": [0, 5]}}
    assert apply_point(raw, {"known_extra": 5})["attacks"] == {"known_extra": 5}
    assert apply_point(raw, {"known_sample": 0.5})["attacks"] == {"known_sample": 0.5}


def test_the_attacks_table_is_checked(tmp_path):
    path = write_scenario(tmp_path, scenario_toml("bad", [party_table("a", WINE[:3], "rotation")],
                                                   tables={"attacks": {"known_extra": -1, "known_sample": 0,
                                                                       "known": 3}}))
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    text = str(err.value)
    assert "[attacks]: 'known_extra' must be a non-negative integer, got -1" in text
    assert "[attacks]: 'known_sample' must be a share of the records in (0, 1], got 0" in text
    assert "[attacks]: unknown field 'known'" in text


def test_the_sweep_tabulates_object_privacy_for_every_method(tmp_path):
    path = write_scenario(tmp_path, scenario_toml("sw", [party_table("a", WINE[:7], "pca", k=3),
                                                         party_table("b", WINE[7:], "rotation")],
                                                  seed=1, data=WINE_LABELLED, clustering={"n_clusters": 3},
                                                  sweep={"known_extra": [0, 4]}))
    rows = sweep(path, tmp_path / "out", settings=Settings(known_draws=2), in_process=True)
    assert [r["param_known_extra"] for r in rows] == [0, 4]
    for r in rows:
        assert r["object_privacy_mean"] == r["multilateration_object_privacy_mean"]
        assert 0.1 < r["object_privacy_mean"] < 1  # the mean of pca's (far off) and the rotation's (about 0)
    assert "object_privacy_mean" in (tmp_path / "out" / "sweep.csv").read_text().splitlines()[0].split(",")
