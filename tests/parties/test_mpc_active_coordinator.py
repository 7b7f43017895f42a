"""A coordinator that lies to MPC parties, or swaps their keys, against real ``ppc party`` processes on loopback.

The coordinator is the real one with a handler replaced (the alignment, the
key relay, the confirmations' relay, the MPC relay's hub), serving three real
party processes of an MPC session (no helper). A lie about the alignment must
be refused before any share is computed: the parties' MPyC programs start
only after the confirmations (parties.mpc.confirm_mpc), so the ledger holds
no Relay message. Without mutual TLS a coordinator that relays keys of its
own reads every share of the computation, and this is shown by doing it:
every party's input is reconstructed from the shares its frames carried.
Under mutual TLS the parties refuse the swapped keys before uploading an id.
"""

from __future__ import annotations

import pickle
import struct
from collections import defaultdict

import numpy as np
import pytest

from conftest import lying_alignment, party_processes, swapped_keys, write_scenario
from coordinator import handlers
from coordinator.messages import Frame
from coordinator.protocols import mpc as relay_hub
from coordinator.registry import Registry
from coordinator.server import start_server
from parties.keys import KeyPair
from parties.mpc import Framing, PairCipher, handshake_bytes, mpc_fields
from parties.normalize import normalize
from parties.secagg import _tag
from parties.sources import load_party_data
from ppcsim.scenario.load import load_scenario

pytest.importorskip("mpyc")

PARTIES = ("a", "b", "c")
ROWS = 40
SCENARIO = f"""\
name = "mpc-lied-to"
seed = 4
deadline = 120
[data]
source = "synthetic:blobs"
rows = {ROWS}
columns = 6
clusters = 3
[[parties]]
name = "a"
columns = ["x0", "x1"]
[[parties]]
name = "b"
columns = ["x2", "x3"]
[[parties]]
name = "c"
columns = ["x4", "x5"]
[clustering]
algorithm = "kmeans"
protocol = "mpc"
n_clusters = 3
max_iter = 1
[security]
tls = false
tokens = false
"""
#: Seconds a party process may take, its MPC included.
PARTY_SECONDS = 240


def serve(tmp_path, monkeypatch, patches: dict[tuple[object, str], object], mutual: bool = False):
    """Serve the scenario with every ``(module or class, name)`` of ``patches`` replaced; run the three parties as
    ``ppc party``. ``mutual``: over mutual TLS with tokens. Returns each party's (exit code, standard error), the
    session and the scenario's path."""
    from coordinator.security import ServerSecurity, load_server_security, load_token_digests
    from ppcsim.run.credentials import make_credentials

    path = write_scenario(tmp_path, SCENARIO.replace("tls = false\ntokens = false", "mutual = true") if mutual
                          else SCENARIO)
    for (owner, name), replacement in patches.items():
        monkeypatch.setattr(owner, name, replacement)
    security, tokens, extra = ServerSecurity(), None, []
    if mutual:
        creds = make_credentials(tmp_path / "creds", "mpc-lied-to", list(PARTIES))
        security, tokens = load_server_security(creds, tls=True, mutual=True), load_token_digests(creds, "mpc-lied-to")
        extra = ["--credentials", str(creds / "parties" / "{name}")]
    registry = Registry()
    session = registry.create(load_scenario(path).session_spec(tokens))
    server, port = start_server("127.0.0.1:0", registry, security=security)
    try:
        out = party_processes(port, path, PARTIES, 7, extra, timeout=PARTY_SECONDS)
    finally:
        server.stop(0)
        session.fail("test over")
    return out, session, path


def rpcs(session) -> set[str]:
    return {e.rpc for e in session.ledger.entries()}


# -- an alignment told differently to one party ---------------------------------------------------------------

def swapped_records(header, positions):
    positions[[0, 1]] = positions[[1, 0]]  # unique, in range, as many: only the other parties can tell
    return positions


