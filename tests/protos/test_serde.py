"""protos.serde: arrays to chunks and back, chunk sizes, and the errors of a bad stream."""

from __future__ import annotations

import numpy as np
import pytest

from protos.ppcsim.v1 import array_pb2
from protos.serde import (
    CHUNK_BYTES,
    ArrayAssembler,
    Layout,
    WireError,
    array_chunks,
    array_spec,
    labels_spec,
    spec_nbytes,
)

GRPC_DEFAULT_LIMIT = 4 * 1024 * 1024


def roundtrip(name, arr, layout, chunk_bytes):
    spec = array_spec(name, arr, layout)
    # the spec itself travels as bytes too
    spec = array_pb2.ArraySpec.FromString(spec.SerializeToString())
    asm = ArrayAssembler(spec)
    chunks = list(array_chunks(3, arr, chunk_bytes))
    total = 0
    for chunk in chunks:
        chunk = array_pb2.ArrayChunk.FromString(chunk.SerializeToString())
        total += asm.add(chunk)
    assert asm.complete
    return asm.array(), chunks, total


def make_arrays():
    rng = np.random.default_rng(0)
    return {
        "f8-2d": (rng.normal(size=(37, 5)), Layout.ROWS),
        "f4-2d": (rng.normal(size=(9, 11)).astype(np.float32), Layout.ROWS),
        "i4-2d": (rng.integers(-(2**31), 2**31 - 1, size=(13, 3), dtype=np.int32), Layout.ROWS),
        "f8-condensed": (rng.random(45), Layout.CONDENSED),
        "f4-condensed": (rng.random(28).astype(np.float32), Layout.CONDENSED),
        "i4-labels": (rng.integers(-1, 5, size=17).astype(np.int32), Layout.ROWS),
        "f8-empty-2d": (np.empty((0, 4)), Layout.ROWS),
        "f8-empty-1d": (np.empty(0), Layout.CONDENSED),
    }


