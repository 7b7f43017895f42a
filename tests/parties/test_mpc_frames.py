"""The MPC tunnel's encryption (parties.mpc): every party-to-party frame is AES-GCM under the documented key,
nonce and associated data, and a frame dropped, repeated or altered is refused."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from parties.errors import PartyError
from parties.keys import KeyPair
from parties.mpc import LABEL, PairCipher, associated, nonce

pytest.importorskip("mpyc")


# -- the tunnel's encryption ------------------------------------------------------------------------

def _pair(session="s"):
    a, b = KeyPair.generate(1), KeyPair.generate(2)
    return (PairCipher(a, b.public, session, "a", "b", True), PairCipher(b, a.public, session, "b", "a", False), a, b)


def test_frames_are_aes_gcm_under_the_documented_key_nonce_and_associated_data():
    ab, ba, a, b = _pair()
    message = ab.seal(b"shares")
    key = a.pair_secret(b.public, LABEL, "s", "a", "b")
    # the documented construction, computed independently: direction 0 (a -> b), frame 0
    assert message.data == AESGCM(key).encrypt(bytes(4) + bytes(8), b"shares",
                                                     b"ppcsim.v1 mpc tunnel\x00s\x00a\x00b")
    assert nonce(1, 2) == b"\x00\x00\x00\x01" + (2).to_bytes(8, "big")
    assert associated("s", "b", "a") == b"ppcsim.v1 mpc tunnel\x00s\x00b\x00a"
    assert ba.open(message) == b"shares"
    back = ba.seal(b"reply")  # the other direction: nonce prefix 1, its own counter
    assert back.seq == 0 and back.data == AESGCM(key).encrypt(
        b"\x00\x00\x00\x01" + bytes(8), b"reply", b"ppcsim.v1 mpc tunnel\x00s\x00b\x00a")
    assert ab.open(back) == b"reply"


def test_a_frame_dropped_repeated_or_altered_is_refused():
    ab, ba, _, _ = _pair()
    first, second = ab.seal(b"one"), ab.seal(b"two")
    with pytest.raises(PartyError, match="frame 1 from 'a' where frame 0 was due"):
        ba.open(second)
    assert ba.open(first) == b"one"
    with pytest.raises(PartyError, match="frame 0 from 'a' where frame 1 was due"):
        ba.open(first)  # replayed
    second = replace(second, data=bytes([second.data[0] ^ 1]) + second.data[1:])  # frames are frozen: a copy
    with pytest.raises(PartyError, match="does not open"):
        ba.open(second)
    other = _pair("another session")[0].seal(b"two")  # same keys' owners, another session: another key
    other = replace(other, seq=1)
    with pytest.raises(PartyError, match="does not open"):
        ba.open(other)
