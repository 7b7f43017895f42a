"""What a party can make the coordinator's MPC helper hold is the session's budget: frames stay charged until the
helper's program has taken them in, and declared columns are bounded and charged before anything is allocated."""

from __future__ import annotations

import types

import pytest

from coordinator.clustering import ClusteringSpec
from coordinator.errors import InvalidArgument, ResourceExhausted
from coordinator.messages import Frame
from coordinator.protocols.mpc import FRAME_OVERHEAD, HELPER, HELPER_VALUE_BYTES, Hub, open_hub
from coordinator.protocols.secagg import MAX_MPC_COLUMNS, columns
from coordinator.session import FAILED, Session, SessionSpec

MiB = 1 << 20


def mpc_session(memory: int, parties=("a", "b")) -> Session:
    return Session(SessionSpec(name="h", parties=parties, ids="plain", deadline=60, memory=memory,
                               clustering=ClusteringSpec(protocol="mpc", n_clusters=2, max_iter=1, helper=True)))


def test_frames_for_the_helper_stay_charged_until_its_program_took_them_in():
    """A party floods the helper, whose stream takes every frame out at once (as the helper's thread does) but
    whose program takes none in: the flood is refused once the session's 1 MiB is held, naming the party.
    Whatever the flood's size (1 GB or this 2 MB), what the coordinator holds for it is bounded by the budget:
    the refusal comes at the same byte count."""
    session = mpc_session(1 * MiB)
    hub = Hub(session, ["a", "b", HELPER], tracked={HELPER})
    taken = []
    hub.open(HELPER, lambda frame: taken.append(frame) if frame is not None else None)
    sent = 0
    with pytest.raises(ResourceExhausted) as err:
        for seq in range(20):
            hub.receive("a", Frame(peer=HELPER, seq=seq, data=bytes(100_000)))
            hub.delivered(HELPER, taken[-1])  # out of the hub's queue, into the helper's tunnel
            sent += 1
    assert sent == MiB // (100_000 + FRAME_OVERHEAD)  # refused at the budget, not later
    assert str(err.value).startswith("party 'a': frames relayed to 'helper' that its program has not taken in "
                                     "yet: ") and "session 'h''s memory budget of 1 MiB" in str(err.value)
    held = session.budget.used
    assert held == sent * (100_000 + FRAME_OVERHEAD)
    # the program takes two frames in: their bytes come back, and two more frames fit
    hub.consumed(HELPER, "a")
    hub.consumed(HELPER, "a")
    assert session.budget.used == held - 2 * (100_000 + FRAME_OVERHEAD)
    for seq in range(sent, sent + 2):
        hub.receive("a", Frame(peer=HELPER, seq=seq, data=bytes(100_000)))
    # a party's own (untracked) stream gives the bytes back as soon as they are taken out
    hub.open("b", lambda frame: None)
    before = session.budget.used
    hub.receive("a", Frame(peer="b", seq=0, data=bytes(1000)))
    hub.delivered("b", Frame(peer="a", seq=0, data=bytes(1000)))
    assert session.budget.used == before
    hub.fail()
    assert session.budget.used == 0


class Upload(types.SimpleNamespace):
    pass


def test_declared_columns_are_bounded_and_charged_before_the_helper_allocates():
    session = mpc_session(64 * MiB)
    arbiter = types.SimpleNamespace(m=45)
    session.contributions = {"a": Upload(party="a", params={"columns": "1000000"}),
                             "b": Upload(party="b", params={"columns": "2"})}
    with pytest.raises(InvalidArgument) as err:
        open_hub(session, arbiter)
    assert str(err.value) == ("party 'a': an MPC party's ids-only upload names the number of columns it inputs as "
                              f"parameter 'columns' (an integer from 1 to {MAX_MPC_COLUMNS}), got '1000000'")
    # within the bound, but 200,000 records x 20,000 columns would take 30 GiB in the helper: refused at the budget
    arbiter.m = 200_000
    session.contributions["a"].params["columns"] = str(MAX_MPC_COLUMNS)
    session.contributions["b"].params["columns"] = str(MAX_MPC_COLUMNS)
    with pytest.raises(ResourceExhausted) as err:
        open_hub(session, arbiter)
    assert str(err.value).startswith("the coordinator's helper: the MPC's input of 200000 records x 20000 declared "
                                     "columns: 29.8 GiB more would pass session 'h''s memory budget of 64 MiB")
    assert session.budget.used == 0
    # what fits is charged until the MPC ends
    arbiter.m = 45
    open_hub(session, arbiter)
    assert session.budget.used == HELPER_VALUE_BYTES * 45 * 2 * MAX_MPC_COLUMNS
    session.fail("over")
    assert session.budget.used == 0


@pytest.mark.parametrize("value", ["²", "٣", "0", "-1", " 3", "3.0", ""])
def test_a_column_count_is_ascii_digits(value):
    with pytest.raises(InvalidArgument, match="parameter 'columns'"):
        columns(Upload(party="a", params={"columns": value}))
    assert columns(Upload(party="a", params={"columns": "12"})) == 12


def test_a_bug_while_joining_fails_the_session_with_a_message(monkeypatch):
    """The join thread never dies silently (the session would wait for its deadline): any error fails it."""
    import coordinator.protocols.secagg as secagg

    session = mpc_session(0)

    def broken(_session):
        raise ValueError("invalid literal for int() with base 10: '²'")

    monkeypatch.setattr(secagg, "begin", broken)
    session.protocol.begin()
    assert session.state == FAILED
    assert session.error == "joining the ids failed: ValueError: invalid literal for int() with base 10: '²'"
