"""The committed generated code in protos/ is exactly what the .proto files generate."""


import pytest

pytest.importorskip("grpc_tools", reason="grpcio-tools (the test extra) generates the code to compare")

from protos.generate import PROTO_DIR, ROOT, generate  # noqa: E402


def test_generated_code_is_current(tmp_path):
    generate(tmp_path)
    fresh = sorted((tmp_path / PROTO_DIR.relative_to(ROOT)).glob("*_pb2*.py*"))
    assert [p.name for p in fresh] == sorted(p.name for p in PROTO_DIR.glob("*_pb2*.py*"))
    for path in fresh:
        committed = PROTO_DIR / path.name
        assert committed.read_text() == path.read_text(), (
            f"{committed} differs from the .proto; run 'python -m protos.generate' and commit the result"
        )


def test_every_proto_has_generated_code():
    for proto in PROTO_DIR.glob("*.proto"):
        assert (PROTO_DIR / f"{proto.stem}_pb2.py").exists()
        assert (PROTO_DIR / f"{proto.stem}_pb2_grpc.py").exists()