@pytest.mark.parametrize("name", sorted(make_arrays()))
@pytest.mark.parametrize("chunk_bytes", [7, 64, 1000, CHUNK_BYTES])
def test_roundtrip(name, chunk_bytes):
    arr, layout = make_arrays()[name]
    out, chunks, total = roundtrip(name, arr, layout, chunk_bytes)
    assert out.dtype == arr.dtype
    assert out.shape == arr.shape
    np.testing.assert_array_equal(out, arr)
    assert total == arr.nbytes
    assert len(chunks) == -(-arr.nbytes // chunk_bytes)  # ceil; zero chunks for an empty array
    assert all(len(c.data) <= chunk_bytes for c in chunks)
    assert all(c.array == 3 for c in chunks)
    assert [c.offset for c in chunks] == list(range(0, arr.nbytes, chunk_bytes))


def test_size_not_multiple_of_chunk_has_short_tail():
    arr = np.arange(10, dtype=np.float64)  # 80 bytes
    chunks = list(array_chunks(0, arr, 24))
    assert [len(c.data) for c in chunks] == [24, 24, 24, 8]
    asm = ArrayAssembler(array_spec("x", arr, Layout.ROWS))
    for c in chunks:
        asm.add(c)
    np.testing.assert_array_equal(asm.array(), arr)


def test_spec_describes_array():
    arr = np.zeros((6, 2), dtype=np.float32)
    spec = array_spec("data", arr, Layout.ROWS)
    assert (spec.name, spec.dtype, list(spec.shape), spec.layout) == ("data", "<f4", [6, 2], Layout.ROWS)
    assert spec_nbytes(spec) == 48
    assert labels_spec(5).dtype == "<i4" and list(labels_spec(5).shape) == [5]


def test_big_endian_input_travels_little_endian():
    arr = np.arange(6, dtype=">f8").reshape(2, 3)
    spec = array_spec("be", arr, Layout.ROWS)
    assert spec.dtype == "<f8"
    chunks = list(array_chunks(0, arr, 16))
    assert b"".join(c.data for c in chunks) == np.arange(6, dtype="<f8").tobytes()
    asm = ArrayAssembler(spec)
    for c in chunks:
        asm.add(c)
    np.testing.assert_array_equal(asm.array(), arr)


def test_non_contiguous_input():
    arr = np.arange(24, dtype=np.float64).reshape(4, 6)[:, ::2].T  # (3, 4), not C-contiguous
    out, _, _ = roundtrip("view", arr, Layout.ROWS, 10)
    np.testing.assert_array_equal(out, arr)


def test_default_chunks_stay_far_below_grpc_limit():
    arr = np.random.default_rng(1).random(int(2.5 * CHUNK_BYTES / 8) + 3)  # 2.5 MiB + 24 bytes
    chunks = list(array_chunks(2**31, arr))
    assert len(chunks) == 3
    assert [len(c.data) for c in chunks] == [CHUNK_BYTES, CHUNK_BYTES, arr.nbytes - 2 * CHUNK_BYTES]
    for chunk in chunks:
        assert len(chunk.data) <= CHUNK_BYTES
        assert chunk.ByteSize() < CHUNK_BYTES + 64
        assert chunk.ByteSize() < GRPC_DEFAULT_LIMIT // 2


def test_unsupported_dtype_cannot_be_sent():
    with pytest.raises(WireError, match=r"dtype float16 cannot be sent"):
        list(array_chunks(0, np.zeros(3, dtype=np.float16)))
    with pytest.raises(WireError, match=r"dtype int64 cannot be sent"):
        array_spec("x", np.zeros(3, dtype=np.int64), Layout.ROWS)


def test_chunk_bytes_must_be_positive():
    with pytest.raises(WireError, match=r"chunk_bytes must be positive, got 0"):
        list(array_chunks(0, np.zeros(3), 0))


def spec(name="dist", dtype="<f8", shape=(10,)):
    return array_pb2.ArraySpec(name=name, dtype=dtype, shape=list(shape), layout=Layout.CONDENSED)


def test_out_of_order_chunk():
    arr = np.arange(10.0)
    chunks = list(array_chunks(0, arr, 16))
    asm = ArrayAssembler(spec())
    asm.add(chunks[0])
    with pytest.raises(WireError, match=r"array 'dist': chunk at byte 32 but 16 bytes received so far"):
        asm.add(chunks[2])
    # a repeated chunk is out of order too
    with pytest.raises(WireError, match=r"array 'dist': chunk at byte 0 but 16 bytes received"):
        asm.add(chunks[0])


def test_oversize_chunk():
    asm = ArrayAssembler(spec(shape=(2,)))
    asm.add(array_pb2.ArrayChunk(array=0, offset=0, data=b"\0" * 8))
    with pytest.raises(WireError, match=r"array 'dist': 24 bytes sent for an array of 16 bytes"):
        asm.add(array_pb2.ArrayChunk(array=0, offset=8, data=b"\0" * 16))
    assert asm.received == 8


def test_chunk_for_empty_array_is_oversize():
    asm = ArrayAssembler(spec(name="nothing", shape=(0, 3)))
    assert asm.complete
    assert asm.array().shape == (0, 3)
    with pytest.raises(WireError, match=r"array 'nothing': 1 bytes sent for an array of 0 bytes"):
        asm.add(array_pb2.ArrayChunk(array=0, offset=0, data=b"\0"))


@pytest.mark.parametrize("dtype", [">f8", "<f2", "float64", "<i8", ""])
def test_bad_dtype_in_spec(dtype):
    with pytest.raises(WireError, match=rf"array 'weird': dtype '{dtype}' is not one of <f8, <f4, <i4"):
        ArrayAssembler(spec(name="weird", dtype=dtype))


def test_negative_shape_in_spec():
    with pytest.raises(WireError, match=r"array 'neg': negative dimension in shape \[3, -1\]"):
        spec_nbytes(spec(name="neg", shape=(3, -1)))


def test_missing_tail():
    arr = np.arange(10.0)
    chunks = list(array_chunks(0, arr, 32))
    asm = ArrayAssembler(spec())
    for c in chunks[:-1]:
        asm.add(c)
    assert not asm.complete
    with pytest.raises(WireError, match=r"array 'dist': 64 of 80 bytes received"):
        asm.array()
    asm.add(chunks[-1])
    np.testing.assert_array_equal(asm.array(), arr)


def test_nothing_received():
    with pytest.raises(WireError, match=r"array 'dist': 0 of 80 bytes received"):
        ArrayAssembler(spec()).array()


@pytest.mark.parametrize("chunk_bytes", [4, 1000, 1 << 20])
def test_float32_transfer_converts_chunk_by_chunk(chunk_bytes):
    arr = np.random.default_rng(3).normal(size=(301, 7))
    spec = array_spec("x", arr, Layout.ROWS, "float32")
    assert spec.dtype == "<f4"
    asm = ArrayAssembler(spec)
    chunks = list(array_chunks(0, arr, chunk_bytes, "float32"))
    assert all(len(c.data) <= max(chunk_bytes, 4) for c in chunks)
    for c in chunks:
        asm.add(c)
    np.testing.assert_array_equal(asm.array(), arr.astype(np.float32))
    assert asm.received == arr.size * 4


@pytest.mark.parametrize("where", ["kept", "passed on", "moved mid-way"])
@pytest.mark.parametrize("bad", [None, 0, 17, 39, "overflow"])
@pytest.mark.parametrize("dtype, chunk_bytes", [("<f8", 13), ("<f8", 64), ("<f4", 6), ("<f4", 1000)])
def test_the_assembler_sees_whether_every_value_is_finite_chunk_by_chunk(where, bad, dtype, chunk_bytes):
    arr = np.random.default_rng(1).normal(size=40).astype(dtype)
    if bad == "overflow":  # finite values whose sum is not
        arr[:] = np.finfo(dtype).max
    elif bad is not None:
        arr[bad] = np.nan if bad % 2 else -np.inf
    got = []
    asm = ArrayAssembler(array_spec("x", arr, Layout.CONDENSED), keep=where != "passed on",
                         sink=(lambda first, values: got.append(values.copy())) if where == "passed on" else None)
    for i, chunk in enumerate(array_chunks(0, arr, chunk_bytes)):
        if where == "moved mid-way" and i == 3:
            asm.redirect(lambda first, values: got.append(values.copy()))
        asm.add(chunk)
        assert asm.finite == bool(np.isfinite(arr[: asm.received // arr.itemsize]).all())
    assert asm.complete and asm.finite == (bad in (None, "overflow"))
    if got:
        np.testing.assert_array_equal(np.concatenate(got), arr)
