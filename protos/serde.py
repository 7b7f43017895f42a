"""Conversion between numpy arrays and their wire form (ArraySpec + ArrayChunk).

The one place where arrays become bytes and bytes become arrays. Arrays travel
as ``{dtype, shape, raw little-endian bytes}`` in chunks; nothing is pickled.
"""

from __future__ import annotations

import math
import mmap
from collections.abc import Iterator, Sequence
from typing import Protocol

import numpy as np

from protos.ppcsim.v1 import array_pb2

#: Default largest slice of array bytes in one message: far below gRPC's 4 MiB.
CHUNK_BYTES = 1 << 20

#: dtypes accepted on the wire (always little-endian).
WIRE_DTYPES = ("<f8", "<f4", "<i4")

Layout = array_pb2.Layout


class SpecLike(Protocol):
    """What an ArraySpec tells (the message, or a decoded copy of it)."""

    @property
    def name(self) -> str: ...
    @property
    def dtype(self) -> str: ...
    @property
    def shape(self) -> Sequence[int]: ...


class ChunkLike(Protocol):
    """What an ArrayChunk tells (the message, or a decoded copy of it)."""

    @property
    def offset(self) -> int: ...
    @property
    def data(self) -> bytes | memoryview: ...


class WireError(ValueError):
    """A message does not describe or carry an array correctly."""


def wire_dtype(arr: np.ndarray, dtype: str | None = None) -> np.dtype:
    """The little-endian dtype ``arr`` travels as (as ``dtype`` when given); raises WireError if unsupported."""
    wanted = np.dtype(dtype or arr.dtype)
    dt = wanted.newbyteorder("<")
    if dt.str not in WIRE_DTYPES:
        raise WireError(f"dtype {wanted} cannot be sent; use one of {', '.join(WIRE_DTYPES)}")
    return dt


def array_spec(name: str, arr: np.ndarray, layout: Layout, dtype: str | None = None) -> array_pb2.ArraySpec:
    """The ArraySpec announcing ``arr`` under ``name``, sent as ``dtype`` (default: its own)."""
    dt = wire_dtype(arr, dtype)
    return array_pb2.ArraySpec(name=name, dtype=dt.str, shape=list(arr.shape), layout=layout)


