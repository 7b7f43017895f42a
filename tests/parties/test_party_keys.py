"""A party's keys: pseudonyms, the sealed pseudonym key, and the binding of a key to its party's certificate."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from conftest import ROOT
from coordinator.errors import InvalidArgument
from coordinator.session import Session, SessionSpec
from coordinator.wire.serde import header_from_proto, upload_stream
from parties.client import ClientSecurity, agree_pseudonym_key, upload_messages
from parties.errors import PartyError
from parties.keys import KeyPair, pseudonym_key, seal, sign_key, unseal, verify_peer
from parties.methods.base import rows
from parties.pseudonyms import id_blocks, pseudonyms
from ppcsim.run.credentials import make_credentials
from protos.ids import PSEUDONYMS, as_text, pack, unpack
from protos.ppcsim.v1 import session_pb2


def independent_pseudonym(key: bytes, text: str) -> bytes:
    """docs/protocol.md's pseudonym of one id, computed here without ppc-sim's code."""
    b = text.encode()
    block = bytes([len(b)]) + b + bytes(15 - len(b)) if len(b) <= 15 else b"\xff" + hashlib.sha256(b).digest()[:15]
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return encryptor.update(block) + encryptor.finalize()


def vectors() -> list[tuple[str, bool, str, str]]:
    """The test vectors of docs/protocol.md: (id, integer?, block hex, pseudonym hex)."""
    text = (ROOT / "docs" / "protocol.md").read_text()
    table = text[text.index("Test vectors, with `K`"):]
    rows = re.findall(r"^\| `([^`]*)`( \(integer\))?[^|]*\| `([0-9a-f]{32})` \| `([0-9a-f]{32})` \|$", table, re.M)
    return [(i, bool(integer), block, pseudonym) for i, integer, block, pseudonym in rows]


def test_the_documented_pseudonym_test_vectors_hold_for_the_party_and_for_an_independent_computation():
    key = bytes(range(32))
    found = vectors()
    assert len(found) == 10 and {len(i.encode()) for i, *_ in found} >= {1, 3, 15, 16, 19, 36}
    for text, integer, block, want in found:
        ids = np.array([int(text)]) if integer else np.array([text])
        assert id_blocks(ids)[0].tobytes().hex() == block, text
        assert np.ascontiguousarray(pseudonyms(key, ids)).tobytes().hex() == want, text
        assert independent_pseudonym(key, text).hex() == want, text
        if integer:  # an integer id is the text of its canonical decimal form
            assert pseudonyms(key, np.array([text]))[0] == pseudonyms(key, ids)[0]


def test_array_pseudonyms_equal_the_one_by_one_computation_and_text_meets_integer():
    key = bytes(range(1, 33))
    rng = np.random.default_rng(3)
    ints = np.concatenate([np.arange(-50, 2000), rng.integers(-(2**63), 2**63 - 1, 500, dtype=np.int64),
                           [-(2**63), 2**63 - 1, 10**14 - 1, 10**15 - 1, 10**15, -(10**14) + 1, -(10**14)]])
    got = np.ascontiguousarray(pseudonyms(key, ints)).tobytes()
    assert got == b"".join(independent_pseudonym(key, str(v)) for v in ints.tolist())
    assert np.ascontiguousarray(pseudonyms(key, ints.astype(str))).tobytes() == got
    texts = np.array(["r1", "007", "7", "x" * 15, "y" * 16, "été", "日本語の長い識別子です", "a\u00e9" * 10])
    assert np.ascontiguousarray(pseudonyms(key, texts)).tobytes() == b"".join(
        independent_pseudonym(key, t) for t in texts.tolist())
    assert len({got[i : i + 16] for i in range(0, len(got), 16)}) == len(ints)
    # another key, other pseudonyms
    assert not set(as_text(pseudonyms(bytes(32), texts)).tolist()) & set(as_text(pseudonyms(key, texts)).tolist())


def test_the_retired_hmac_pseudonyms_are_refused_naming_the_new_encoding():
    session = Session(SessionSpec(name="s", parties=("a", "b"), deadline=60, ids="pseudonymous"))
    session.join("a", KeyPair.generate().public)
    messages = upload_messages("s", "a", "none", {}, pseudonyms(bytes(32), np.arange(4)),
                               [rows("data", np.zeros((4, 2)))], 2, 4096)
    header = next(messages).header
    header.id_encoding = session_pb2.ID_PSEUDONYMS
    with pytest.raises(InvalidArgument, match="ID_PSEUDONYMS .HMAC-SHA256 pseudonyms. is retired.*ID_PSEUDONYMS_AES"):
        session.receive(header_from_proto(header), upload_stream(messages))
    assert session.refused[0].party == "a"


def test_pseudonyms_travel_as_one_block_and_keep_trailing_zero_bytes():
    values = np.array([b"\x01" * 15 + b"\x00", b"\x00" * 16, b"\xff" * 16], dtype="S16")
    encoding, block = pack(values)
    assert encoding == PSEUDONYMS and len(block) == 48 and block[15:16] == b"\x00"
    back = unpack(PSEUDONYMS, block, 3)
    assert back.tobytes() == values.tobytes() and as_text(back)[1] == "00" * 16


def test_a_seeded_party_draws_the_same_keys_and_an_unseeded_one_never_does():
    assert KeyPair.generate(5).public == KeyPair.generate(5).public != KeyPair.generate(6).public
    assert KeyPair.generate().public != KeyPair.generate().public
    assert pseudonym_key(5) == pseudonym_key(5) != pseudonym_key(None) != pseudonym_key(None)


def test_the_same_seed_in_two_sessions_gives_unrelated_keys_and_unlinkable_pseudonyms():
    assert KeyPair.generate(5, "spring").public == KeyPair.generate(5, "spring").public
    assert KeyPair.generate(5, "spring").public != KeyPair.generate(5, "autumn").public
    ids = np.arange(1000)
    spring, autumn = pseudonyms(pseudonym_key(5, "spring"), ids), pseudonyms(pseudonym_key(5, "autumn"), ids)
    assert np.array_equal(spring, pseudonyms(pseudonym_key(5, "spring"), ids))  # a restarted party: the same
    assert not set(spring.tolist()) & set(autumn.tolist())  # no record of one session found in the other


def test_a_sealed_key_opens_only_for_its_party_from_its_leader():
    leader, to, other = KeyPair.generate(), KeyPair.generate(), KeyPair.generate()
    key = pseudonym_key(None)
    nonce, box = seal(leader, to.public, key, "s", "lab", "shop")
    assert len(box) == 48
    assert unseal(to, leader.public, nonce, box, "s", "lab", "shop") == key
    with pytest.raises(PartyError, match="does not open"):
        unseal(other, leader.public, nonce, box, "s", "lab", "shop")  # not the party it was sealed to
    with pytest.raises(PartyError, match="does not open"):
        unseal(to, other.public, nonce, box, "s", "lab", "shop")  # a substituted leader key
    with pytest.raises(PartyError, match="does not open"):
        unseal(to, leader.public, nonce, box, "another session", "lab", "shop")
    tampered = bytes([box[0] ^ 1]) + box[1:]
    with pytest.raises(PartyError, match="does not open"):
        unseal(to, leader.public, nonce, tampered, "s", "lab", "shop")


@pytest.fixture(scope="module")
def creds(tmp_path_factory):
    folder = make_credentials(tmp_path_factory.mktemp("creds"), "s", ["lab", "shop"])
    return {p: ClientSecurity.load(folder, p) for p in ("lab", "shop")}


def test_a_key_signed_with_a_partys_certificate_verifies_and_a_substituted_one_does_not(creds):
    lab = KeyPair.generate()
    signature = sign_key(creds["lab"].key, "s", "lab", lab.public)
    verify_peer(creds["shop"].ca, creds["lab"].certificate, signature, "s", "lab", lab.public)
    mallory = KeyPair.generate()
    with pytest.raises(PartyError, match="relayed a key that is not the party's"):
        verify_peer(creds["shop"].ca, creds["lab"].certificate, signature, "s", "lab", mallory.public)
    with pytest.raises(PartyError, match="names \\['lab'\\], not 'shop'"):
        verify_peer(creds["shop"].ca, creds["lab"].certificate, signature, "s", "shop", lab.public)


class ManInTheMiddle:
    """A coordinator that relays its own public key in place of the leader's."""

    def __init__(self, peers, session="s", party="shop"):
        self.session, self.party, self._peers = session, party, peers

    def peers(self, timeout):
        return self._peers

    def sealed_key(self, timeout):
        raise AssertionError("the party must stop before it asks for a key")


