"""One party's upload as the coordinator assembles it: every check on the stream, as early as it can be made."""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from coordinator.errors import InvalidArgument, SessionError
from coordinator.forms import check_upload
from coordinator.join import repeats
from coordinator.limits import ID_BYTES_PER_RECORD, Budget
from coordinator.matrix import FeatureMatrix, place
from coordinator.messages import ArraySpec, Chunk, IdPart, UploadHeader, UploadPart
from coordinator.sums import PairSums, PartySums
from coordinator.text import ERROR_BYTES, SHOWN_CHARS, clip, shown, size  # noqa: F401 - re-exported
from coordinator.types import Contribution
from protos.ids import ENCODINGS as ID_ENCODINGS
from protos.ids import INT_DELTAS as ID_INT_DELTAS
from protos.ids import LINES as ID_LINES
from protos.ids import MAX_ID_BYTES, PSEUDONYM_BYTES, RETIRED, TEXT_IDS, WINDOW, IdError, stored_bytes
from protos.ids import PSEUDONYMS as ID_PSEUDONYMS
from protos.ids import TEXT as ID_TEXT
from protos.ids import unpack as unpack_ids
from protos.serde import CHUNK_BYTES, ArrayAssembler, Layout, WireError

#: Default cap on what one party's upload may announce and send: array bytes plus id characters.
MAX_UPLOAD_BYTES = 16 << 30
#: Messages an upload may have beyond one per MESSAGE_BYTES of its announced size (header, ids, short tails).
MESSAGE_SLACK = 64
#: An upload's messages must carry this many bytes (array bytes and packed ids) on average, past MESSAGE_SLACK.
MESSAGE_BYTES = 1024
#: Bytes one id held as a Python string takes beyond its characters (object header and list slot).
PY_STR_BYTES = 64
#: Id encodings no longer taken, each with the reason a party is told.
RETIRED_IDS = {int(k): v for k, v in RETIRED.items()}


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


@dataclass(frozen=True)
class UploadRules:
    """What a session expects of one party's upload, from its spec: the header is checked against these.

    ``method`` and ``params``: the disguise and the public parameters the party must declare (None: not
    checked); ``dims``: the columns its rows must have (a drbt party's k); ``ids``: "pseudonymous" or "plain"
    (anything else: either); ``ids_only``: an upload of ids and no arrays (the alignment of secure
    aggregation)."""

    session: str = ""
    max_bytes: int = MAX_UPLOAD_BYTES
    chunk_bytes: int = CHUNK_BYTES
    ids_only: bool = False
    method: str | None = None
    params: Mapping[str, str] = field(default_factory=dict)
    dims: int | None = None
    ids: str = ""


