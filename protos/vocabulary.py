"""The names a session's protocol goes by, on both sides of the wire.

Neither side owns these: the coordinator (coordinator.wire.serde) and a
party (parties.serde) both encode and decode ``JoinReply.protocol`` and
``protocol_name`` with the functions here, and the scenario's
``[clustering]`` schema (protos.clustering) offers the same names.

A protocol is named by a string. The three built in have their own value
of the wire's ``Protocol`` enum (protos/ppcsim/v1/session.proto); any other
registered protocol (a plug-in, docs/writing-a-protocol.md) travels as
``PROTOCOL_PLUGIN`` with its name in ``protocol_name``, so that adding a
protocol needs no change to the wire.
"""

from __future__ import annotations

from protos.ppcsim.v1 import session_pb2

#: Each party uploads its disguised data once; the coordinator clusters it (coordinator.protocols.upload).
UPLOAD = "upload"
#: k-means by rounds of secure aggregation (coordinator.protocols.secagg).
SECURE = "secure_aggregation"
#: k-means as a secure multiparty computation (coordinator.protocols.mpc).
MPC = "mpc"
#: The built-in protocols, in the order the docs give them.
BUILT_IN = (UPLOAD, SECURE, MPC)

#: What a secure-aggregation session opens each round (``[clustering] reveal``): only the labels (an MPC argmin
#: over the secret-shared partial distances, the default) or every summed distance, which the arbiter reads.
LABELS, DISTANCES = "labels", "distances"
REVEALS = (LABELS, DISTANCES)
#: The engines of an MPC session (``[clustering] engine``): MPyC (the default) or SecretFlow's SPU.
MPYC, SPU = "mpyc", "spu"
ENGINES = (MPYC, SPU)

#: The wire's ``Protocol`` value of each built-in protocol; every other name is ``PROTOCOL_PLUGIN``.
WIRE: dict[str, session_pb2.Protocol] = {UPLOAD: session_pb2.PROTOCOL_UPLOAD, SECURE: session_pb2.PROTOCOL_SECURE_AGGREGATION,
        MPC: session_pb2.PROTOCOL_MPC}


def protocol_to_wire(name: str) -> tuple[session_pb2.Protocol, str]:
    """The ``Protocol`` enum value and the ``protocol_name`` text that carry protocol ``name``.

    A built-in protocol is its own enum value and an empty name (what a
    coordinator sent before plug-ins, byte for byte); any other is
    ``PROTOCOL_PLUGIN`` and its name.
    """
    if name in WIRE:
        return WIRE[name], ""
    return session_pb2.PROTOCOL_PLUGIN, name


def protocol_from_wire(value: int, name: str = "") -> str:
    """The protocol's name from a message's ``Protocol`` value and ``protocol_name`` text.

    ValueError naming the value when the enum value is one this side does not know, or ``PROTOCOL_PLUGIN``
    comes without a name.
    """
    if value == session_pb2.PROTOCOL_PLUGIN:
        if not name:
            raise ValueError("the protocol is PROTOCOL_PLUGIN but protocol_name is empty")
        return name
    for protocol, wire in WIRE.items():
        if wire == value:
            return protocol
    raise ValueError(f"unknown Protocol value {value}")


def engine_to_wire(engine: str) -> str:
    """``AlignmentHeader.mpc_engine``: empty for MPyC (as before SPU existed), else the engine's name."""
    return "" if engine == MPYC else engine


def engine_from_wire(text: str) -> str:
    """The engine's name from ``AlignmentHeader.mpc_engine`` (empty: MPyC)."""
    return text or MPYC