def array_slices(arr: np.ndarray, chunk_bytes: int = CHUNK_BYTES,
                 dtype: str | None = None) -> Iterator[tuple[int, bytes | memoryview]]:
    """Yield ``arr``'s bytes as ``(offset, bytes)`` pieces of at most ``chunk_bytes`` bytes each, in order:
    the contents of its ArrayChunks. A piece that needs no conversion is a view of the array's bytes (valid
    while the array is not changed), not a copy.

    With ``dtype`` (e.g. float32 for a float64 array), each piece's values are
    converted as it is made, so the whole array is never held twice.
    """
    if chunk_bytes <= 0:
        raise WireError(f"chunk_bytes must be positive, got {chunk_bytes}")
    dt = wire_dtype(arr, dtype)
    if dt != arr.dtype:
        flat = arr.reshape(-1)
        step = max(chunk_bytes // dt.itemsize, 1)
        for start in range(0, len(flat), step):
            yield start * dt.itemsize, flat[start : start + step].astype(dt).tobytes()
        return
    data = np.ascontiguousarray(arr, dtype=dt)
    view = data.reshape(-1).view(np.uint8).data
    for offset in range(0, len(view), chunk_bytes):
        yield offset, view[offset : offset + chunk_bytes]


def array_pieces(arr: np.ndarray, chunk_bytes: int = CHUNK_BYTES, dtype: str | None = None) -> Iterator[tuple[int, bytes]]:
    """array_slices's pieces, each its own bytes object."""
    for offset, data in array_slices(arr, chunk_bytes, dtype):
        yield offset, bytes(data)  # a converted piece is bytes already: bytes() returns it as it is


def array_chunks(
    index: int, arr: np.ndarray, chunk_bytes: int = CHUNK_BYTES, dtype: str | None = None
) -> Iterator[array_pb2.ArrayChunk]:
    """Yield ``arr``'s bytes as ArrayChunks of at most ``chunk_bytes`` bytes each, in order (see array_pieces).

    An ArrayChunk made here and then wrapped in another message is copied
    again (upb copies a sub-message, at ~200 us per MiB): a big stream fills
    its messages' chunk fields in place from array_pieces instead.
    """
    for offset, data in array_pieces(arr, chunk_bytes, dtype):
        yield array_pb2.ArrayChunk(array=index, offset=offset, data=data)


def labels_spec(n: int) -> array_pb2.ArraySpec:
    """The spec of a result's labels: n int32 values, one per uploaded id."""
    return array_pb2.ArraySpec(name="labels", dtype="<i4", shape=[n], layout=Layout.ROWS)


def spec_nbytes(spec: SpecLike) -> int:
    """Bytes the array described by ``spec`` occupies; raises WireError for a bad spec.

    Computed with Python integers, so a shape whose product overflows int64
    (e.g. ``[2**32, 2**32]``) gives its true, huge size instead of wrapping.
    """
    if spec.dtype not in WIRE_DTYPES:
        raise WireError(f"array '{spec.name}': dtype '{spec.dtype}' is not one of {', '.join(WIRE_DTYPES)}")
    if any(n < 0 for n in spec.shape):
        raise WireError(f"array '{spec.name}': negative dimension in shape {list(spec.shape)}")
    return math.prod(int(n) for n in spec.shape) * np.dtype(spec.dtype).itemsize


class ArrayAssembler:
    """Rebuilds one array from its in-order chunks into a buffer allocated once.

    ``limit``, when given, is the largest array (in bytes) the assembler
    accepts: a spec announcing more is refused before anything is allocated.
    The buffer is an anonymous memory map: zero-filled lazily by the operating
    system, so memory is committed as bytes arrive, not when an array is
    announced (and, unlike numpy's own allocation, which asks for huge pages,
    each page costs little to commit). With ``keep=False`` nothing is stored:
    each chunk is checked, counted and handed on, as whole elements, to ``sink``.
    """

    def __init__(self, spec: SpecLike, limit: int | None = None, *, keep: bool = True, sink=None):
        self.spec = spec
        self.nbytes = spec_nbytes(spec)
        if limit is not None and self.nbytes > limit:
            raise WireError(f"array '{spec.name}': {self.nbytes} bytes announced, more than the limit of {limit} bytes")
        try:
            memory = mmap.mmap(-1, self.nbytes) if self.nbytes and keep else bytearray()
        except (OSError, OverflowError, MemoryError):
            raise WireError(f"array '{spec.name}': cannot allocate {self.nbytes} bytes") from None
        self._buffer = np.frombuffer(memory, dtype=np.uint8) if keep else None
        #: Called as ``sink(first, values)`` with each run of whole elements as it completes.
        self.sink = sink
        self._carry = b""  # the start of an element split across two chunks
        self.received = 0
        self._float = np.dtype(spec.dtype).kind == "f"
        #: Whether every whole element received so far is finite (checked chunk by chunk, while in cache).
        self.finite = True

    def add(self, chunk: ChunkLike, data: bytes | memoryview | None = None) -> int:
        """Copy ``chunk`` into place (and pass its elements to the sink); returns its payload size in bytes.

        ``data`` is ``chunk.data`` when the caller has read it already."""
        data = chunk.data if data is None else data
        size = len(data)
        if chunk.offset != self.received:
            raise WireError(
                f"array '{self.spec.name}': chunk at byte {chunk.offset} but {self.received} bytes "
                "received so far (chunks must arrive in order, without gaps)"
            )
        if self.received + size > self.nbytes:
            raise WireError(
                f"array '{self.spec.name}': {self.received + size} bytes sent for an array of {self.nbytes} bytes"
            )
        if self._buffer is not None:
            self._buffer[self.received : self.received + size] = np.frombuffer(data, dtype=np.uint8)
            if self._float and self.finite:  # the elements this chunk completes
                itemsize = np.dtype(self.spec.dtype).itemsize
                done = self._buffer[self.received // itemsize * itemsize : (self.received + size) // itemsize * itemsize]
                self._see(done.view(self.spec.dtype))
        if self.sink is not None:
            self._pass_on(data)
        self.received += size
        return size

    def _see(self, values: np.ndarray) -> None:
        """Note whether ``values`` are all finite: one sum first, a mask only when the sum is not finite (NaN or
        an infinity among them, or finite values whose sum overflows)."""
        with np.errstate(over="ignore", invalid="ignore"):
            if not np.isfinite(np.sum(values)):
                self.finite = bool(np.isfinite(values).all())

    def _pass_on(self, data: bytes | memoryview) -> None:
        itemsize = np.dtype(self.spec.dtype).itemsize
        first = (self.received - len(self._carry)) // itemsize
        if self._carry:
            data = self._carry + data
        whole = len(data) // itemsize * itemsize
        self._carry = bytes(data[whole:])
        if whole:
            values = np.frombuffer(data, dtype=self.spec.dtype, count=whole // itemsize)
            if self._float and self.finite and self._buffer is None:  # (a kept buffer's were seen in add)
                self._see(values)
            self.sink(first, values)

    @property
    def kept(self) -> bool:
        """Whether the bytes are stored here (else only passed to the sink)."""
        return self._buffer is not None

    @property
    def complete(self) -> bool:
        return self.received == self.nbytes

    def release(self) -> None:
        """Give the buffer back (an upload that failed); ``received`` keeps counting what came."""
        self._buffer = None

    def redirect(self, sink) -> None:
        """From now on hand every chunk to ``sink`` only (as ``keep=False`` does): the whole elements stored so far
        go to it first, and the buffer is given back."""
        if self._buffer is not None and self.received:
            itemsize = np.dtype(self.spec.dtype).itemsize
            whole = self.received // itemsize * itemsize
            if whole:
                sink(0, self._buffer[:whole].view(self.spec.dtype))
            self._carry = bytes(self._buffer[whole : self.received])
        self._buffer = None
        self.sink = sink

    def array(self) -> np.ndarray:
        """The assembled array in native byte order; raises WireError if bytes are missing."""
        if not self.complete:
            raise WireError(f"array '{self.spec.name}': {self.received} of {self.nbytes} bytes received")
        if self._buffer is None:
            raise WireError(f"array '{self.spec.name}': its bytes were passed on as they came, not kept")
        dt = np.dtype(self.spec.dtype)
        return self._buffer.view(dt).reshape(tuple(self.spec.shape)).astype(dt.newbyteorder("="), copy=False)
