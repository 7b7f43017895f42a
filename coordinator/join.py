"""The inner join of the parties' records on their ids (004 §3.2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coordinator.errors import SessionError
from protos.ids import text_ids


@dataclass
class Join:
    """The joined records: ``ids`` in the first party's order, and where each sits in every party."""

    ids: np.ndarray
    index: dict[str, np.ndarray]  # party -> row positions in that party's upload, aligned with ids
    dropped: dict[str, int]  # party -> rows not in the join


def comparable(arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Id arrays that compare as the ids they hold: all as text (protos.ids.TEXT_IDS) once integer and text ids
    meet."""
    if len({a.dtype.kind for a in arrays}) > 1:
        return [text_ids(a) for a in arrays]
    return arrays


def repeats(ids: np.ndarray) -> bool:
    """Whether some id occurs twice in ``ids`` (one party's upload).

    Integers: increasing ones (the usual case) are distinct without a sort.
    Fixed-width bytes (pseudonyms, 16 bytes): their first 8 bytes sorted as
    integers, a copy of half the ids, and only ids that share them compared
    whole; where a set of a million pseudonyms as Python bytes took about
    100 MiB at the end of each upload (a coordinator's peak at 1e6 records).
    Text: a set.
    """
    if ids.dtype.kind in "iu":
        return not np.all(ids[1:] > ids[:-1]) and len(np.unique(ids)) != len(ids)
    if ids.dtype.kind == "S" and ids.dtype.itemsize % 8 == 0:
        words = np.ascontiguousarray(ids).view(np.uint64).reshape(len(ids), ids.dtype.itemsize // 8)
        first = np.sort(words[:, 0])
        shared = first[1:][first[1:] == first[:-1]]
        if not len(shared):
            return False
        alike = ids[np.isin(words[:, 0], shared)]  # bytes ids compare on all their bytes (equal width)
        return len(np.unique(alike)) != len(alike)
    return len(set(ids.tolist())) != len(ids)  # sorting a million strings takes far longer


def same_ids(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` hold the same ids in the same order (integer and text ids compare as text)."""
    x, y = comparable([a, b])
    return bool(np.array_equal(x, y))


def positions(reference: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Where each of ``ids`` sits in ``reference`` (distinct ids); -1 for an id it lacks."""
    reference, ids = comparable([reference, ids])
    if not len(reference):
        return np.full(len(ids), -1)
    if reference.dtype.kind == "T" or ids.dtype.kind == "T":
        return _positions_by_sort(reference, ids)
    order = np.argsort(reference, kind="stable")
    at = order[np.searchsorted(reference, ids, sorter=order).clip(0, len(reference) - 1)]
    return np.where(reference[at] == ids, at, -1)


def _positions_by_sort(reference: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``positions`` for variable-width strings (protos.ids.TEXT_IDS), without ``np.searchsorted``, which gives
    wrong positions for them (numpy 2.4): one stable sort of both, each id then meets the reference id sorted
    last before it, which is its own when it is there."""
    m = len(reference)
    both = np.concatenate([reference, ids.astype(reference.dtype)])
    order = np.argsort(both, kind="stable")  # an id equal to a reference id sorts right after it
    ranked = both[order]
    last = np.maximum.accumulate(np.where(order < m, np.arange(len(order)), -1))  # latest reference id so far
    found = np.full(len(ids), -1)
    mine = order >= m
    at, before = order[mine] - m, last[mine]
    hit = (before >= 0) & (ranked[np.maximum(before, 0)] == ranked[mine])
    found[at[hit]] = order[before[hit]]
    return found


def join_ids(ids_by_party: dict[str, np.ndarray]) -> Join:
    """Inner join on id; ids may come in any order. SessionError if no id is common to all."""
    parties = list(ids_by_party)
    ids_by_party = dict(zip(parties, comparable(list(ids_by_party.values()))))
    first = ids_by_party[parties[0]]
    if all(np.array_equal(ids_by_party[p], first) for p in parties[1:]) and len(first):
        # every party holds the same ids in the same order (common when one table is split): no search, and one
        # index shared by every party (read-only), not one each (8 bytes a record a party)
        rows = np.arange(len(first))
        rows.flags.writeable = False
        return Join(ids=first, index={p: rows for p in parties}, dropped={p: 0 for p in parties})
    keep = np.ones(len(first), dtype=bool)
    for party in parties[1:]:
        keep &= np.isin(first, ids_by_party[party])
    joined = first[keep]
    if len(joined) == 0:
        raise SessionError(f"no record id is common to all parties ({', '.join(parties)})")
    index = {}
    for party in parties:
        index[party] = positions(ids_by_party[party], joined)  # every joined id is there
    dropped = {party: len(ids_by_party[party]) - len(joined) for party in parties}
    return Join(ids=joined, index=index, dropped=dropped)


def check_clusters_fit(n_clusters: int, records: int) -> None:
    """SessionError unless ``n_clusters`` clusters can be made of the ``records`` joined records (each cluster
    needs at least one): the one check the clustering (coordinator.clustering) and the rounds of secure
    aggregation and MPC (coordinator.protocols.secagg) both make before they start."""
    if n_clusters > records:
        raise SessionError(f"n_clusters = {n_clusters} is more than the {records} joined records")
