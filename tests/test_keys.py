"""A party's keys: pseudonyms, the sealed pseudonym key, and the binding of a key to its party's certificate."""

from __future__ import annotations

import hashlib
import hmac

import numpy as np
import pytest

from parties.client import ClientSecurity, agree_pseudonym_key
from parties.errors import PartyError
from parties.keys import KeyPair, pseudonym_key, pseudonyms, seal, sign_key, unseal, verify_peer
from ppcsim.credentials import make_credentials
from protos.ids import PSEUDONYMS, as_text, pack, unpack
from protos.ppcsim.v1 import session_pb2


def test_a_pseudonym_is_the_first_16_bytes_of_hmac_sha256_of_the_id_as_text():
    key = bytes(range(32))
    got = pseudonyms(key, np.array(["r1", "007", "7"]))
    want = [hmac.new(key, t.encode(), hashlib.sha256).digest()[:16] for t in ("r1", "007", "7")]
    assert as_text(got).tolist() == [w.hex() for w in want]
    # integer 7 is the id "7", not "007"
    assert pseudonyms(key, np.array([7]))[0] == got[2] != got[1]
    # another key, other pseudonyms
    assert not set(as_text(pseudonyms(bytes(32), np.array(["r1"]))).tolist()) & set(as_text(got).tolist())


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
