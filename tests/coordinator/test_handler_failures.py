"""Every handler fails the session with a message, never a dead thread, and what a party or an outsider sends
reaches the log and the other parties escaped, the refusals' lines rate-limited (coordinator.logs)."""

from __future__ import annotations

import hashlib
import logging
import threading
import time

import grpc
import numpy as np
import pytest

from coordinator.clustering import ClusteringSpec
from coordinator.errors import FailedPrecondition, InvalidArgument
from coordinator.logs import Quota
from coordinator.messages import ConfirmPost, RelayResult
from coordinator.protocols.confirm import confirm
from coordinator.protocols.mpc import Hub
from coordinator.registry import Registry
from coordinator.server import start_server
from coordinator.session import FAILED, Session, SessionSpec
from protos.ppcsim.v1 import session_pb2, session_pb2_grpc


def test_a_confirm_refusal_reaches_the_others_and_the_log_escaped():
    session = Session(SessionSpec(name="s", parties=("a", "b"), ids="plain", deadline=30,
                                  clustering=ClusteringSpec(protocol="secure_aggregation", n_clusters=2)))
    reason = "\x1b[2J\x1b[31mall is well\x1b[0m\nparty b: ok\x07"
    with pytest.raises(FailedPrecondition):
        confirm(session, ConfirmPost(party="a", refusal=reason))
    assert session.state == FAILED
    assert session.error == ("party 'a' refused what the coordinator sent it: \\x1b[2J\\x1b[31mall is well\\x1b[0m"
                             "\\nparty b: ok\\x07")
    assert all(c.isprintable() for c in session.error)


@pytest.mark.parametrize("labels, centres", [(b"\x00" * 5, b""), (b"\x00" * 8, b"\x00" * 12)])
def test_relay_results_of_a_wrong_length_are_refused_naming_the_party(labels, centres):
    session = Session(SessionSpec(name="r", parties=("a", "b", "c"), ids="plain", deadline=30,
                                  clustering=ClusteringSpec(protocol="mpc", n_clusters=2, max_iter=1)))
    hub = Hub(session, ["a", "b", "c"])
    with pytest.raises(InvalidArgument) as err:
        hub.receive("a", RelayResult(labels=labels, centres=centres))
    assert str(err.value) == (f"party 'a': a RelayResult of {len(labels)} label bytes and {len(centres)} centre "
                              "bytes; labels are 4 bytes each (int32), centres 8 (float64)")
    hub.receive("a", RelayResult(labels=np.arange(2, dtype="<i4").tobytes(), centres=b""))
    assert hub.results["a"][0].tolist() == [0, 1]


def test_quota_logs_a_few_lines_per_kind_and_says_how_many_it_left_out():
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    logger = logging.getLogger("test.quota")
    logger.addHandler(Keep())
    logger.propagate = False
    now = [0.0]
    quota = Quota(logger, burst=3, period=10.0, clock=lambda: now[0])
    for i in range(50):
        quota.warning("outsider", "refused stream %d", i)
    quota.warning("silent", "silent stream")
    assert lines == ["refused stream 0", "refused stream 1", "refused stream 2", "silent stream"]
    now[0] = 10.0
    quota.warning("outsider", "refused stream %d", 50)
    assert lines[-1] == "refused stream 50 (and 47 more like it left out of the log)"


def test_refused_outsider_streams_write_a_few_log_lines_not_one_each():
    registry = Registry()
    digests = {p: hashlib.sha256(f"token-{p}".encode()).hexdigest() for p in ("a", "b")}
    registry.create(SessionSpec(name="t", parties=("a", "b"), tokens=digests, ids="plain"))
    server, port = start_server("127.0.0.1:0", registry)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = session_pb2_grpc.CoordinatorStub(channel)
    release = threading.Event()

    def silent():
        release.wait()
        return
        yield

    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    logger, keep = logging.getLogger("ppcsim.coordinator"), Keep(logging.WARNING)
    logger.addHandler(keep)
    try:
        calls = [stub.Upload.future(silent(), timeout=30, metadata=(("authorization", "Bearer nope"),))
                 for _ in range(60)]
        for call in calls:
            assert call.exception(timeout=10).code() == grpc.StatusCode.UNAUTHENTICATED
        time.sleep(0.2)
        refused = [line for line in lines if "before its first message" in line]
        assert 1 <= len(refused) <= 10, len(refused)
    finally:
        logger.removeHandler(keep)
        release.set()
        channel.close()
        server.stop(None).wait(10)


def test_a_party_that_finds_a_bad_tag_fails_the_session_at_once_for_everyone():
    """b posted its tags, found a bad one among those it got, and says so with a second Confirm carrying its
    refusal: a's waiting Confirm ends at once (not at the deadline) with b's reason."""
    from coordinator.errors import SessionError
    from coordinator.messages import ConfirmTag

    session = Session(SessionSpec(name="s", parties=("a", "b", "c"), ids="plain", deadline=60,
                                  clustering=ClusteringSpec(protocol="secure_aggregation", n_clusters=2)))
    tag = ConfirmTag(to="a", sender="", field="records", mac=bytes(32))
    errors: list[str] = []

    def a_waits():
        try:
            confirm(session, ConfirmPost(party="a", tags=(ConfirmTag(to="b", sender="", field="records",
                                                                     mac=bytes(32)),)))
        except SessionError as exc:
            errors.append(str(exc))

    waiting = threading.Thread(target=a_waits)
    waiting.start()
    time.sleep(0.3)
    assert waiting.is_alive()  # c has not confirmed: a waits
    start = time.monotonic()
    with pytest.raises(FailedPrecondition):
        confirm(session, ConfirmPost(party="b", tags=(tag,), refusal="the coordinator told the parties different "
                                                                     "things: 'a' was told another records"))
    waiting.join(5)
    assert not waiting.is_alive() and time.monotonic() - start < 2.0
    assert session.state == FAILED and errors and "'a' was told another records" in errors[0]


def test_a_message_over_4_mib_is_resource_exhausted():
    registry = Registry()
    registry.create(SessionSpec(name="s", parties=("a", "b"), ids="plain"))
    server, port = start_server("127.0.0.1:0", registry)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 8 << 20)])
    try:
        with pytest.raises(grpc.RpcError) as err:
            session_pb2_grpc.CoordinatorStub(channel).Join(
                session_pb2.JoinRequest(session="s", party="a", public_key=bytes(5 << 20)), timeout=10)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        channel.close()
        server.stop(None).wait(10)
