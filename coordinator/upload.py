"""One party's upload as the coordinator assembles it: every check on the stream, as early as it can be made."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from coordinator.errors import SessionError
from coordinator.forms import check_upload
from coordinator.matrix import FeatureMatrix, place
from coordinator.sums import PairSums, PartySums
from coordinator.text import ERROR_BYTES, SHOWN_CHARS, clip, shown, size  # noqa: F401 - re-exported
from coordinator.types import Contribution
from protos.ids import ENCODINGS as ID_ENCODINGS
from protos.ids import TEXT as ID_TEXT
from protos.ids import IdError
from protos.ids import unpack as unpack_ids
from protos.ppcsim.v1 import session_pb2
from protos.serde import ArrayAssembler, Layout, WireError, spec_nbytes

#: Default cap on what one party's upload may announce and send: array bytes plus id characters.
MAX_UPLOAD_BYTES = 16 << 30
#: Messages an upload may have beyond one per MESSAGE_BYTES of its announced size (header, ids, short tails).
MESSAGE_SLACK = 64
#: An upload's messages must carry this many bytes (array bytes and ids) on average, past MESSAGE_SLACK.
MESSAGE_BYTES = 1024
@dataclass(frozen=True, slots=True)
class Received:
    """One UploadMessage as it arrived: the message, the bytes it took on the wire, and its chunk's bytes,
    read out of the message once (each read of a protobuf bytes field copies it)."""

    message: session_pb2.UploadMessage
    size: int
    data: bytes | None = None

    @classmethod
    def of(cls, message: session_pb2.UploadMessage, size: int) -> Received:
        return cls(message, size, message.chunk.data if message.WhichOneof("part") == "chunk" else None)

    @classmethod
    def parse(cls, raw: bytes) -> Received:
        """gRPC's request deserializer for Upload: the message and its size as received, never re-serialised."""
        return cls.of(session_pb2.UploadMessage.FromString(raw), len(raw))

    @classmethod
    def made(cls, message: session_pb2.UploadMessage) -> Received:
        """A message made in this process (the in-process simulation, tests): sized by serialising it."""
        return cls.of(message, message.ByteSize())

    @classmethod
    def stream(cls, messages: Iterable[session_pb2.UploadMessage]) -> Iterator[Received]:
        return (cls.made(m) for m in messages)


