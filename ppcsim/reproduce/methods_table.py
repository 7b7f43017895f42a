"""The table of ``docs/methods.md``, made from the ``sweep.csv`` of the sweep that page names.

    ppc sweep scenarios/sweep-methods.toml --out runs/methods --in-process
    python -m ppcsim.reproduce.methods_table runs/methods/sweep.csv

Each method's row is the mean over the sweep's seeds of its points: stress
(004 eq. 6), NP (000 eq. 5.21), ARI against the original clustering and the
true blobs, mean column privacy (002) against each attack that applies, and
the payload bytes of both parties. ``docs/methods.csv`` is the page's
sweep.csv; ``tests/ppcsim/reproduce/test_methods_table.py`` checks that the
page's table is the one it gives and reruns a few of its points.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

#: The page's columns: header, then the sweep.csv column averaged into it (and how it is printed).
COLUMNS = (
    ("stress", "stress"), ("NP", "np"), ("ARI vs original clustering", "ari"), ("ARI vs true blobs", "ari_truth"),
    ("known I/O", "privacy_known_io_mean"),
    ("known I/O, forward fit with an intercept", "privacy_known_io_forward_mean"),
    ("ICA", "privacy_ica_mean"), ("multilateration", "privacy_multilateration_mean"),
)
BYTES = ("bytes sent (both parties)", "bytes_payload")


def _mean(rows: list[dict], key: str) -> float | None:
    values = [float(r[key]) for r in rows if r.get(key) not in (None, "")]
    return sum(values) / len(values) if values else None


def methods_table(path: str | Path) -> str:
    """The Markdown table of ``docs/methods.md`` from the sweep's ``sweep.csv`` at ``path``."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    by_method: dict[str, list[dict]] = {}
    for row in rows:
        by_method.setdefault(row["param_method"], []).append(row)
    head = ["method", *(h for h, _ in COLUMNS), BYTES[0]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for method, points in by_method.items():
        cells = [f"`{method}`"]
        for _, key in COLUMNS:
            value = _mean(points, key)
            text = "-" if value is None else f"{value:.3f}"
            embedding = _mean(points, "privacy_multilateration_nmds_mean") if key.startswith("privacy_multi") else None
            if embedding is not None:
                text += f" (embedding: {embedding:.3f})"
            cells.append(text)
        payload = _mean(points, BYTES[1])
        cells.append("-" if payload is None else f"{round(payload):,}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def page_table(page: str | Path) -> str:
    """The table as ``docs/methods.md`` prints it: its first Markdown table."""
    lines = Path(page).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| method |"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return "\n".join(lines[start:end]) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m ppcsim.reproduce.methods_table runs/methods/sweep.csv")
    print(methods_table(sys.argv[1]), end="")