def other_centre(header, positions):
    # another joined record as the first initial centre (a valid one): the programs would start apart. (Another
    # fixed-point type, which the parties also confirm, is refused from the party's own file first:
    # tests/parties/test_party_terms.py.)
    header.init[0] = next(j for j in range(header.n_joined) if j not in header.init)
    return positions


def other_columns(header, positions):
    header.mpc_columns[0] = 1  # b would expect one column of a where a inputs two
    return positions


@pytest.mark.parametrize("lie, field", [(swapped_records, "records"), (other_centre, "init"),
                                         (other_columns, "mpc_columns")], ids=lambda v: getattr(v, "__name__", ""))
def test_mpc_parties_refuse_an_alignment_told_differently_before_any_share(tmp_path, monkeypatch, lie, field):
    out, session, _ = serve(tmp_path, monkeypatch, {(handlers, "alignment"): lying_alignment("b", lie)})
    for name, (code, err) in out.items():
        assert code != 0, f"party {name} went on:\n{err}"
        assert "Traceback" not in err, err
    assert f"'a' was told another {field}" in out["b"][1] and f"'c' was told another {field}" in out["b"][1]
    for name in ("a", "c"):
        assert f"'b' was told another {field}" in out[name][1], out[name][1]
    assert "Confirm" in rpcs(session) and "Relay" not in rpcs(session)  # no MPC program started: no share exists


# -- keys swapped by the coordinator: the shares read -------------------------------------------------------------

def key_swap(monkeypatch_free: dict, plain: dict) -> dict:
    """Handlers of a coordinator in the middle: every party gets the coordinator's own key for every other party
    (GetPeers; the leader's pseudonym key opened and sealed again on the way); the confirmations addressed to each party are forged under the keys it shares with the coordinator
    (Confirm); every MPC frame is opened with those keys, kept in ``plain[(sender, receiver)]`` and sealed again
    to its receiver (the relay's hub). Returns the patches; ``monkeypatch_free`` gets what each party was told."""
    fake = {p: KeyPair.generate() for p in PARTIES}
    real_alignment, real_confirm = handlers.alignment, handlers.confirm
    real_receive = relay_hub.Hub.receive
    ciphers: dict = {}

    peers, post_sealed = swapped_keys(fake)

    def alignment(session, request):
        messages = list(real_alignment(session, request))
        monkeypatch_free[request.party] = (messages[0].header, np.frombuffer(
            b"".join(m.positions.data for m in messages[1:]), "<i4"))
        return iter(messages)

    def confirm(session, request):
        reply = real_confirm(session, request)
        me = request.party
        header, positions = monkeypatch_free[me]
        fields = mpc_fields(header, positions, session.contributions[me].ids)
        order = list(header.parties)
        for tag in reply.tags:
            first, second = sorted((me, tag.sender), key=order.index)
            key = fake[tag.sender].pair_secret(session.keys[me].public_key, "confirm", session.spec.name, first,
                                               second)
            tag.mac = _tag(key, tag.sender, me, tag.field, fields[tag.field])
        return reply

    def receive(self, party, part):
        if isinstance(part, Frame):
            to, name, rank = part.peer, self.session.spec.name, self.parties.index
            if (party, to) not in ciphers:
                public = {p: self.session.keys[p].public_key for p in (party, to)}
                ciphers[(party, to)] = (
                    PairCipher(fake[to], public[party], name, to, party, rank(to) < rank(party)),  # opens as `to`
                    PairCipher(fake[party], public[to], name, party, to, rank(party) < rank(to)))  # seals as `party`
            opener, sealer = ciphers[(party, to)]
            data = opener.open(part)
            plain[(party, to)] += data
            part = Frame(peer=part.peer, seq=part.seq, data=sealer.seal(data).data)
        return real_receive(self, party, part)

    return {(handlers, "peers"): peers, (handlers, "post_sealed"): post_sealed, (handlers, "alignment"): alignment,
            (handlers, "confirm"): confirm,
            (relay_hub.Hub, "receive"): receive}


