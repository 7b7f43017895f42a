"""The figure of docs/comparison.md, drawn by bench/comparison.py from comparison.csv's rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def figure(rows: list[dict], folder: Path, variants=(), links=()) -> None:
    """``folder/comparison.png``: payload bytes (left) and the median time (right) of each variant against the
    records, one line per link (dashed: the first, unshaped); ``variants`` and ``links`` in the order drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    data = [r for r in rows if r["workload"] == "comparison"]
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for colour, name in zip(colours, variants):
        for link, style in zip(links, ("--", "-")):
            pts = sorted((r["rows"], r["payload_up"] + r["payload_down"], r["protocol_seconds"])
                         for r in data if r["variant"] == name and r["link"] == link)
            if not pts:
                continue
            m, b, s = (np.array(x) for x in zip(*pts))
            if style == "-":
                left.loglog(m, b, "o-", label=name, color=colour)
            right.loglog(m, s, "o" + style, color=colour, label=f"{name} ({link})" if style == "-" else None)
    left.set(xlabel="records m", ylabel="payload bytes, up and down (all parties)", title="bytes")
    right.set(xlabel="records m", ylabel="seconds, last Join to result", title="time (dashed: unshaped)")
    left.legend(fontsize=8)
    right.legend(fontsize=7)
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(folder / "comparison.png", dpi=120)
    plt.close(fig)
