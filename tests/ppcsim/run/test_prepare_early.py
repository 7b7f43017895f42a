"""When ``ppc run`` imports the evaluation's modules (ppcsim.run.observers: ``Observer.prepare_early``): beside the
parties for a session that computes in the coordinator, only once the session is over for one whose messages
wait on each other through the relay (an MPC), where an import holding the coordinator's interpreter lock
delays every message it relays."""

from __future__ import annotations

from types import SimpleNamespace

from ppcsim.run.observers import observer
from protos.vocabulary import MPC, SECURE, UPLOAD


def _scenario(labels_only: bool = False):
    return SimpleNamespace(clustering=SimpleNamespace(labels_only=labels_only))


def test_an_mpc_and_the_labels_only_argmin_import_after_their_rounds_the_others_beside_them():
    assert observer(MPC).prepare_early(_scenario()) is False
    assert observer(SECURE).prepare_early(_scenario(labels_only=True)) is False
    assert observer(SECURE).prepare_early(_scenario(labels_only=False)) is True
    assert observer(UPLOAD).prepare_early(_scenario()) is True
    assert observer("a-protocol-of-a-plug-in").prepare_early(_scenario()) is True