@dataclass(frozen=True)
class UploadPlan:
    """One party's upload header, checked once (``plan_upload``): what its stream must bring, and nothing
    else of the header is read after it.

    ``nbytes``: each announced array's bytes; ``expected``: their sum; ``widths``: ``(records, columns of each
    array, dtype)`` when the arrays are rows of one dtype (what the session's matrix of features is allocated
    for), else None; ``max_messages``: the most messages the stream may have."""

    party: str
    method: str
    params: Mapping[str, str]
    n: int
    arrays: tuple[ArraySpec, ...]
    nbytes: tuple[int, ...]
    dissimilarity: bool
    id_encoding: int
    packed_id_bytes: int
    max_bytes: int
    chunk_bytes: int
    widths: tuple[int, tuple[int, ...], str] | None

    @property
    def expected(self) -> int:
        return sum(self.nbytes)

    @property
    def packed(self) -> bool:
        """Whether ids come packed in one block (any encoding but ID_TEXT)."""
        return self.id_encoding != ID_TEXT

    @property
    def max_messages(self) -> int:
        """One message per KiB of arrays and of packed ids past the slack; ID_TEXT may send one id a message."""
        return (MESSAGE_SLACK + len(self.arrays) + self.expected // MESSAGE_BYTES
                + (self.packed_id_bytes // MESSAGE_BYTES if self.packed else self.n))


def plan_upload(header: UploadHeader, rules: UploadRules = UploadRules()) -> UploadPlan:
    """Check an upload's header against the session's ``rules`` and against itself, before anything is
    allocated: every refusal names the party and the field at fault (SessionError; InvalidArgument for what
    the session expects)."""
    party, session = header.party, rules.session
    if rules.method is not None:
        if header.method != rules.method:
            raise InvalidArgument(f"party '{party}': the upload says method '{shown(header.method)}', but session "
                                  f"'{session}' expects '{rules.method}' from it")
        for key, value in rules.params.items():
            got = header.params.get(key)
            if got != value:
                raise InvalidArgument(f"party '{party}': the upload's parameter '{key}' is "
                                      f"{'missing' if got is None else repr(shown(got))}, but session '{session}' "
                                      f"expects {value!r}")
    for spec in header.arrays:
        if rules.dims is not None and spec.layout == Layout.ROWS and len(spec.shape) == 2 \
                and spec.shape[1] != rules.dims:
            raise InvalidArgument(f"party '{party}': array '{shown(spec.name)}' has {spec.shape[1]} columns, but "
                                  f"session '{session}' expects k = {rules.dims} from it")
    if header.id_encoding in RETIRED_IDS:
        raise InvalidArgument(f"party '{party}': {RETIRED_IDS[header.id_encoding]}")
    pseudonymous = header.id_encoding == ID_PSEUDONYMS
    if rules.ids == "pseudonymous" and not pseudonymous:
        raise InvalidArgument(f"party '{party}': session '{session}' takes pseudonymous ids (ID_PSEUDONYMS_AES), "
                              "never raw ids")
    if rules.ids == "plain" and pseudonymous:
        raise InvalidArgument(f"party '{party}': session '{session}' takes plain ids, not pseudonyms")
    n = int(header.n_ids)
    if rules.ids_only and header.arrays:
        raise SessionError(f"party '{party}': a secure-aggregation session takes an upload of ids only; this "
                           f"one announces {len(header.arrays)} array{'s' if len(header.arrays) > 1 else ''}")
    if not header.arrays and not rules.ids_only:
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
    dissimilarity = layouts == {Layout.CONDENSED}
    for spec in header.arrays:
        _check_shape(party, spec, n, dissimilarity)
    if dissimilarity:
        check_upload(party, dict(header.params), set(names))  # against its form's declaration
    nbytes = tuple(spec.nbytes for spec in header.arrays if spec.nbytes is not None)
    if len(nbytes) < len(header.arrays):  # sized where it was decoded (coordinator.wire.serde.spec_from_proto)
        spec = next(spec for spec in header.arrays if spec.nbytes is None)
        raise SessionError(f"party '{party}': {spec.unsized or f'array {shown(spec.name)!r} has no size'}")
    expected, max_bytes = sum(nbytes), rules.max_bytes
    if expected > max_bytes:
        raise SessionError(
            f"party '{party}': the header announces {expected} array bytes ({size(expected)}), "
            f"more than this session's max_upload_bytes of {max_bytes} ({size(max_bytes)})"
        )
    if header.id_encoding not in ID_ENCODINGS:
        raise SessionError(f"party '{party}': id_encoding {header.id_encoding} is not one this coordinator knows")
    if header.id_encoding != ID_TEXT and header.packed_id_bytes > max_bytes - expected:
        raise SessionError(
            f"party '{party}': {header.packed_id_bytes} packed id bytes and {expected} array bytes exceed "
            f"this session's max_upload_bytes of {max_bytes} ({size(max_bytes)})"
        )
    return UploadPlan(party, header.method, dict(header.params), n, tuple(header.arrays), nbytes, dissimilarity,
                      header.id_encoding, header.packed_id_bytes, max_bytes, rules.chunk_bytes,
                      _widths(header.arrays, n))


def _check_shape(party: str, spec: ArraySpec, n: int, dissimilarity: bool) -> None:
    shape = tuple(spec.shape)
    where = f"party '{party}', array '{shown(spec.name)}'"
    got = shape if len(shape) <= 4 else f"({', '.join(map(str, shape[:4]))}, ... {len(shape)} dimensions)"
    if dissimilarity:
        want = (n * (n - 1) // 2,)
        if shape != want:
            raise SessionError(f"{where}: a condensed matrix over {n} ids has shape {want}, got {got}")
    elif len(shape) != 2 or shape[0] != n or shape[1] < 1:
        raise SessionError(f"{where}: expected rows of shape ({n}, k), got {got}")


def _widths(specs: tuple[ArraySpec, ...], n: int) -> tuple[int, tuple[int, ...], str] | None:
    """``(records, columns of each array, dtype)`` of a feature upload whose arrays share one dtype, else None."""
    if not specs or any(s.layout != Layout.ROWS or len(s.shape) != 2 for s in specs):
        return None
    dtypes = {np.dtype(s.dtype).newbyteorder("=").str for s in specs}
    if len(dtypes) != 1:
        return None
    return n, tuple(int(s.shape[1]) for s in specs), dtypes.pop()


class Upload:
    """Assembles one party's upload stream, planned from its header (``plan_upload``): ids, then array chunks.

    Every check names the party and the field at fault, and each happens as
    early as it can: the header's announced sizes before any buffer is
    allocated (the plan), each message's ids and bytes against what was
    announced as it arrives, so that a stream that goes on past its
    announcement stops there.
    """

    def __init__(self, plan: UploadPlan, sums: PairSums | None = None, keep: bool = True,
                 budget: Budget | None = None, matrix: FeatureMatrix | None = None):
        """``budget``: the session's memory budget, from which every byte the upload stores is taken before it
        is allocated (and given back if the upload is refused).
        ``matrix``: the session's matrix of features, which feature chunks are written into as soon as it
        exists (``coordinator.matrix``), kept or not; the upload's arrays are taken from the budget
        at its header all the same, wherever they are stored."""
        self.plan = plan
        self.party, self.n, self.expected = plan.party, plan.n, plan.expected
        self.max_bytes, self.chunk_bytes, self.dissimilarity = plan.max_bytes, plan.chunk_bytes, plan.dissimilarity
        self.max_messages = plan.max_messages
        self.budget = budget if budget is not None else Budget("this upload", 0)
        self.held = 0  # bytes taken from the budget
        #: what the decoded ids may take, from the budget (coordinator.limits.ID_BYTES_PER_RECORD)
        self.id_budget = Budget(f"party '{self.party}'", self.n * ID_BYTES_PER_RECORD, parent=self.budget,
                                kind=f"id budget ({ID_BYTES_PER_RECORD} bytes a record, {self.n:,} records)")
        self.ids_held = 0  # bytes taken from the id budget
        # dissimilarities go into the session's running sums as they arrive; kept as well only when asked
        self.sums = sums if self.dissimilarity else None
        self.matrix = matrix if not self.dissimilarity and plan.arrays else None
        self.blocks: dict[int, np.ndarray] = {}  # array index -> its columns in the matrix, once written there
        self.adder: PartySums | None = None
        self.added = 0  # values added into the running sums (checked first, chunk by chunk)
        store = keep or self.sums is None
        if store:
            self._take(self.expected, "the upload's arrays")
        try:
            self.assemblers = [ArrayAssembler(spec, self.max_bytes, keep=store) for spec in plan.arrays]
        except WireError as exc:
            raise SessionError(f"party '{self.party}': {exc}") from None
        self.packed_ids = bytearray() if plan.packed else None
        self.ids: list[str] = []
        self._all_ids: np.ndarray | None = None
        self.id_chars = 0
        self.messages = 0
        if self.matrix is not None:  # a header that passed every check
            self.matrix.announce(self.party, plan.widths)

    def _take(self, n: int, what: str) -> None:
        """Take ``n`` bytes for ``what`` from the session's budget before allocating them."""
        self.budget.take(n, f"party '{self.party}': {what}")
        self.held += n

    def _give(self, n: int) -> None:
        n = min(n, self.held)
        self.budget.give(n)
        self.held -= n

    def _take_ids(self, n: int, what: str) -> None:
        """Take ``n`` bytes of ids as stored from the upload's id budget (and so from the session's)."""
        self.id_budget.take(n, f"party '{self.party}': {what}")
        self.ids_held += n

    @property
    def received(self) -> int:
        return sum(a.received for a in self.assemblers)

    def release(self) -> None:
        """Free the buffers of an upload that failed (what was received stays counted), and give their bytes
        back to the budget."""
        for a in getattr(self, "assemblers", ()):
            a.release()
        self.ids, self.packed_ids, self._all_ids = [], None, None
        self._give(self.held)
        self.id_budget.give(self.ids_held)
        self.ids_held = 0

    def add(self, part: UploadPart | object) -> None:
        """Take the next message of the stream (after the header), decoded (coordinator.wire.serde)."""
        self.messages += 1
        if self.messages > self.max_messages:
            raise SessionError(
                f"party '{self.party}': more than {self.max_messages} messages for an upload of {self.n} ids and "
                f"{self.expected} array bytes (send ids in IdChunks of many ids and array bytes in chunks of up "
                "to the chunk_bytes Join returned)"
            )
        if isinstance(part, IdPart) and not part.ids and not part.packed:
            raise SessionError(f"party '{self.party}': message {self.messages + 1} is an IdChunk with no ids")
        if isinstance(part, Chunk) and not part.data:
            raise SessionError(f"party '{self.party}': message {self.messages + 1} is an ArrayChunk with no bytes")
        if isinstance(part, IdPart) and self._all_ids is not None:
            raise SessionError(f"party '{self.party}': ids after the first array chunk (ids come first)")
        if isinstance(part, IdPart) and self.packed_ids is not None:
            self._add_packed(part, self.packed_ids)
        elif isinstance(part, IdPart):
            if part.packed:
                raise SessionError(f"party '{self.party}': packed ids in an upload that announced ids as text")
            ids = part.ids
            if len(self.ids) + len(ids) > self.n:
                raise SessionError(
                    f"party '{self.party}': {len(self.ids) + len(ids)} ids sent, more than the {self.n} announced"
                )
            for i, record in enumerate(ids):
                if "\x00" in record:
                    raise SessionError(f"party '{self.party}': record id {len(self.ids) + i} contains a NUL character")
            chars = sum(map(len, ids))
            self._take_ids(stored_bytes([len(i.encode()) if len(i) > 3 else 0 for i in ids]),
                           "ids as stored")
            self._take(PY_STR_BYTES * len(ids) + chars, "ids as text")
            self.id_chars += chars
            self.ids.extend(ids)
            self._check_total()
        elif isinstance(part, Chunk):
            if part.array >= len(self.assemblers):
                raise SessionError(
                    f"party '{self.party}': chunk for array {part.array}, which was not announced "
                    f"(the header announces {len(self.assemblers)} array{'s' if len(self.assemblers) > 1 else ''})"
                )
            got = len(part.data)
            if got > self.chunk_bytes:
                raise SessionError(f"party '{self.party}': a chunk of {got} bytes for array {part.array}; each slice "
                                   f"is at most chunk_bytes ({self.chunk_bytes}, as Join returned)")
            if self.sums is not None and self.adder is None:
                self._attach(self.sums)
            if self.matrix is not None and part.array not in self.blocks:
                self._into_matrix(part.array)
            try:
                self.assemblers[part.array].add(part, part.data)
            except WireError as exc:
                raise SessionError(f"party '{self.party}': {exc}") from None
        elif isinstance(part, UploadHeader):
            raise SessionError(f"party '{self.party}': a second header in the upload")
        else:
            raise SessionError(f"party '{self.party}': an empty UploadMessage (neither ids nor an array chunk)")

    def _add_packed(self, chunk: IdPart, packed: bytearray) -> None:
        if chunk.ids:
            raise SessionError(f"party '{self.party}': ids as text in an upload that announced packed ids")
        if len(chunk.packed) > self.chunk_bytes:
            raise SessionError(f"party '{self.party}': a slice of {len(chunk.packed)} packed id bytes; each is at most "
                               f"chunk_bytes ({self.chunk_bytes}, as Join returned)")
        if len(packed) + len(chunk.packed) > self.plan.packed_id_bytes:
            raise SessionError(
                f"party '{self.party}': more packed id bytes than the {self.plan.packed_id_bytes} announced"
            )
        self._take(len(chunk.packed), "packed ids")
        packed += chunk.packed  # in place: packed is self.packed_ids

    def _attach(self, sums: PairSums) -> None:
        """Before the first chunk of dissimilarities: the ids, complete, and an adder into the session's sums."""
        have = len(self.ids) if self.packed_ids is None else len(self.packed_ids)
        want = self.n if self.packed_ids is None else self.plan.packed_id_bytes
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
        block = self.matrix.block(self.party, self.plan.widths, index)
        if block is not None:
            # the upload's arrays were taken from the budget at its header, wherever they are stored; what came
            # so far is, for the move, in its buffer and in the matrix at once
            moving = self.assemblers[index].received
            self._take(moving, "its columns moved into the session's matrix")
            try:
                self.blocks[index] = block
                self.assemblers[index].redirect(lambda first, values: place(block, first, values))
            finally:
                self._give(moving)

    def _add_values(self, adder: PartySums, name: str, first: int, values: np.ndarray) -> None:
        bad = nonfinite(values)
        if bad is not None:
            raise SessionError(f"party '{self.party}', array '{shown(name)}': NaN or infinite values "
                               f"(the first at index ({first + int(np.argmax(bad))},))")
        adder.add(name, first, values)
        self.added += len(values)

    def _distinct_ids(self) -> np.ndarray:
        """The uploaded ids, once all have come; SessionError if any repeats."""
        if self._all_ids is None:
            ids = self._ids()
            if repeats(ids):
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
            listed = self.held_for_text()  # stored bytes were taken as the ids came
            ids = np.array(self.ids, dtype=TEXT_IDS)
            self.ids = []
            self._give(listed)
            return ids
        if len(self.packed_ids) != self.plan.packed_id_bytes:
            raise SessionError(f"party '{self.party}': upload ended after {len(self.packed_ids)} of "
                               f"{self.plan.packed_id_bytes} packed id bytes")
        block = self.packed_ids  # read where it was received: no bytes() copy of the block
        stored, transient = self._decoded_size(block)
        self._take_ids(stored, "ids as decoded and stored")
        self._take(transient, "ids while decoded")
        try:
            ids = unpack_ids(self.plan.id_encoding, block, self.n)
        except IdError as exc:
            raise SessionError(f"party '{self.party}': {exc}") from None
        finally:
            self._give(transient)
        self.packed_ids = bytearray()  # unpacked: the block is not needed again (read once: _distinct_ids keeps ids)
        self._give(len(block))
        return ids

    def held_for_text(self) -> int:
        """Bytes taken for the ids received as text, held as Python strings until decoded."""
        return PY_STR_BYTES * len(self.ids) + self.id_chars

    def _decoded_size(self, block: bytearray) -> tuple[int, int]:
        """Bytes the packed ids will take once decoded, and the bytes decoding takes on the way; the block is
        inflated a piece at a time (zlib's ``decompress(data, max_length)``), never held whole."""
        n, encoding = self.n, self.plan.id_encoding
        if encoding == ID_INT_DELTAS:
            return n * 8, n * 8
        if encoding != ID_LINES:
            return n * PSEUDONYM_BYTES, 0
        total, run, stored = 0, 0, 0
        inflater, view = zlib.decompressobj(), memoryview(block)
        limit = n * (MAX_ID_BYTES + 1)
        try:
            # fed 64 KiB at a time, so that what zlib leaves unconsumed (a copy) stays small
            for start in range(0, len(view), 1 << 16):
                data: bytes | memoryview = view[start : start + (1 << 16)]
                while data and total <= limit:
                    piece = inflater.decompress(data, 1 << 20)
                    data = inflater.unconsumed_tail
                    if not piece:
                        break
                    total += len(piece)
                    breaks = np.flatnonzero(np.frombuffer(piece, dtype=np.uint8) == 10)
                    if len(breaks):  # the lengths of the lines this piece ends
                        lengths = np.diff(breaks, prepend=-1 - run) - 1
                        stored += stored_bytes(lengths)
                        run = len(piece) - int(breaks[-1]) - 1
                    else:
                        run += len(piece)
                if total > limit:
                    break
        except zlib.error as exc:
            raise SessionError(f"party '{self.party}': packed ids do not decompress: {exc}") from None
        if total > limit:
            raise SessionError(f"party '{self.party}': packed ids inflate past {limit} bytes, more than {n} ids of "
                               f"at most {MAX_ID_BYTES} bytes can take")
        stored += stored_bytes(np.array([run]))  # the last line
        # the inflated text, and a window of it as Python strings on its way into the array (protos.ids._lines)
        return stored, total + 4 * WINDOW + PY_STR_BYTES * min(n, WINDOW)

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
        # dissimilarities were checked chunk by chunk, and so were the others, for whether all are finite: only an
        # array that is not is looked through for where
        finite = {a.spec.name for a in self.assemblers if a.finite}
        checked = {k: v for k, v in arrays.items() if k not in finite} if self.sums is None else {}
        for name, arr in checked.items():
            bad = nonfinite(arr)
            if bad is not None:
                first = tuple(int(i) for i in np.unravel_index(np.argmax(bad), arr.shape))
                raise SessionError(
                    f"party '{self.party}', array '{shown(name)}': NaN or infinite values "
                    f"({int(bad.sum())} of {arr.size}, the first at index {first})"
                )
        names = tuple(a.spec.name for a in self.assemblers)
        return Contribution(self.party, self.plan.method, dict(self.plan.params), ids, arrays, self.dissimilarity,
                            names, release=self.release)
