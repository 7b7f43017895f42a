"""coordinator.join.join_ids: the inner join on record ids (004 §3.2)."""

from __future__ import annotations

import numpy as np
import pytest

from coordinator.errors import SessionError
from coordinator.join import join_ids


def check_alignment(ids_by_party, join):
    for party, ids in ids_by_party.items():
        np.testing.assert_array_equal(ids[join.index[party]], join.ids)


def test_same_ids_different_orders():
    ids = {
        "a": np.array(["c", "a", "d", "b"]),
        "b": np.array(["a", "b", "c", "d"]),
        "c": np.array(["d", "c", "b", "a"]),
    }
    join = join_ids(ids)
    np.testing.assert_array_equal(join.ids, ["c", "a", "d", "b"])
    np.testing.assert_array_equal(join.index["a"], [0, 1, 2, 3])
    np.testing.assert_array_equal(join.index["b"], [2, 0, 3, 1])
    np.testing.assert_array_equal(join.index["c"], [1, 3, 0, 2])
    assert join.dropped == {"a": 0, "b": 0, "c": 0}
    check_alignment(ids, join)


def test_partial_overlap_keeps_first_party_order_and_counts_drops():
    ids = {
        "first": np.array(["u7", "u1", "u9", "u3", "u5", "u2"]),  # u2 missing in "second", u9 in "third"
        "second": np.array(["u5", "x1", "u3", "u9", "u7", "x2", "u1"]),
        "third": np.array(["u1", "u3", "u5", "u7", "u2"]),
    }
    join = join_ids(ids)
    np.testing.assert_array_equal(join.ids, ["u7", "u1", "u3", "u5"])
    assert join.dropped == {"first": 2, "second": 3, "third": 1}
    np.testing.assert_array_equal(join.index["second"], [4, 6, 2, 0])
    np.testing.assert_array_equal(join.index["third"], [3, 0, 1, 2])
    check_alignment(ids, join)


def test_join_order_follows_first_party_given():
    a = np.array(["1", "2", "3"])
    b = np.array(["3", "1", "2"])
    np.testing.assert_array_equal(join_ids({"a": a, "b": b}).ids, ["1", "2", "3"])
    np.testing.assert_array_equal(join_ids({"b": b, "a": a}).ids, ["3", "1", "2"])


def test_random_large_join():
    rng = np.random.default_rng(2024)
    universe = np.array([f"id{i:05d}" for i in range(3000)])
    ids = {}
    for p in range(4):
        keep = rng.random(len(universe)) < 0.85
        ids[f"p{p}"] = rng.permutation(universe[keep])
    join = join_ids(ids)
    common = set.intersection(*(set(v.tolist()) for v in ids.values()))
    assert set(join.ids.tolist()) == common
    assert len(join.ids) == len(common)
    # first party's order
    first = ids["p0"].tolist()
    assert [first.index(i) for i in join.ids.tolist()] == sorted(first.index(i) for i in common)
    assert join.dropped == {p: len(v) - len(common) for p, v in ids.items()}
    check_alignment(ids, join)


def test_single_party_joins_with_itself():
    ids = {"only": np.array(["b", "a"])}
    join = join_ids(ids)
    np.testing.assert_array_equal(join.ids, ["b", "a"])
    np.testing.assert_array_equal(join.index["only"], [0, 1])
    assert join.dropped == {"only": 0}


def test_ids_of_different_string_lengths():
    ids = {"a": np.array(["10", "2", "333"]), "b": np.array(["333", "4444", "2", "10"])}
    join = join_ids(ids)
    np.testing.assert_array_equal(join.ids, ["10", "2", "333"])
    np.testing.assert_array_equal(join.index["b"], [3, 2, 0])
    assert join.dropped == {"a": 0, "b": 1}


def test_no_common_id_raises():
    with pytest.raises(SessionError, match=r"no record id is common to all parties \(a, b, c\)"):
        join_ids({"a": np.array(["1", "2"]), "b": np.array(["2", "3"]), "c": np.array(["1", "3"])})


def test_empty_upload_has_no_common_id():
    with pytest.raises(SessionError, match=r"no record id is common"):
        join_ids({"a": np.array(["1"]), "b": np.array([], dtype=str)})


def test_integer_ids_join_text_ids_by_their_decimal_text():
    ints = np.array([3, 1, 2, 10], dtype=np.int64)
    text = np.array(["10", "2", "x", "3", "01"])
    join = join_ids({"a": ints, "b": text})
    np.testing.assert_array_equal(join.ids, ["3", "2", "10"])
    np.testing.assert_array_equal(join.index["a"], [0, 2, 3])
    np.testing.assert_array_equal(join.index["b"], [3, 1, 0])
    same = join_ids({"a": ints, "b": ints.copy()})
    assert same.ids.dtype == np.int64 and same.dropped == {"a": 0, "b": 0}


def test_as_many_clusters_as_joined_records_fit_and_one_more_does_not():
    from coordinator.join import check_clusters_fit

    check_clusters_fit(4, 4)
    with pytest.raises(SessionError, match=r"^n_clusters = 5 is more than the 4 joined records$"):
        check_clusters_fit(5, 4)
