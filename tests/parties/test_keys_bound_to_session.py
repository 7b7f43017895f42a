"""Keys bound to their party and session, secret files written safely, and what a coordinator swapping keys
or asking for plain ids gets, against real ``ppc party`` processes.

Party certificates carry their purpose (clientAuth) and a URI naming their session and party: a party refuses
another session's certificate and the coordinator's, and so does the coordinator. Secrets are written 0600 and
never through a link. Without mutual TLS a coordinator that swaps keys reads every raw id (shown by the attack);
under mutual TLS every party refuses swapped keys before it sends an id. (Lies about the alignment, the labels
and the confirmations: tests/parties/test_lying_coordinator.py.)
"""

from __future__ import annotations

import numpy as np
import pytest
from test_lying_coordinator import SCENARIO, posts, run_parties

from conftest import swapped_keys, write_scenario
from coordinator.registry import Registry
from coordinator.server import start_server
from parties.errors import PartyError
from parties.keys import KeyPair
from protos.ppcsim.v1 import session_pb2


@pytest.fixture(scope="module")
def two_sessions(tmp_path_factory):
    from ppcsim.run.credentials import make_shared_credentials

    return make_shared_credentials(tmp_path_factory.mktemp("shared"), {"A": ["lab", "shop"], "B": ["lab", "shop"]})


def test_certificates_carry_their_purpose_and_session(two_sessions):
    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID

    from protos.identity import party_uri

    lab = x509.load_pem_x509_certificate((two_sessions / "A" / "parties" / "lab" / "cert.pem").read_bytes())
    assert list(lab.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.CLIENT_AUTH]
    assert lab.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.UniformResourceIdentifier) == [party_uri("A", "lab")]
    server = x509.load_pem_x509_certificate((two_sessions / "coordinator.pem").read_bytes())
    assert list(server.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.SERVER_AUTH]


def test_a_party_refuses_another_sessions_certificate_and_the_coordinators(two_sessions):
    from parties.keys import sign_key, verify_peer

    a_lab, b_shop = two_sessions / "A" / "parties" / "lab", two_sessions / "B" / "parties" / "shop"
    ca = (b_shop / "ca.pem").read_bytes()  # one CA for both sessions
    key = KeyPair.generate()
    # session A's lab signs a key for session B: the same CA, the same name, another session
    signature = sign_key((a_lab / "key.pem").read_bytes(), "B", "lab", key.public)
    with pytest.raises(PartyError, match="is not bound to session 'B'"):
        verify_peer(ca, (a_lab / "cert.pem").read_bytes(), signature, "B", "lab", key.public)
    verify_peer(ca, (a_lab / "cert.pem").read_bytes(), sign_key((a_lab / "key.pem").read_bytes(), "A", "lab",
                                                                 key.public), "A", "lab", key.public)
    # the coordinator's own certificate, for a party that took its name
    signature = sign_key((two_sessions / "coordinator.key").read_bytes(), "B", "ppc-coordinator", key.public)
    with pytest.raises(PartyError, match="which no party may take"):
        verify_peer(ca, (two_sessions / "coordinator.pem").read_bytes(), signature, "B", "ppc-coordinator",
                    key.public)


def test_the_coordinator_refuses_another_sessions_certificate_without_tokens(two_sessions):
    import grpc

    from coordinator.security import load_server_security
    from coordinator.session import SessionSpec
    from parties.client import ClientSecurity, CoordinatorClient, key_signature

    registry = Registry()
    registry.create(SessionSpec(name="B", parties=("lab", "shop"), deadline=30, tokens=None, mutual=True))
    server, port = start_server("127.0.0.1:0", registry,
                                security=load_server_security(two_sessions, tls=True, mutual=True))
    try:
        def join(folder):
            security = ClientSecurity.load(folder, "lab")
            client = CoordinatorClient(f"127.0.0.1:{port}", "B", "lab", ClientSecurity(
                security.ca, security.certificate, security.key, ""))
            pair = KeyPair.generate()
            try:
                return client.join(10.0, pair.public, key_signature(security, "B", "lab", pair, True))
            finally:
                client.close()

        with pytest.raises(grpc.RpcError) as err:
            join(two_sessions / "A" / "parties" / "lab")
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "is not bound to session 'B'" in err.value.details()
        assert list(join(two_sessions / "B" / "parties" / "lab").parties) == ["lab", "shop"]
    finally:
        server.stop(0)