def nonfinite(values: np.ndarray) -> np.ndarray | None:
    """Where ``values`` are NaN or infinite (a mask), or None if nowhere.

    One sum first, with no mask: a NaN or an infinity makes the sum one too, so
    the mask is built only then (or when finite values overflow the sum).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.sum(values)):
            return None
    bad = ~np.isfinite(values)
    return bad if bad.any() else None


class BrokenStream(Exception):
    """The transport cut an upload short: the party cancelled, went away, or sent an undecodable message."""


class Upload:
    """Assembles one party's upload stream: the header, then ids and array chunks.

    Every check names the party and the field at fault, and each happens as
    early as it can: the header's announced sizes before any buffer is
    allocated, each message's ids and bytes against what was announced as it
    arrives, so that a stream that goes on past its announcement stops there.
    """

    def __init__(self, party: str, header: session_pb2.UploadHeader, max_bytes: int = MAX_UPLOAD_BYTES,
                 sums: PairSums | None = None, keep: bool = True, ids_only: bool = False,
                 matrix: FeatureMatrix | None = None):
        """``ids_only``: the upload may carry ids and no arrays (the alignment of secure aggregation).
        ``matrix``: the session's matrix of features, which feature chunks are written into as soon as it
        exists (``coordinator.matrix``), when uploads are not kept."""
        self.party, self.header, self.max_bytes = party, header, max_bytes
        self.n = int(header.n_ids)
        if not header.arrays and not ids_only:
            raise SessionError(f"party '{party}': the upload announces no arrays")
        names = [a.name for a in header.arrays]
        if len(set(names)) != len(names):
            repeated = next(n for n in names if names.count(n) > 1)
            raise SessionError(f"party '{party}': array name '{shown(repeated)}' is announced twice")
        for spec in header.arrays:
            if spec.layout not in (Layout.ROWS, Layout.CONDENSED):
                raise SessionError(
                    f"party '{party}', array '{shown(spec.name)}': layout {spec.layout} is neither ROWS nor CONDENSED"
                )
        layouts = {spec.layout for spec in header.arrays}
        if len(layouts) > 1:
            raise SessionError(f"party '{party}': an upload sends either rows or condensed matrices, not both")
        self.dissimilarity = layouts == {Layout.CONDENSED}
        for spec in header.arrays:
            self._check_shape(spec)
        if self.dissimilarity:
            check_upload(party, dict(header.params), set(names))  # against its form's declaration
        try:
            sizes = [spec_nbytes(spec) for spec in header.arrays]
        except WireError as exc:
            raise SessionError(f"party '{party}': {exc}") from None
        self.expected = sum(sizes)
        if self.expected > max_bytes:
            raise SessionError(
                f"party '{party}': the header announces {self.expected} array bytes ({size(self.expected)}), "
                f"more than this session's max_upload_bytes of {max_bytes} ({size(max_bytes)})"
            )
        # dissimilarities go into the session's running sums as they arrive; kept as well only when asked
        self.sums = sums if self.dissimilarity else None
        self.matrix = matrix if not self.dissimilarity and header.arrays else None
        self.blocks: dict[int, np.ndarray] = {}  # array index -> its columns in the matrix, once written there
        self.adder: PartySums | None = None
        store = keep or self.sums is None
        try:
            self.assemblers = [ArrayAssembler(spec, max_bytes, keep=store) for spec in header.arrays]
        except WireError as exc:
            raise SessionError(f"party '{party}': {exc}") from None
        if header.id_encoding not in ID_ENCODINGS:
            raise SessionError(f"party '{party}': id_encoding {header.id_encoding} is not one this coordinator knows")
        self.packed_ids = bytearray() if header.id_encoding != ID_TEXT else None
        if self.packed_ids is not None and header.packed_id_bytes > max_bytes - self.expected:
            raise SessionError(
                f"party '{party}': {header.packed_id_bytes} packed id bytes and {self.expected} array bytes exceed "
                f"this session's max_upload_bytes of {max_bytes} ({size(max_bytes)})"
            )
        self.ids: list[str] = []
        self._all_ids: np.ndarray | None = None
        self.id_chars = 0
        self.messages = 0
        self.max_messages = MESSAGE_SLACK + len(header.arrays) + (self.expected + self.n) // MESSAGE_BYTES
        if self.matrix is not None:  # a header that passed every check
            self.matrix.announce(party, header)

    def _check_shape(self, spec) -> None:
        shape = tuple(spec.shape)
        where = f"party '{self.party}', array '{shown(spec.name)}'"
        got = shape if len(shape) <= 4 else f"({', '.join(map(str, shape[:4]))}, ... {len(shape)} dimensions)"
        if self.dissimilarity:
            want = (self.n * (self.n - 1) // 2,)
            if shape != want:
                raise SessionError(f"{where}: a condensed matrix over {self.n} ids has shape {want}, got {got}")
        elif len(shape) != 2 or shape[0] != self.n or shape[1] < 1:
            raise SessionError(f"{where}: expected rows of shape ({self.n}, k), got {got}")

    @property
    def received(self) -> int:
        return sum(a.received for a in self.assemblers)

    def release(self) -> None:
        """Free the buffers of an upload that failed (what was received stays counted)."""
        for a in self.assemblers:
            a.release()

    def add(self, message: session_pb2.UploadMessage, data: bytes | None = None) -> None:
        """Take the next message of the stream (``data``: its chunk's bytes, when already read out)."""
        self.messages += 1
        if self.messages > self.max_messages:
            raise SessionError(
                f"party '{self.party}': more than {self.max_messages} messages for an upload of {self.n} ids and "
                f"{self.expected} array bytes (send ids in IdChunks of many ids and array bytes in chunks of up "
                "to the chunk_bytes Join returned)"
            )
        part = message.WhichOneof("part")
        if part == "ids" and self._all_ids is not None:
            raise SessionError(f"party '{self.party}': ids after the first array chunk (ids come first)")
        if part == "ids" and self.packed_ids is not None:
            self._add_packed(message.ids, self.packed_ids)
        elif part == "ids":
            if message.ids.packed:
                raise SessionError(f"party '{self.party}': packed ids in an upload that announced ids as text")
            ids = message.ids.ids
            if len(self.ids) + len(ids) > self.n:
                raise SessionError(
                    f"party '{self.party}': {len(self.ids) + len(ids)} ids sent, more than the {self.n} announced"
                )
            for i, record in enumerate(ids):
                if "\x00" in record:
                    raise SessionError(f"party '{self.party}': record id {len(self.ids) + i} contains a NUL character")
            self.id_chars += sum(map(len, ids))
            self.ids.extend(ids)
            self._check_total()
        elif part == "chunk":
            chunk = message.chunk
            if chunk.array >= len(self.assemblers):
                raise SessionError(
                    f"party '{self.party}': chunk for array {chunk.array}, which was not announced "
                    f"(the header announces {len(self.assemblers)} array{'s' if len(self.assemblers) > 1 else ''})"
                )
            if self.sums is not None and self.adder is None:
                self._attach(self.sums)
            if self.matrix is not None and chunk.array not in self.blocks:
                self._into_matrix(chunk.array)
            try:
                self.assemblers[chunk.array].add(chunk, data)
            except WireError as exc:
                raise SessionError(f"party '{self.party}': {exc}") from None
        elif part == "header":
            raise SessionError(f"party '{self.party}': a second header in the upload")
        else:
            raise SessionError(f"party '{self.party}': an empty UploadMessage (neither ids nor an array chunk)")

    def _add_packed(self, chunk: session_pb2.IdChunk, packed: bytearray) -> None:
        if chunk.ids:
            raise SessionError(f"party '{self.party}': ids as text in an upload that announced packed ids")
        if len(packed) + len(chunk.packed) > self.header.packed_id_bytes:
            raise SessionError(
                f"party '{self.party}': more packed id bytes than the {self.header.packed_id_bytes} announced"
            )
        packed += chunk.packed  # in place: packed is self.packed_ids

    def _attach(self, sums: PairSums) -> None:
        """Before the first chunk of dissimilarities: the ids, complete, and an adder into the session's sums."""
        have = len(self.ids) if self.packed_ids is None else len(self.packed_ids)
        want = self.n if self.packed_ids is None else self.header.packed_id_bytes
        if have != want:
            raise SessionError(f"party '{self.party}': array chunks before all {self.n} record ids "
                               "(an upload of dissimilarities sends its ids first)")
        adder = self.adder = sums.attach(self._distinct_ids())
        for a in self.assemblers:
            a.sink = lambda first, values, name=a.spec.name: self._add_values(adder, name, first, values)

    def _into_matrix(self, index: int) -> None:
        """Write array ``index`` into its columns of the session's matrix from now on, when the matrix exists:
        what came so far moves there, and the upload's own buffer is given back."""
        assert self.matrix is not None
        block = self.matrix.block(self.party, self.header, index)
        if block is not None:
            self.blocks[index] = block
            self.assemblers[index].redirect(lambda first, values: place(block, first, values))

    def _add_values(self, adder: PartySums, name: str, first: int, values: np.ndarray) -> None:
        bad = nonfinite(values)
        if bad is not None:
            raise SessionError(f"party '{self.party}', array '{shown(name)}': NaN or infinite values "
                               f"(the first at index ({first + int(np.argmax(bad))},))")
        adder.add(name, first, values)

    def _distinct_ids(self) -> np.ndarray:
        """The uploaded ids, once all have come; SessionError if any repeats."""
        if self._all_ids is None:
            ids = self._ids()
            if ids.dtype.kind == "i":  # integers: increasing ones (the usual case) are distinct without a sort
                repeats = not np.all(ids[1:] > ids[:-1]) and len(np.unique(ids)) != len(ids)
            else:  # a hash set: sorting a million strings takes far longer
                repeats = len(set(ids.tolist())) != len(ids)
            if repeats:
                unique, counts = np.unique(ids, return_counts=True)
                raise SessionError(
                    f"party '{self.party}': duplicate record ids in the upload "
                    f"('{shown(str(unique[np.argmax(counts > 1)]))}' and {int((counts > 1).sum()) - 1} more repeat)"
                )
            self._all_ids = ids
        return self._all_ids

    def _ids(self) -> np.ndarray:
        """The uploaded ids (text, or int64 when sent as int deltas), once the stream has ended."""
        if self.packed_ids is None:
            if len(self.ids) != self.n:
                raise SessionError(f"party '{self.party}': upload ended after {len(self.ids)} of {self.n} ids")
            return np.array(self.ids, dtype=str)
        if len(self.packed_ids) != self.header.packed_id_bytes:
            raise SessionError(f"party '{self.party}': upload ended after {len(self.packed_ids)} of "
                               f"{self.header.packed_id_bytes} packed id bytes")
        try:
            ids = unpack_ids(self.header.id_encoding, self.packed_ids, self.n)  # no bytes() copy of the block
        except IdError as exc:
            raise SessionError(f"party '{self.party}': {exc}") from None
        self.packed_ids = bytearray()  # unpacked: the block is not needed again (read once: _distinct_ids keeps ids)
        return ids

    def _check_total(self) -> None:
        if self.id_chars + self.expected > self.max_bytes:
            raise SessionError(
                f"party '{self.party}': {self.id_chars} characters of ids and {self.expected} array bytes exceed "
                f"this session's max_upload_bytes of {self.max_bytes} ({size(self.max_bytes)})"
            )

    def finish(self) -> Contribution:
        ids = self._distinct_ids()
        if self.received != self.expected:
            missing = next(a for a in self.assemblers if not a.complete)
            raise SessionError(
                f"party '{self.party}': upload ended after {self.received} of {self.expected} bytes "
                f"(array '{shown(missing.spec.name)}': {missing.received} of {missing.nbytes} bytes)"
            )
        if self.sums is not None and self.adder is None:
            self._attach(self.sums)  # an upload with no chunk (one record) still fixes or joins the reference
        arrays = {a.spec.name: self.blocks[i] if i in self.blocks else a.array()
                  for i, a in enumerate(self.assemblers) if a.kept or i in self.blocks}
        checked = arrays if self.sums is None else {}  # dissimilarities were checked chunk by chunk
        for name, arr in checked.items():
            bad = nonfinite(arr)
            if bad is not None:
                first = tuple(int(i) for i in np.unravel_index(np.argmax(bad), arr.shape))
                raise SessionError(
                    f"party '{self.party}', array '{shown(name)}': NaN or infinite values "
                    f"({int(bad.sum())} of {arr.size}, the first at index {first})"
                )
        names = tuple(a.spec.name for a in self.assemblers)
        return Contribution(self.party, self.header.method, dict(self.header.params), ids, arrays, self.dissimilarity,
                            names, release=self.release)
