"""Repeated runs for bench/comparison.py: the median time of each row, the spread of its repeats, the machine's
load while they ran, and whether that spread hides the difference the row shows.

A time measured once on a shared machine can be anything: drbt k = 3 once took 24 s at 1,000 records and 3 s at
10,000, and a run on a shaped link came out faster than the same run unshaped. Each row is therefore run
``repeats`` times (REPEATS up to SMALL_ROWS records, once above, where a run takes minutes); its time is the median,
its spread the range (min to max), and a row whose two links' ranges overlap is flagged: there the spread exceeds
the difference between the links, and the times do not tell them apart.
"""

from __future__ import annotations

import os
import statistics

#: Runs of each row at up to SMALL_ROWS records (``--repeats`` overrides).
REPEATS = 3
#: Largest rows repeated by default: above it a row runs once (its runs take minutes).
SMALL_ROWS = 10_000
#: Marks a time whose repeats' range overlaps the other link's: the spread exceeds the difference shown.
FLAG = "≈"


def repeats_for(rows: int, asked: int | None) -> int:
    """How many times a row of ``rows`` records runs: ``asked`` when given, else REPEATS up to SMALL_ROWS."""
    if asked is not None:
        return max(1, asked)
    return REPEATS if rows <= SMALL_ROWS else 1


def load() -> float:
    """The machine's 1-minute load average now (0 where the system does not say)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def summary(protocol: list[float], wall: list[float], loads: list[float]) -> dict:
    """The timing columns of comparison.csv from a row's repeats: medians, the protocol time's range, the number of
    repeats and the highest load average seen while they ran."""
    return {"wall_seconds": statistics.median(wall), "protocol_seconds": statistics.median(protocol),
            "protocol_seconds_min": min(protocol), "protocol_seconds_max": max(protocol), "repeats": len(protocol),
            "load": max(loads)}


def read(row: dict) -> None:
    """Parse a comparison.csv row's timing columns in place (a row written before repeats: one run, no load)."""
    row["repeats"] = int(row.get("repeats") or 1)
    for key in ("protocol_seconds_min", "protocol_seconds_max"):
        row[key] = float(row[key]) if row.get(key) not in (None, "") else row["protocol_seconds"]
    row["load"] = float(row["load"]) if row.get("load") not in (None, "") else None


def spread(row: dict) -> float:
    """The range of a row's repeated protocol times (0 for a single run)."""
    return row["protocol_seconds_max"] - row["protocol_seconds_min"]


def overlap(a: dict | None, b: dict | None) -> bool:
    """Whether two rows' ranges of repeated times overlap (both repeated): the spread exceeds their difference."""
    if a is None or b is None or a["repeats"] < 2 or b["repeats"] < 2:
        return False
    return a["protocol_seconds_min"] <= b["protocol_seconds_max"] and b["protocol_seconds_min"] <= a["protocol_seconds_max"]


def cell(row: dict | None, flagged: bool = False) -> str:
    """A time cell: the median, then the range of its repeats and their number (``1 run`` for one), flagged."""
    if row is None:
        return "not run"
    median = f"{row['protocol_seconds']:.2f} s"
    if row["repeats"] < 2:
        return f"{median} (1 run)"
    return (f"{FLAG + ' ' if flagged else ''}{median} ({row['protocol_seconds_min']:.2f}-"
            f"{row['protocol_seconds_max']:.2f}, {row['repeats']} runs)")


def note(rows: list[dict]) -> str:
    """The page's words on the times: medians, ranges, flags and the load while they were measured."""
    repeated = [r for r in rows if r["repeats"] > 1]
    loads = [r["load"] for r in rows if r.get("load") is not None]
    said = (f" The load average (1 minute, on the 2 cores) was {min(loads):.1f} to {max(loads):.1f} while the "
            "rows with a load were measured." if loads else "")
    return (f"*Times* are the median of a row's runs with their range (min-max) and number; a row measured once says "
            f"`1 run` (a run of minutes, or a row kept from an earlier run of the bench). {FLAG} marks a time whose "
            "range overlaps the other link's: the spread of the repeats exceeds the difference between the links, "
            f"so that row does not tell them apart. {len(repeated)} of the {len(rows)} rows were repeated.{said} "
            "The machine is shared: read a time against its range, not alone.")
