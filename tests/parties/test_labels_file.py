"""A party's labels file: the same text, line for line, as one formatted string per record."""

from __future__ import annotations

import numpy as np
import pytest

from parties.run import write_labels


def _per_line(ids: np.ndarray, labels: np.ndarray) -> str:
    keep = labels != -2
    return "id,cluster\n" + "".join(f"{i},{c}\n" for i, c in zip(ids[keep].tolist(), labels[keep].tolist()))


@pytest.mark.parametrize("ids", [
    np.arange(10) * 1000 - 5000,  # negative and positive integers
    np.array([2**63 - 1, 0, 7], dtype=np.int64),
    np.array([3, 1, 2], dtype=np.uint64),
    np.array(["r-1", "zé", "a,b", "%d", "x" * 40]),  # text, with a comma and a percent sign as they are
    np.array(["p1", "p2"], dtype=object),
])
def test_labels_file_equals_one_line_per_record(tmp_path, ids):
    labels = (np.arange(len(ids)) % 5 - 2).astype(np.int32)  # -2 (not joined: left out), -1 (noise), clusters
    path = tmp_path / "labels.csv"
    write_labels(path, ids, labels, block=3)  # blocks that do not divide the records
    assert path.read_text(encoding="utf-8") == _per_line(ids, labels)


def test_labels_file_of_no_joined_record(tmp_path):
    write_labels(tmp_path / "labels.csv", np.array([4, 5]), np.array([-2, -2], dtype=np.int32))
    assert (tmp_path / "labels.csv").read_text() == "id,cluster\n"
