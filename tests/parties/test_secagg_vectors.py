"""The test vectors of docs/secure-aggregation.md ("Test vectors"): pair keys, Confirm MACs, the transcript chain
and the masks, each recomputed with the party's own functions (parties.keys, parties.secagg) and, apart, with
nothing but ``cryptography`` and ``hashlib``, so that an independent client can check its implementation."""

from __future__ import annotations

import hashlib
import hmac
import re

import numpy as np
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from conftest import ROOT
from parties.keys import KeyPair
from parties.secagg import (
    FIELDS,
    SEEDING_ROUNDS,
    Transcript,
    _confirm_keys,
    _tag,
    confirmed_fields,
    keyed,
    mask,
    pair_masks,
)
from parties.serde import AlignmentHeader

SESSION = "demo"
A_PRIVATE, B_PRIVATE = bytes(range(32)), bytes(range(32, 64))
LABELS_0 = np.array([0, 1, 1], dtype="<i4")  # round 0's labels, as the arbiter answers them


def header() -> AlignmentHeader:
    return AlignmentHeader(n_joined=3, n_rows=4, n_clusters=2, init=(0, 2), scale_bits=32, max_iter=5, parties=("a", "b"),
                     seeding_steps=0, revision=2)


def computed() -> dict[str, str]:
    """Every vector, by the party's own functions (party 'a' of session "demo", with b after it)."""
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey as Private

    a, b = KeyPair(Private.from_private_bytes(A_PRIVATE)), KeyPair(Private.from_private_bytes(B_PRIVATE))
    peers = {"a": a.public, "b": b.public}
    order = ["a", "b"]
    out = {"a_private": A_PRIVATE.hex(), "a_public": a.public.hex(), "b_private": B_PRIVATE.hex(),
           "b_public": b.public.hex(),
           "x25519": a.private.exchange(b.private.public_key()).hex()}
    s_ab = pair_masks(a, peers, order, SESSION, "a")[0].secret
    c_ab = _confirm_keys(a, peers, order, SESSION, "a")["b"]
    assert s_ab == pair_masks(b, peers, order, SESSION, "b")[0].secret  # both ends derive the same keys
    assert c_ab == _confirm_keys(b, peers, order, SESSION, "b")["a"]
    out.update(s_ab=s_ab.hex(), c_ab=c_ab.hex())
    # party a uploaded the plain ids r0 .. r3; the join took its rows 3, 0, 2 in that order
    fields = confirmed_fields(header(), np.array([3, 0, 2]), np.array(["r0", "r1", "r2", "r3"]))
    for f in FIELDS:
        out[f"field {f}"] = fields[f].hex()
        out[f"mac a->b {f}"] = _tag(c_ab, "a", "b", f, fields[f]).hex()
    transcript = Transcript(fields)
    out["T_0"] = transcript.digest.hex()
    t0 = keyed(pair_masks(a, peers, order, SESSION, "a"), transcript)[0].secret
    out["t_ab round 0"] = t0.hex()
    out["M_ab,0"] = " ".join(f"{v:016x}" for v in mask(t0, 0, 3 * 2).tolist())
    transcript.add(LABELS_0.tobytes())
    out["T_1"] = transcript.digest.hex()
    t1 = keyed(pair_masks(a, peers, order, SESSION, "a"), transcript)[0].secret
    out["t_ab round 1"] = t1.hex()
    out["M_ab,1"] = " ".join(f"{v:016x}" for v in mask(t1, 1, 3 * 2).tolist())
    out["M_ab,seeding 0"] = " ".join(f"{v:016x}" for v in mask(t0, SEEDING_ROUNDS + 0, 3).tolist())
    return out


def independent() -> dict[str, str]:
    """The same vectors from the document's formulas alone."""
    a, b = X25519PrivateKey.from_private_bytes(A_PRIVATE), X25519PrivateKey.from_private_bytes(B_PRIVATE)
    shared = a.exchange(b.public_key())

    def hkdf(label: str) -> bytes:
        info = b"\x00".join([b"ppcsim.v1 " + label.encode(), SESSION.encode(), b"a", b"b"])
        return HKDF(hashes.SHA256(), 32, salt=None, info=info).derive(shared)

    s_ab, c_ab = hkdf("mask"), hkdf("confirm")
    fields = {"parties": b"a\x00b", "n_joined": (3).to_bytes(8, "big"), "n_clusters": (2).to_bytes(4, "big"),
              "init": (0).to_bytes(8, "big") + (2).to_bytes(8, "big"), "seeding_steps": bytes(4),
              "scale_bits": (32).to_bytes(4, "big"), "max_iter": (5).to_bytes(4, "big"),
              "records": b"r3\x00r0\x00r2\x00"}
    out = {"s_ab": s_ab.hex(), "c_ab": c_ab.hex(), "x25519": shared.hex()}
    for f, value in fields.items():
        out[f"field {f}"] = value.hex()
        out[f"mac a->b {f}"] = hmac.new(c_ab, b"ppcsim.v1 confirm\x00a\x00b\x00" + f.encode() + b"\x00" + value,
                                        hashlib.sha256).hexdigest()
    t = hashlib.sha256(b"ppcsim.v1 transcript\x00" + b"".join(len(v).to_bytes(8, "big") + v
                                                             for v in fields.values())).digest()
    out["T_0"] = t.hex()

    def keystream(key: bytes, round_: int, n: int) -> str:
        data = Cipher(algorithms.AES(key), modes.CTR(round_.to_bytes(8, "big") + bytes(8))).encryptor().update(
            bytes(8 * n))
        return " ".join(f"{int.from_bytes(data[i:i + 8], 'little'):016x}" for i in range(0, 8 * n, 8))

    t0 = hmac.new(s_ab, t, hashlib.sha256).digest()
    out["M_ab,0"] = keystream(t0, 0, 6)
    out["M_ab,seeding 0"] = keystream(t0, 2**32, 3)
    t1 = hmac.new(s_ab, hashlib.sha256(t + b"\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00").digest(),
                  hashlib.sha256).digest()
    out["M_ab,1"] = keystream(t1, 1, 6)
    return out


def documented() -> dict[str, str]:
    """The ``name = hex`` lines of the test-vector block of docs/secure-aggregation.md."""
    text = (ROOT / "docs" / "secure-aggregation.md").read_text()
    block = text[text.index("### Test vectors"):]
    block = block[block.index("```"):]
    block = block[3:block.index("```", 3)]
    return {m[1].strip(): m[2].strip() for m in re.finditer(r"^([^=\n]+?) += ([0-9a-f ]+)$", block, re.M)}


def test_the_documented_vectors_are_what_the_party_computes():
    assert documented() == computed()


def test_the_documented_vectors_follow_from_the_formulas_alone():
    mine = independent()
    doc = documented()
    assert len(mine) == 23
    for name, value in mine.items():
        assert doc[name] == value, name


def test_masks_cancel_in_the_sum():
    """a adds M_ab, b subtracts it: the vectors' round-0 masks cancel modulo 2^64."""
    values = [int(v, 16) for v in computed()["M_ab,0"].split()]
    assert all((v + (2**64 - v)) % 2**64 == 0 for v in values)