def test_under_mutual_tls_a_party_refuses_keys_the_coordinator_substituted(creds):
    lab, shop, mallory = KeyPair.generate(), KeyPair.generate(), KeyPair.generate()
    genuine = sign_key(creds["lab"].key, "s", "lab", lab.public)
    peers = [
        session_pb2.PeerKey(party="lab", public_key=mallory.public, key_signature=genuine,
                            certificate=creds["lab"].certificate),
        session_pb2.PeerKey(party="shop", public_key=shop.public,
                            key_signature=sign_key(creds["shop"].key, "s", "shop", shop.public),
                            certificate=creds["shop"].certificate),
    ]
    reply = session_pb2.JoinReply(parties=["lab", "shop"], ids=session_pb2.IDS_PSEUDONYMOUS)
    with pytest.raises(PartyError, match="'lab'.*relayed a key that is not the party's"):
        agree_pseudonym_key(ManInTheMiddle(peers), reply, shop, None, creds["shop"], 5.0, mutual=True)
    # without mutual TLS nothing binds a key to its party: the substitution goes unnoticed (the README says so)
    class Relayed(ManInTheMiddle):
        def sealed_key(self, timeout):
            nonce, box = seal(mallory, shop.public, bytes(32), "s", "lab", "shop")
            return session_pb2.SealedKey(to="shop", nonce=nonce, ciphertext=box, sender="lab")
    assert agree_pseudonym_key(Relayed(peers), reply, shop, None, creds["shop"], 5.0) == bytes(32)
