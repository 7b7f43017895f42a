"""Figures of sweeps and runs (matplotlib, no display needed), saved as PNG and SVG."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def _series_key(row: dict, exclude: set[str]) -> str:
    """A legend label from the swept parameters that are neither the x axis nor the seed."""
    parts = [f"{k[6:]}={v}" for k, v in row.items() if k.startswith("param_") and k[6:] not in exclude]
    return ", ".join(parts) or row["methods"]


def _varies(rows: list[dict], key: str) -> bool:
    return len({r.get(key) for r in rows if r.get(key) is not None}) > 1


def _save(fig, out: Path, name: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out / f"{name}.png", dpi=110)
    fig.savefig(out / f"{name}.svg")
    plt.close(fig)
    return out / f"{name}.png"


def _mean_band(ax, rows: list[dict], x: str, y: str, exclude: set[str]) -> None:
    """One line per series: the mean of y over seeds at each x, with a min-max band."""
    series = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r.get(x) is not None and r.get(y) is not None:
            series[_series_key(r, exclude)][r[x]].append(r[y])
    for label, points in sorted(series.items()):
        xs = sorted(points)
        values = [np.asarray(points[v], dtype=float) for v in xs]
        ax.plot(xs, [v.mean() for v in values], marker="o", label=label)
        ax.fill_between(xs, [v.min() for v in values], [v.max() for v in values], alpha=0.2)


def sweep_figures(rows: list[dict], out: Path) -> dict[str, Path]:
    """The sweep's figures that its grid supports: stress vs output dims, utility vs privacy, bytes vs rows."""
    figures = {}
    if _varies(rows, "output_dims"):
        fig, ax = plt.subplots(figsize=(6, 4))
        _mean_band(ax, rows, "output_dims", "stress", {"k", "seed", "parties"})
        ax.set(xlabel="output dimensions sent (sum over parties)", ylabel="stress (004 eq. 6)",
               title="Distance distortion vs output dimension")
        ax.legend(fontsize=8)
        figures["stress_vs_dims"] = _save(fig, out, "stress_vs_dims")
    privacy = next((f"privacy_{a}_mean" for a in ("known_io", "multilateration", "ica")
                    if any(r.get(f"privacy_{a}_mean") is not None for r in rows)), None)
    if privacy and len(rows) > 1:
        fig, ax = plt.subplots(figsize=(6, 4))
        groups = defaultdict(list)
        for r in rows:
            if r.get(privacy) is not None:
                groups[_series_key(r, {"seed", "k", "rows"})].append(r)
        for label, members in sorted(groups.items()):
            ax.scatter([m[privacy] for m in members], [m["ari"] for m in members], label=label, s=18)
        ax.set(xlabel=f"mean column privacy against {privacy[8:-5]} (higher: safer)",
               ylabel="ARI vs clustering of the original data", title="Utility vs privacy")
        ax.legend(fontsize=8)
        figures["utility_vs_privacy"] = _save(fig, out, "utility_vs_privacy")
    if _varies(rows, "methods") and any(r.get("privacy_worst_mean") is not None for r in rows):
        figures["methods"] = methods_figure(rows, out)
    if _varies(rows, "rows"):
        fig, ax = plt.subplots(figsize=(6, 4))
        by_method = defaultdict(list)
        for r in rows:
            by_method[r["methods"]].append(r)
        for method, members in sorted(by_method.items()):
            members.sort(key=lambda m: m["rows"])
            xs = [m["rows"] for m in members]
            line = ax.plot(xs, [m["bytes_predicted"] for m in members], label=f"{method}: predicted")[0]
            ax.scatter(xs, [m["bytes_payload"] for m in members], color=line.get_color(), marker="o",
                       label=f"{method}: measured payload")
        ax.set(xscale="log", yscale="log", xlabel="records", ylabel="bytes uploaded (all parties)",
               title="Communication: DRBT linear, OSBR quadratic")
        ax.legend(fontsize=8)
        figures["bytes_vs_rows"] = _save(fig, out, "bytes_vs_rows")
    return figures


def methods_figure(rows: list[dict], out: Path) -> Path:
    """Every method in one picture: agreement with the original clustering against the privacy left
    by the strongest attack that applies, the marker's area growing with the bytes sent."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    groups = defaultdict(list)
    for r in rows:
        if r.get("privacy_worst_mean") is not None:
            groups[r["methods"]].append(r)
    most = max(r["bytes_payload"] for r in rows) or 1
    for method, members in sorted(groups.items()):
        x = [m["privacy_worst_mean"] for m in members]
        y = [m["ari"] for m in members]
        area = [20 + 400 * np.sqrt(m["bytes_payload"] / most) for m in members]
        ax.scatter(x, y, s=area, alpha=0.6, label=f"{method} ({np.mean([m['bytes_payload'] for m in members]):,.0f} B)")
    ax.set(xlabel="mean column privacy against the strongest attack that applies (higher: safer)",
           ylabel="ARI vs clustering of the original data", title="Disguises compared (marker area: bytes sent)")
    ax.legend(fontsize=7, loc="best")
    return _save(fig, out, "methods")


def run_figures(report: dict, out: Path) -> dict[str, Path]:
    """A run's figures: bytes per party (three layers next to the prediction), and column privacy."""
    figures = {}
    parties = report["parties"]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    x = np.arange(len(parties))
    for i, key in enumerate(("predicted", "payload", "serialized")):
        ax.bar(x + (i - 1) * 0.27, [p["bytes"][key] or 0 for p in parties], width=0.27, label=key)
    ax.set_xticks(x, [p["name"] for p in parties])
    ax.set(ylabel="bytes uploaded", title="Bytes per party")
    ax.legend(fontsize=8)
    figures["bytes"] = _save(fig, out, "bytes")
    privacy = report.get("privacy", {})
    bars = [(f"{party}.{col}", attack, value)
            for party, entry in privacy.items() if isinstance(entry, dict)
            for attack, result in entry.get("attacks", {}).items()
            for col, value in result.get("columns", {}).items()]
    if bars:
        attacks = sorted({a for _, a, _ in bars})
        labels = list(dict.fromkeys(c for c, _, _ in bars))
        fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(labels)), 4))
        width = 0.8 / len(attacks)
        for i, attack in enumerate(attacks):
            values = {c: v for c, a, v in bars if a == attack}
            ax.bar(np.arange(len(labels)) + i * width, [values.get(c, np.nan) for c in labels], width=width, label=attack)
        ax.set_xticks(np.arange(len(labels)) + 0.4 - width / 2, labels, rotation=60, ha="right", fontsize=7)
        ax.set(ylabel="column privacy (higher: safer)", title="Privacy per original column")
        ax.legend(fontsize=8)
        figures["privacy"] = _save(fig, out, "privacy")
    return figures
