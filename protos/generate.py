"""Regenerate the Python code beside the .proto files.

Run from the repository root: ``python -m protos.generate`` (needs grpcio-tools).
tests/protos/test_generated_code_current.py fails when the committed code differs from a fresh
generation.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_DIR = Path(__file__).resolve().parent / "ppcsim" / "v1"


def generate(out_dir: Path) -> None:
    """Write *_pb2.py, *_pb2.pyi and *_pb2_grpc.py for every .proto into out_dir."""
    from grpc_tools import protoc

    protos = sorted(str(p.relative_to(ROOT)) for p in PROTO_DIR.glob("*.proto"))
    include = Path(protoc.__file__).parent / "_proto"
    args = [
        "protoc",
        f"-I{ROOT}",
        f"-I{include}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *protos,
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")


if __name__ == "__main__":
    generate(ROOT)
    sys.exit(0)