def mpyc_messages(stream: bytes, dials: bool, sender: int) -> dict[int, bytes]:
    """MPyC's messages in one direction of a link, by program counter: a party that dials first sends its id (2
    bytes) and the PRSS key it shares with the peer (16 bytes, three parties); then (pc, size, payload)."""
    if dials:
        assert int.from_bytes(stream[:2], "little") == sender
        stream = stream[18:]
    out, i = {}, 0
    while i + 12 <= len(stream):
        pc, size = struct.unpack_from("<qI", stream, i)
        out[pc] = stream[i + 12:i + 12 + size]
        i += 12 + size
    assert i == len(stream)
    return out


def test_without_mutual_tls_a_coordinator_swapping_keys_opens_every_input_share(tmp_path, monkeypatch):
    """What docs/mpc.md says an active coordinator can do without mutual TLS, done: the parties notice nothing,
    and every party's normalised columns are read from the shares it sent the other two."""
    told: dict = {}
    plain: dict = defaultdict(bytearray)
    out, session, path = serve(tmp_path, monkeypatch, key_swap(told, plain))
    for name, (code, err) in out.items():
        assert code == 0, f"party {name}:\n{err}"  # the session ran to its end, undetected
    from mpyc.finfields import find_prime_root

    # the public prime of SecFxp(32, 16): a prime of l + f + k + 2 bits (MPyC's security parameter k = 30)
    p_mod = find_prime_root(32 + 16 + 30 + 2, n=2)[0]
    scenario = load_scenario(path)
    for i, owner in enumerate(PARTIES):
        x, y = (p for p in PARTIES if p != owner)
        share = {p: mpyc_messages(bytes(plain[(owner, p)]), i < PARTIES.index(p), i) for p in (x, y)}
        for p in (x, y):  # the tunnel's count of MPyC messages (parties.mpc.Framing) sees them all, however cut
            stream, rank = bytes(plain[(owner, p)]), PARTIES.index(p)
            framing = Framing(handshake_bytes(3, i, rank) if i < rank else 0)
            cuts = sorted({0, len(stream), *np.random.default_rng(i).integers(0, len(stream), 50).tolist()})
            counts = np.array([framing.feed(stream[a:b]) for a, b in zip(cuts, cuts[1:])]).sum(axis=0)
            assert counts.tolist() == [len(share[p]), len(share[p])]
        d = 2
        pc = next(pc for pc, payload in share[x].items()  # the input: m x d shares, one message to each peer
                  if payload[:1] == b"\x80" and np.size(pickle.loads(payload)) == ROWS * d)
        vx, vy = (np.ravel(pickle.loads(share[p][pc])) for p in (x, y))
        ax, ay = PARTIES.index(x) + 1, PARTIES.index(y) + 1  # Shamir points: party i holds f(i + 1)
        # f(0) from two shares (threshold 1): Lagrange at 0
        lx, ly = ay * pow(ay - ax, -1, p_mod), ax * pow(ax - ay, -1, p_mod)
        secret = np.array([(lx * int(u) + ly * int(v)) % p_mod for u, v in zip(vx, vy)], dtype=object)
        signed = np.array([s - p_mod if s > p_mod // 2 else s for s in secret], dtype=float)
        read = (signed / 2.0 ** 16).reshape(ROWS, d)  # SecFxp(32, 16): values times 2^16
        cfg = scenario.party(owner)
        data = load_party_data(cfg)
        X = normalize(data.X.copy(), cfg.normalize)
        _, positions = told[owner]
        assert np.abs(read - X[positions.astype(np.intp)]).max() <= 2.0 ** -15, owner  # every value, read


def test_under_mutual_tls_mpc_parties_refuse_swapped_keys_before_sending_an_id(tmp_path, monkeypatch):
    plain: dict = defaultdict(bytearray)
    out, session, _ = serve(tmp_path, monkeypatch, key_swap({}, plain), mutual=True)
    for code, err in out.values():
        assert code != 0 and "Traceback" not in err, err
        assert "signature does not verify: the coordinator relayed a key that is not the party's" in err, err
    assert not rpcs(session) & {"Upload", "Confirm", "Relay"} and not plain