def test_no_party_may_take_the_coordinators_name(tmp_path):
    from ppcsim.run.credentials import make_credentials

    with pytest.raises(PartyError, match="no party may be named 'ppc-coordinator'"):
        make_credentials(tmp_path / "c", "s", ["lab", "ppc-coordinator"])


# -- secret files ---------------------------------------------------------------------------------------

def test_secrets_are_written_0600_over_weaker_files_and_never_through_a_link(tmp_path):
    import os

    from parties.files import write_private

    weak = tmp_path / "token"
    weak.write_text("old")
    weak.chmod(0o644)
    write_private(weak, b"new")
    assert weak.read_bytes() == b"new" and (weak.stat().st_mode & 0o777) == 0o600
    target = tmp_path / "elsewhere"
    target.write_text("untouched")
    (tmp_path / "key.pem").symlink_to(target)
    with pytest.raises(PartyError, match="is a symbolic link"):
        write_private(tmp_path / "key.pem", b"secret")
    assert target.read_text() == "untouched"
    assert sorted(os.listdir(tmp_path)) == ["elsewhere", "key.pem", "token"]  # no temporary file left


def test_ppc_credentials_fixes_weak_files_and_refuses_a_symlinked_key(tmp_path):
    from conftest import run_ppc

    path = write_scenario(tmp_path, SCENARIO.replace("tls = false\ntokens = false", "mutual = true"))
    creds = tmp_path / "creds"
    (creds / "parties" / "a").mkdir(parents=True)
    for name in ("token", "key.pem"):
        (creds / "parties" / "a" / name).write_text("old")
        (creds / "parties" / "a" / name).chmod(0o644)
    done = run_ppc("credentials", path, "--out", creds, timeout=60)
    assert done.returncode == 0, done.stderr
    for name in ("token", "key.pem"):
        assert (creds / "parties" / "a" / name).stat().st_mode & 0o777 == 0o600
    assert (creds / "coordinator.key").stat().st_mode & 0o777 == 0o600
    (creds / "coordinator.key").unlink()
    target = tmp_path / "somewhere.key"
    target.write_text("not a key")
    (creds / "coordinator.key").symlink_to(target)
    again = run_ppc("credentials", path, "--out", creds, timeout=60)
    assert again.returncode != 0 and "Traceback" not in again.stderr
    assert "coordinator.key is a symbolic link" in again.stderr
    assert target.read_text() == "not a key"


def test_a_partys_summary_holding_its_seed_is_0600(tmp_path, monkeypatch):
    out, session = run_parties(tmp_path, monkeypatch, None, None, "--summary", str(tmp_path / "{name}.json"))
    assert all(code == 0 for code, _ in out.values()), out
    for name in ("a", "b"):
        assert (tmp_path / f"{name}.json").stat().st_mode & 0o777 == 0o600
    assert posts(session) == ["a", "b"]  # the honest coordinator: both parties posted every round


def test_ppc_coordinator_out_takes_the_folder_as_ppc_run_does(tmp_path):
    from conftest import run_ppc
    from ppcsim.run.outdir import claim

    path = write_scenario(tmp_path, SCENARIO)
    out = tmp_path / "out"
    with claim(out):
        busy = run_ppc("coordinator", "--listen", "127.0.0.1:0", "--scenario", path, "--out", out, timeout=60)
    assert busy.returncode != 0 and "Traceback" not in busy.stderr
    assert "another ppc command" in busy.stderr and "is writing into this folder" in busy.stderr
    (out / "report.json").write_text("{}")
    full = run_ppc("coordinator", "--listen", "127.0.0.1:0", "--scenario", path, "--out", out, timeout=60)
    assert full.returncode != 0 and "holds" in full.stderr, full.stderr


# -- keys swapped by the coordinator (a man in the middle) -------------------------------------------------

def man_in_the_middle(monkeypatch, stolen: dict):
    """Replace the key relay: every party gets the coordinator's own key for every other party; the leader's
    sealed pseudonym key is opened on the way (into ``stolen``) and sealed again to each party."""
    from coordinator import handlers

    peers, post_sealed = swapped_keys({p: KeyPair.generate() for p in ("a", "b")}, stolen)
    monkeypatch.setattr(handlers, "peers", peers)
    monkeypatch.setattr(handlers, "post_sealed", post_sealed)


