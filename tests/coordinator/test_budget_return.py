"""What a session's memory budget holds once its rounds are over is what the coordinator still stores."""

from __future__ import annotations

import importlib
from pathlib import Path

from coordinator.ledger import ENTRY_BYTES
from coordinator.session import DONE
from ppcsim.scenario.load import load_scenario

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "sweep-secure-rows.toml"


def test_a_secure_session_that_keeps_uploads_holds_one_post_per_party_in_its_budget(tmp_path):
    """Each party's post of a round replaces its post of the round before (the observer reads the last round's):
    the replaced post's bytes go back to the budget, and a seeding step's post, never kept, once added. Before,
    every round's post stayed counted: 12.0 MB held for 1.0 MB stored in this scenario's 14 rounds."""
    simulate_secure = importlib.import_module("ppcsim.run.inprocess").simulate_secure
    with open(tmp_path / "log", "w") as log:
        session, _, _ = simulate_secure(load_scenario(SCENARIO), log=log)
    assert session.state == DONE and session.spec.keep_uploads
    arbiter = session.arbiter
    assert len(arbiter.records) > 2 and arbiter.seeding_steps > 0  # several rounds, and k-means++ seeding
    posts = sum(values.nbytes for values in arbiter.posts.values())
    ids = sum(upload.held + upload.ids_held for upload in session.uploads.values())
    ledger = len(session.ledger.entries()) * ENTRY_BYTES
    assert posts == len(session.spec.parties) * arbiter.m * arbiter.k * 8
    assert session.budget.used == posts + ids + ledger
    assert session.budget.peak <= 2 * posts + ids + ledger  # at most one round's posts beside the last
