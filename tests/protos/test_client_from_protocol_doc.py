"""A party client written from docs/protocol.md and the .proto alone, against a real coordinator.

Nothing of ppc-sim's party code is used here: only the generated gRPC stubs,
``cryptography`` and numpy, following the document step by step (TLS with the
coordinator's name, the bearer token, X25519 keys, the sealed pseudonym key,
AES pseudonyms, the upload's order, the labels back by position). Two such
clients, with ids in different orders and one id only one of them holds,
complete a session served by ``ppc coordinator``'s own code.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import grpc
import numpy as np
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from coordinator.clustering import ClusteringSpec
from coordinator.registry import Registry
from coordinator.security import load_server_security, load_token_digests
from coordinator.server import start_server
from coordinator.session import SessionSpec
from ppcsim.run.credentials import make_credentials
from protos.ppcsim.v1 import array_pb2, session_pb2, session_pb2_grpc

SESSION = "written-from-the-docs"
CHUNK = 1 << 20


def seal_info(session: str, leader: str, to: str) -> bytes:
    return b"\x00".join([b"ppcsim.v1 seal", session.encode(), leader.encode(), to.encode()])


def seal_key(own: X25519PrivateKey, peer: bytes, info: bytes) -> bytes:
    shared = own.exchange(X25519PublicKey.from_public_bytes(peer))
    return HKDF(hashes.SHA256(), 32, salt=None, info=info).derive(shared)


def client(folder: Path, address: str, party: str, ids: list[str], values: np.ndarray, out: dict) -> None:
    """One party, as docs/protocol.md describes it."""
    ca, token = (folder / "ca.pem").read_bytes(), (folder / "token").read_text().strip()
    channel = grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=ca),
                                  options=[("grpc.ssl_target_name_override", "ppc-coordinator")])
    stub = session_pb2_grpc.CoordinatorStub(channel)
    meta = (("authorization", f"Bearer {token}"),)
    own = X25519PrivateKey.generate()
    public = own.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    reply = stub.Join(session_pb2.JoinRequest(session=SESSION, party=party, public_key=public), timeout=30,
                      wait_for_ready=True, metadata=meta)
    assert reply.ids == session_pb2.IDS_PSEUDONYMOUS
    peers = {p.party: p.public_key for p in stub.GetPeers(session_pb2.PeersRequest(session=SESSION, party=party),
                                                            timeout=30, metadata=meta).peers}
    assert set(peers) == set(reply.parties) and peers[party] == public
    leader = reply.parties[0]
    if party == leader:
        key = os.urandom(32)
        sealed = []
        for to in reply.parties[1:]:
            nonce, info = os.urandom(12), seal_info(SESSION, leader, to)
            sealed.append(session_pb2.SealedKey(to=to, nonce=nonce,
                                                ciphertext=AESGCM(seal_key(own, peers[to], info)).encrypt(nonce, key, info)))
        stub.PostSealedKeys(session_pb2.SealedKeys(session=SESSION, party=party, keys=sealed), timeout=30, metadata=meta)
    else:
        box = stub.GetSealedKey(session_pb2.SealedKeyRequest(session=SESSION, party=party), timeout=30, metadata=meta)
        info = seal_info(SESSION, leader, party)
        key = AESGCM(seal_key(own, peers[leader], info)).decrypt(box.nonce, box.ciphertext, info)
    def id_block(text: str) -> bytes:
        b = text.encode()
        return bytes([len(b)]) + b + bytes(15 - len(b)) if len(b) <= 15 else b"\xff" + hashlib.sha256(b).digest()[:15]
    aes = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    block = aes.update(b"".join(map(id_block, ids))) + aes.finalize()
    data = values.astype("<f8").tobytes()

    def messages():
        yield session_pb2.UploadMessage(header=session_pb2.UploadHeader(
            session=SESSION, party=party, method="none", n_ids=len(ids), n_columns=values.shape[1],
            arrays=[array_pb2.ArraySpec(name="data", dtype="<f8", shape=list(values.shape), layout=array_pb2.ROWS)],
            id_encoding=session_pb2.ID_PSEUDONYMS_AES, packed_id_bytes=len(block)))
        for start in range(0, len(block), reply.chunk_bytes):
            yield session_pb2.UploadMessage(ids=session_pb2.IdChunk(packed=block[start:start + reply.chunk_bytes]))
        for start in range(0, len(data), reply.chunk_bytes):
            yield session_pb2.UploadMessage(chunk=array_pb2.ArrayChunk(array=0, offset=start,
                                                                       data=data[start:start + reply.chunk_bytes]))

    assert stub.Upload(messages(), timeout=30, metadata=meta).payload_bytes == len(data)
    labels = b""
    for message in stub.GetResult(session_pb2.ResultRequest(session=SESSION, party=party), timeout=30, metadata=meta):
        if message.HasField("header"):
            out[f"{party}-header"] = message.header
        else:
            assert message.labels.offset == len(labels)
            labels += message.labels.data
    out[party] = dict(zip(ids, np.frombuffer(labels, dtype="<i4").tolist()))
    channel.close()


def test_a_client_written_from_the_protocol_document_completes_a_session(tmp_path):
    creds = make_credentials(tmp_path / "creds", SESSION, ["north", "south"])
    registry = Registry()
    session = registry.create(SessionSpec(name=SESSION, parties=("north", "south"), deadline=60, ids="pseudonymous",
                                          clustering=ClusteringSpec(algorithm="kmeans", n_clusters=2),
                                          tokens=load_token_digests(creds, SESSION),
                                          expected={"north": ("none", {}), "south": ("none", {})}))
    server, port = start_server("127.0.0.1:0", registry,
                                security=load_server_security(creds, tls=True, mutual=False))
    rng = np.random.default_rng(0)
    records = [f"p{i:03d}" for i in range(40)]
    level = {r: (10.0 if i % 2 else 0.0) for i, r in enumerate(records)}
    north_ids = list(rng.permutation(records)) + ["north-only"]
    south_ids = list(rng.permutation(records))
    north = np.array([[level.get(r, 0.0) + 0.1 * j for j in range(3)] for r in north_ids])
    south = np.array([[level[r] - 0.2 * j for j in range(2)] for r in south_ids])
    out: dict = {}
    errors: list[BaseException] = []

    def run(*args):
        try:
            client(*args)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(creds / "parties" / "north", f"127.0.0.1:{port}", "north",
                                                  north_ids, north, out)),
               threading.Thread(target=run, args=(creds / "parties" / "south", f"127.0.0.1:{port}", "south",
                                                  south_ids, south, out))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        server.stop(grace=1.0)
    assert not errors, errors
    assert session.state == session_pb2.DONE
    # the join dropped north's extra record; the labels came back in each client's own order
    assert out["north"]["north-only"] == -2 and out["north-header"].n_joined == 40
    assert all(out["north"][r] == out["south"][r] for r in records)
    low = {out["south"][r] for r in records if level[r] == 0.0}
    high = {out["south"][r] for r in records if level[r] == 10.0}
    assert len(low) == len(high) == 1 and low != high
    # the coordinator saw 16-byte pseudonyms only
    assert session.outcome.join.ids.dtype == np.dtype("S16")
    assert not {r.encode() for r in records} & set(session.outcome.join.ids.tolist())