def test_without_mutual_tls_a_coordinator_swapping_keys_reads_every_raw_id(tmp_path, monkeypatch):
    """What an active coordinator can still do without mutual TLS (documented, and said in every report)."""
    from parties.pseudonyms import pseudonyms

    stolen: dict = {}
    man_in_the_middle(monkeypatch, stolen)
    out, session = run_parties(tmp_path, monkeypatch, None, None)
    guesses = np.arange(10_000)  # a dictionary of candidate ids
    table = dict(zip(pseudonyms(stolen["key"], guesses).tolist(), guesses.tolist()))
    for party in ("a", "b"):
        sent = session.contributions[party].ids
        assert sorted(table[p] for p in sent.tolist()) == list(range(80))  # every raw id, 80 of 80
    # Confirm then fails (each party's confirmation keys are shared with the coordinator, not the other party),
    # so no partial distance is posted; the ids were lost before it
    for code, err in out.values():
        assert code != 0 and "a man in the middle" in err and "Traceback" not in err, err
    assert posts(session) == []


def test_under_mutual_tls_every_party_refuses_swapped_keys_before_sending_an_id(tmp_path, monkeypatch):
    stolen: dict = {}
    man_in_the_middle(monkeypatch, stolen)
    out, session = run_parties(tmp_path, monkeypatch, None, None, "--timeout", "20", mutual=True)
    for code, err in out.values():
        assert code != 0 and "Traceback" not in err, err
        assert "signature does not verify: the coordinator relayed a key that is not the party's" in err, err
    assert "key" not in stolen  # the leader sealed nothing to a key it could not verify
    assert not any(e.rpc == "Upload" for e in session.ledger.entries())  # no pseudonym was sent


def test_a_party_refuses_a_coordinator_whose_certificate_is_not_for_a_server(tmp_path):
    """The party's TLS (gRPC) checks the coordinator's ExtendedKeyUsage: a party's clientAuth certificate, even
    one naming ppc-coordinator under the session's CA, does not serve."""
    import grpc
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.x509.oid import ExtendedKeyUsageOID

    from coordinator.security import ServerSecurity
    from coordinator.session import SessionSpec
    from parties.client import ClientSecurity, CoordinatorClient
    from ppcsim.run.credentials import _certificate, _key, _pem_key, make_authority

    ca = make_authority(tmp_path / "ca", "s")
    answers = {}
    for usage in (ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH):
        key = _key()
        cert = _certificate("ppc-coordinator", key, ca.certificate.subject, ca.key,
                            sans=[x509.DNSName("ppc-coordinator")], usage=usage)
        registry = Registry()
        registry.create(SessionSpec(name="s", parties=("a", "b"), deadline=10))
        server, port = start_server("127.0.0.1:0", registry, security=ServerSecurity(
            True, False, cert.public_bytes(serialization.Encoding.PEM), _pem_key(key), ca.pem))
        client = CoordinatorClient(f"127.0.0.1:{port}", "s", "a", ClientSecurity(ca.pem, b"", b"", ""))
        try:
            client.stub.Join(session_pb2.JoinRequest(session="s", party="a", public_key=KeyPair.generate().public),
                             timeout=5)
            answers[usage] = "joined"
        except grpc.RpcError as exc:
            answers[usage] = exc.code()
        finally:
            client.close()
            server.stop(0)
    assert answers == {ExtendedKeyUsageOID.SERVER_AUTH: "joined",
                       ExtendedKeyUsageOID.CLIENT_AUTH: grpc.StatusCode.UNAVAILABLE}


def test_a_party_refuses_a_coordinator_asking_for_plain_ids_when_its_scenario_says_pseudonymous(tmp_path,
                                                                                            monkeypatch):
    from coordinator import handlers

    real = handlers.join

    def join(session, request, certificate=b""):
        reply = real(session, request, certificate)
        reply.ids = session_pb2.IDS_PLAIN  # a downgrade: the parties would send their raw ids
        return reply

    monkeypatch.setattr(handlers, "join", join)
    out, session = run_parties(tmp_path, monkeypatch, None, None, "--timeout", "20")
    for code, err in out.values():
        assert code != 0 and "Traceback" not in err and "refusing to send a raw id" in err, err
    assert not any(e.rpc == "Upload" for e in session.ledger.entries())
