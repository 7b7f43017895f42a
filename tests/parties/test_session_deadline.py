"""A party counts down its session's real time, as the coordinator gives it at Join (JoinReply.seconds_left), when
that ends before the party's own timer: its progress lines and its timeout then tell the truth."""

from __future__ import annotations

import io
import time
from types import SimpleNamespace

from parties.config import PartyConfig
from parties.run import GRACE, Steps
from parties.serde import Joined


class Client:
    address, session = "127.0.0.1:1", "s"

    def __init__(self, seconds_left: float):
        self.seconds_left = seconds_left

    def join(self, timeout, public_key, signature) -> Joined:
        return Joined(chunk_bytes=0, seconds_left=self.seconds_left, ids="plain", parties=["a", "b"],
                      protocol="upload")

    def close(self) -> None:
        pass


def steps(seconds_left: float, timeout: float = 600.0) -> Steps:
    cfg = PartyConfig(name="a", source="sklearn:wine", columns=("ash",), method="none")
    pair = SimpleNamespace(public=b"k" * 32)
    return Steps(cfg, Client(seconds_left), pair, b"", None, False, time.monotonic() + timeout, io.StringIO(), 0.0)


def test_a_session_that_ends_before_the_partys_timer_sets_its_time_left():
    s = steps(15.0)
    try:
        s.join(None, False)
        assert 15.0 < s.left() <= 15.0 + GRACE
        assert s.session_deadline == 15.0
    finally:
        s.close()


def test_a_session_with_more_time_than_the_party_allows_leaves_the_partys_own_timer():
    s = steps(3600.0, timeout=60.0)
    try:
        s.join(None, False)
        assert 55.0 < s.left() <= 60.0 and s.session_deadline == 0.0
    finally:
        s.close()
