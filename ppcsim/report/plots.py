"""Figures of sweeps and runs (matplotlib, no display needed), saved as PNG and SVG."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import matplotlib

from ppcsim.evaluate.artifacts import RunArtifacts

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from ppcsim.evaluate.attackers import ATTACKS  # noqa: E402
from ppcsim.report.model import AttackScore, Report, as_report, given  # noqa: E402


def _series_key(row: dict, exclude: set[str]) -> str:
    """A legend label from the swept parameters that are neither the x axis nor the seed."""
    parts = [f"{k[6:]}={v}" for k, v in row.items() if k.startswith("param_") and k[6:] not in exclude]
    return ", ".join(parts) or row["methods"]


def _varies(rows: list[dict], key: str) -> bool:
    return len({r.get(key) for r in rows if r.get(key) is not None}) > 1


def _mean_band(ax, rows: list[dict], x: str, y: str, exclude: set[str]) -> None:
    """One line per series: the mean of y over seeds at each x, with a min-max band."""
    series: defaultdict[str, defaultdict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r.get(x) is not None and r.get(y) is not None:
            series[_series_key(r, exclude)][r[x]].append(r[y])
    for label, points in sorted(series.items()):
        xs = sorted(points)
        values = [np.asarray(points[v], dtype=float) for v in xs]
        ax.plot(xs, [v.mean() for v in values], marker="o", label=label)
        ax.fill_between(xs, [v.min() for v in values], [v.max() for v in values], alpha=0.2)


#: What each sweep figure plots (its x and y columns of sweep.csv): a run without one of them is left out.
FIGURE_NEEDS = {
    "stress_vs_dims": ("output_dims", "stress"),
    "utility_vs_privacy": ("<privacy>", "ari"),
    "methods": ("privacy_worst_mean", "ari"),
    "bytes_vs_rows": ("rows", "bytes_payload"),
    "parties": ("param_parties", "ari"),
}
#: Why a run lacks a figure's column, for the page's caption.
MISSING_WHY = {
    "output_dims": "they send dissimilarities, not dimensions",
    "privacy_worst_mean": "no attack was measured on them",
    "ari": "no utility was measured",
}


def why_missing(column: str) -> str:
    """Why a run lacks ``column`` of sweep.csv: ``MISSING_WHY``, or the attack's own words for its column."""
    attacks = {f"privacy_{name}_mean": attack.why_missing for name, attack in ATTACKS.items()}
    return {**MISSING_WHY, **attacks}.get(column, f"they have no {column}")


def privacy_column(rows: list[dict]) -> str | None:
    """The column of sweep.csv the utility-vs-privacy figure draws: the first attack measured on any run."""
    return next((f"privacy_{a}_mean" for a in ATTACKS
                 if any(r.get(f"privacy_{a}_mean") is not None for r in rows)), None)


def swept(rows: list[dict]) -> list[str]:
    """The swept parameters (without ``param_``) whose values vary, the seed last."""
    keys = [k[6:] for k in dict.fromkeys(k for r in rows for k in r) if k.startswith("param_") and _varies(rows, k)]
    return sorted(keys, key=lambda k: k == "seed")


def _legend_outside(fig, ax) -> None:
    """The legend to the right of the axes, never over the data."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)


MARKERS = ("o", "^", "s", "D", "v", "P", "X", "*")


#: Up to this many distinct whole numbers, a swept value is drawn with a colour each, not on a colour scale.
FEW = 10


def _few_whole(numbers: list) -> bool:
    """Whether ``numbers`` are whole numbers of at most FEW distinct values (parties, k, tries)."""
    return all(isinstance(v, int) or float(v).is_integer() for v in numbers) and len(set(numbers)) <= FEW


def _whole_ticks(ax, values) -> None:
    """The x axis ticked at the values drawn, when they are whole numbers (no 2.5 parties)."""
    ticks = sorted({int(v) for v in values})
    if len(ticks) <= 2 * FEW:
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _colour_by(fig, ax, rows: list[dict], x: str, y: str, key: str | None, shape: str | None = None) -> None:
    """One point per run at (x, y), coloured by the swept parameter ``key`` (a colour scale for numbers, one
    colour per value otherwise) and, with ``shape``, shaped by a second swept parameter."""
    rows = [r for r in rows if r.get(x) is not None and r.get(y) is not None]
    shapes = list(dict.fromkeys(r.get(f"param_{shape}") for r in rows)) if shape else [None]
    values = [r.get(f"param_{key}") for r in rows] if key else [None] * len(rows)
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    # a colour scale for many or fractional numbers; a few whole numbers (parties, k) get a colour each
    numeric = key and len(numbers) == len(values) and not _few_whole(numbers)
    colours = sorted(set(numbers)) if numbers and len(numbers) == len(values) else list(dict.fromkeys(values))
    points = None
    for j, form in enumerate(shapes):
        marker = MARKERS[j % len(MARKERS)]
        members = [(r, v) for r, v in zip(rows, values) if not shape or r.get(f"param_{shape}") == form]
        if numeric:
            points = ax.scatter([r[x] for r, _ in members], [r[y] for r, _ in members], c=[v for _, v in members],
                                cmap="viridis", vmin=min(numbers), vmax=max(numbers), s=24, marker=marker)
            if shape:
                ax.scatter([], [], marker=marker, color="grey", label=f"{shape} = {form}")
            continue
        for i, value in enumerate(colours):
            chosen = [r for r, v in members if v == value]
            if chosen:
                label = ", ".join(f"{k} = {v}" for k, v in ((key, value), (shape, form)) if k)
                ax.scatter([r[x] for r in chosen], [r[y] for r in chosen], s=24, marker=marker,
                           color=f"C{i % 10}", label=label or None)
    if numeric:
        bar = fig.colorbar(points, ax=ax, label=f"swept: {key}")
        if all(isinstance(v, int) for v in numbers):
            bar.locator = MaxNLocator(integer=True)
            bar.update_ticks()
        if shape:  # the colour bar holds the right: the shapes' legend goes below the axes
            ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=len(shapes), frameon=False)
    else:
        _legend_outside(fig, ax)


def sweep_figures(rows: list[dict], out: Path) -> dict[str, Path]:
    """The sweep's figures that its grid supports: stress vs output dims, utility vs privacy, bytes vs rows."""
    figures = {}
    if _varies(rows, "output_dims"):
        fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
        _mean_band(ax, rows, "output_dims", "stress", {"k", "seed", "parties"})
        ax.set(xlabel="output dimensions sent (sum over parties)", ylabel="stress (004 eq. 6)",
               title="Distance distortion vs output dimension")
        _whole_ticks(ax, [r["output_dims"] for r in rows if r.get("output_dims") is not None])
        _legend_outside(fig, ax)
        figures["stress_vs_dims"] = _save_outside(fig, out, "stress_vs_dims")
    privacy = privacy_column(rows)
    if privacy and len(rows) > 1:
        fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
        keys = [k for k in swept(rows) if k != "seed"]
        _colour_by(fig, ax, rows, privacy, "ari", keys[0] if keys else None, keys[1] if len(keys) > 1 else None)
        ax.set(xlabel=f"mean column privacy against {privacy[8:-5]} (higher: safer)",
               ylabel="ARI vs clustering of the original data", title="Utility vs privacy")
        figures["utility_vs_privacy"] = _save_outside(fig, out, "utility_vs_privacy")
    if _varies(rows, "methods") and any(r.get("privacy_worst_mean") is not None for r in rows):
        figures["methods"] = methods_figure(rows, out)
    if _varies(rows, "param_tries") and any(r.get("own_local_stress") is not None for r in rows):
        figures["tries"] = tries_figure(rows, out)
    if _varies(rows, "param_parties"):
        figures["parties"] = parties_figure(rows, out)
    if _varies(rows, "rows"):
        fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
        by_method = defaultdict(list)
        for r in rows:
            by_method[r["methods"]].append(r)
        for method, members in sorted(by_method.items()):
            members.sort(key=lambda m: m["rows"])
            xs = [m["rows"] for m in members]
            line = ax.plot(xs, [m["bytes_predicted"] for m in members], label=f"{method}: predicted")[0]
            ax.scatter(xs, [m["bytes_payload"] for m in members], color=line.get_color(), marker="o",
                       label=f"{method}: measured payload")
            wire = [w for m in members if (w := m.get("bytes_wire")) is not None]
            if len(wire) == len(members):
                ax.scatter(xs, wire, color=line.get_color(), marker="x", label=f"{method}: on the wire")
        ax.set(xscale="log", yscale="log", xlabel="records", ylabel="bytes uploaded (all parties)",
               title="Communication: DRBT linear, OSBR quadratic")
        _legend_outside(fig, ax)
        figures["bytes_vs_rows"] = _save_outside(fig, out, "bytes_vs_rows")
    return figures


def left_out(name: str, rows: list[dict]) -> dict[str, str]:
    """The methods a sweep figure leaves out (every run of theirs lacks one of its columns), and why."""
    # with no attack measured on any run, the privacy column is that of the worst attack, which no run has
    needs = [privacy_column(rows) or "privacy_worst_mean" if n == "<privacy>" else n for n in FIGURE_NEEDS.get(name, ())]
    missing: dict[str, str] = {}
    for r in rows:
        for need in needs:
            if r.get(need) is None:
                missing.setdefault(r["methods"], why_missing(need))
    shown = {r["methods"] for r in rows if all(r.get(need) is not None for need in needs)}
    return {m: why for m, why in missing.items() if m not in shown}


def tries_figure(rows: list[dict], out: Path) -> Path:
    """004 §5.2 step 3's compromise: against the draws each party tried, the local stress it kept (and the joined
    data's stress), the agreement with the original clustering, and each attack's mean column privacy; the
    mean over the other swept values (seeds) with a min-max band."""
    fig, axes = plt.subplots(1, 3, figsize=(9, 2.8), layout="constrained")
    privacy = [f"privacy_{a}_mean" for a in ATTACKS if any(r.get(f"privacy_{a}_mean") is not None for r in rows)]
    panels = ((axes[0], (("own_local_stress", "local stress (each party's own block)"),
                         ("stress", "stress of the joined data")), "stress (004 eq. 6)"),
              (axes[1], (("ari", "ARI vs original clustering"), ("ari_truth", "ARI vs true classes")), "ARI"),
              (axes[2], tuple((c, attack_name(c[8:-5])) for c in privacy), "mean column privacy"))
    for ax, series, ylabel in panels:
        for column, label in series:
            by_tries: defaultdict[int, list[float]] = defaultdict(list)
            for r in rows:
                if r.get("param_tries") is not None and r.get(column) is not None:
                    by_tries[int(r["param_tries"])].append(float(r[column]))
            if not by_tries:
                continue
            xs = sorted(by_tries)
            values = [np.asarray(by_tries[x]) for x in xs]
            ax.plot(xs, [v.mean() for v in values], marker="o", markersize=3, label=label)
            ax.fill_between(xs, [v.min() for v in values], [v.max() for v in values], alpha=0.2)
        ax.set(xscale="log", xlabel="tries (draws per party)", ylabel=ylabel)
        ticks = sorted({int(r["param_tries"]) for r in rows if r.get("param_tries") is not None})
        ax.set_xticks(ticks, [str(t) for t in ticks], minor=False)
        ax.minorticks_off()
        ax.legend(fontsize=7, frameon=False)
    fig.suptitle("drbt: trying more projections (004 §5.2 step 3)", fontsize=10)
    return _save_outside(fig, out, "tries")


def parties_figure(rows: list[dict], out: Path) -> Path:
    """A sweep over the number of parties (the columns re-split over p1..pN, 004 §6.2): against it, agreement
    with the original clustering and with the true classes, the privacy left by the strongest attack that applies
    (when attacks ran), and the payload each party sent; the mean over the other swept values (seeds) with a
    min-max band."""
    privacy = any(r.get("privacy_worst_mean") is not None for r in rows)
    fig, axes = plt.subplots(1, 3 if privacy else 2, figsize=(9 if privacy else 6.5, 2.8), layout="constrained")
    per_party = [{**r, "bytes_per_party": r["bytes_payload"] / r["parties"] if r.get("parties") else None}
                 for r in rows]
    panels: list[tuple] = [(axes[0], (("ari", "vs original clustering"), ("ari_truth", "vs true classes")), "ARI")]
    if privacy:
        panels.append((axes[1], (("privacy_worst_mean", "strongest attack"),), "mean column privacy"))
    panels.append((axes[-1], (("bytes_per_party", "payload per party"),), "payload B sent per party (mean)"))
    for ax, series, ylabel in panels:
        for column, label in series:
            by_count: defaultdict[int, list[float]] = defaultdict(list)
            for r in per_party:
                if r.get("param_parties") is not None and r.get(column) is not None:
                    by_count[int(r["param_parties"])].append(float(r[column]))
            if by_count:
                xs = sorted(by_count)
                values = [np.asarray(by_count[x]) for x in xs]
                ax.plot(xs, [v.mean() for v in values], marker="o", markersize=3, label=label)
                ax.fill_between(xs, [v.min() for v in values], [v.max() for v in values], alpha=0.2)
        ax.set(xlabel="parties", ylabel=ylabel)
        _whole_ticks(ax, [r["param_parties"] for r in rows if r.get("param_parties") is not None])
        if len(series) > 1:
            ax.legend(fontsize=7, frameon=False)
    fig.suptitle("The same columns over more parties", fontsize=10)
    return _save_outside(fig, out, "parties")


def methods_figure(rows: list[dict], out: Path) -> Path:
    """Every method in one picture: agreement with the original clustering against the privacy left
    by the strongest attack that applies, the marker's area growing with the bytes sent."""
    fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
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
    _legend_outside(fig, ax)
    return _save_outside(fig, out, "methods")


def run_figures(report: Report | dict, out: Path, artifacts: RunArtifacts | None = None) -> dict[str, Path]:
    """A run's figures: bytes per party (its layers next to the prediction), and column privacy; with the
    observer's ``artifacts`` (ppcsim.run.observer.evaluate) also the clusters and each party's
    attacks' reconstructions against the truth."""
    report = as_report(report)
    figures = {}
    parties = report.parties
    fig, ax = plt.subplots(figsize=(7, 3.5), layout="constrained")
    x = np.arange(len(parties))
    by_layer: dict[str, list[int | None]] = {
        "predicted": [p.bytes.predicted for p in parties], "payload": [p.bytes.payload for p in parties],
        "serialized": [p.bytes.serialized for p in parties], "wire": [given(p.bytes.wire) for p in parties]}
    layers = [k for k, values in by_layer.items() if any(v is not None for v in values)]
    width = 0.8 / len(layers)
    for i, key in enumerate(layers):
        ax.bar(x + (i - (len(layers) - 1) / 2) * width, [v or 0 for v in by_layer[key]], width=width,
               label={"predicted": "predicted", "payload": "payload (arrays)",
                      "serialized": "serialized (protobuf)", "wire": "wire (TLS, HTTP/2)"}[key])
    ax.set_xticks(x, [p.name for p in parties])
    ax.set(ylabel="bytes uploaded", title="Bytes per party")
    fig.legend(loc="outside right center", fontsize=8, frameon=False)
    figures["bytes"] = _save_outside(fig, out, "bytes")
    privacy = report.privacy if isinstance(report.privacy, dict) else {}
    bars = [(f"{party}.{col}", attack, value)
            for party, entry in privacy.items()
            for attack, result in entry.attacks.items() if isinstance(result, AttackScore)
            for col, value in result.columns.items()]
    if bars:
        attacks = sorted({a for _, a, _ in bars})
        labels = list(dict.fromkeys(c for c, _, _ in bars))
        fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(labels)), 4), layout="constrained")
        width = 0.8 / len(attacks)
        zeros: dict[int, list[float]] = {}  # column -> where its zero bars are
        for i, attack in enumerate(attacks):
            values = {c: v for c, a, v in bars if a == attack}
            xs = np.arange(len(labels)) + i * width
            ax.bar(xs, [values.get(c, np.nan) for c in labels], width=width, label=attack_name(attack),
                   color=f"C{i}")
            for j, (x_, c) in enumerate(zip(xs, labels)):  # a zero bar is invisible: mark it, not read as missing
                if c in values and abs(values[c]) < 1e-9:
                    ax.plot([x_], [0], marker="v", color="#b00", markersize=7)
                    zeros.setdefault(j, []).append(x_)
        for where in zeros.values():  # one "0" per column, however many of its attacks scored zero (not "00")
            ax.annotate("0", (float(np.mean(where)), 0), textcoords="offset points", xytext=(0, 7), ha="center",
                        fontsize=7, color="#b00")
        ax.set_xticks(np.arange(len(labels)) + 0.4 - width / 2, labels, rotation=60, ha="right", fontsize=7)
        ax.set(ylabel="column privacy (higher: safer)", title="Privacy per original column")
        fig.legend(loc="outside right center", fontsize=8, frameon=False)
        figures["privacy"] = _save_outside(fig, out, "privacy")
    artifacts = artifacts or RunArtifacts()
    outcome = artifacts.outcome
    if outcome is not None and artifacts.joined is not None and artifacts.original_labels is not None:
        figures["clusters"] = clusters_figure(artifacts.joined, outcome.labels, artifacts.original_labels, out,
                                              seed=report.seed)
    for party, reconstructions in artifacts.attacks.items():
        figures[f"attacks_{party}"] = attack_figure(party, reconstructions, out)
    return figures


def _pca2(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The records' coordinates on the first two principal components, and the share of variance of each."""
    centred = X - X.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    coords = centred @ vt[:2].T
    if coords.shape[1] < 2:  # a single column: plot it against zero
        coords = np.column_stack([coords, np.zeros(len(coords))])
    share = s**2 / max(float(np.sum(s**2)), 1e-300)
    return coords, np.pad(share[:2], (0, 2 - len(share[:2])))


#: Records drawn at most in a cluster picture (a seeded sample beyond), to keep the page light.
PICTURE_ROWS = 3000


def clusters_figure(joined: np.ndarray, private: np.ndarray, plain: np.ndarray, out: Path, seed: int = 0) -> Path:
    """The original joined data on its first two principal components, side by side: coloured by the
    clustering the coordinator computed on the disguised data, and by the same clustering of the
    original data (matched so that agreeing clusters share a colour)."""
    from scipy.optimize import linear_sum_assignment

    rows = np.arange(len(joined))
    if len(rows) > PICTURE_ROWS:
        rows = np.sort(np.random.default_rng(seed).choice(len(rows), PICTURE_ROWS, replace=False))
    coords, share = _pca2(joined[rows])
    private, plain = np.asarray(private)[rows], np.asarray(plain)[rows]
    # recolour the private clusters after the plain cluster each overlaps most (best one-to-one matching)
    a, b = np.unique(private), np.unique(plain)
    overlap = np.array([[np.sum((private == i) & (plain == j)) for j in b] for i in a])
    r, c = linear_sum_assignment(-overlap)
    colour = {a[i]: b[j] for i, j in zip(r, c)}
    spare = iter(range(int(max(b.max(initial=0), a.max(initial=0))) + 1, 10**6))
    private_shown = np.array([colour[x] if x in colour else colour.setdefault(x, next(spare)) for x in private])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharex=True, sharey=True, layout="constrained")
    cmap = plt.get_cmap("tab10")
    for ax, labels, title in ((axes[0], private_shown, "clustered privately (what the coordinator found)"),
                              (axes[1], plain, "clustered in the clear (same algorithm, original data)")):
        for value in np.unique(labels):
            mask = labels == value
            ax.scatter(coords[mask, 0], coords[mask, 1], s=12, alpha=0.8, rasterized=True,
                       color="#999999" if value < 0 else cmap(int(value) % 10),
                       label="noise" if value < 0 else f"cluster {value}")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(f"first principal component ({share[0]:.0%} of the variance)")
    axes[0].set_ylabel(f"second principal component ({share[1]:.0%})")
    disagree = private_shown != plain
    if disagree.any():
        axes[0].scatter(coords[disagree, 0], coords[disagree, 1], s=40, facecolors="none", edgecolors="black",
                        linewidths=0.8, label="differs from the clear", rasterized=True)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center", fontsize=8, frameon=False)
    fig.suptitle(f"{len(rows):,} records of the original joined data (normalised), on its first two principal components",
                 fontsize=10)
    return _save_outside(fig, out, "clusters")


def _save_outside(fig, out: Path, name: str) -> Path:
    """Save a figure whose legend sits outside its axes (bbox_inches keeps it in the picture)."""
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / f"{name}.png", dpi=100, bbox_inches="tight")
    fig.savefig(out / f"{name}.svg", bbox_inches="tight")
    plt.close(fig)
    return out / f"{name}.png"


def attack_name(name: str) -> str:
    """An attack's name in figure legends (its registered ``legend``; the name itself if unregistered)."""
    return ATTACKS[name].legend if name in ATTACKS else name


def attack_figure(party: str, attacks: dict[str, dict], out: Path, limit: int = 500) -> Path:
    """Each attack's reconstruction of each of ``party``'s original columns against the true values:
    one panel per column, a point per record; points on the diagonal were recovered exactly."""
    columns = next(iter(attacks.values()))["columns"]
    n = len(columns)
    per_row = min(n, 5)
    fig, axes = plt.subplots((n + per_row - 1) // per_row, per_row, figsize=(2.6 * per_row, 2.6 * ((n + per_row - 1) // per_row)),
                             squeeze=False, layout="constrained")
    for j, column in enumerate(columns):
        ax = axes.flat[j]
        low, high = np.inf, -np.inf
        for i, (attack, kept) in enumerate(attacks.items()):
            truth, estimate = kept["original"][:limit, j], kept["estimate"][:limit, j]
            ax.scatter(truth, estimate, s=6, alpha=0.6, color=f"C{i}", label=attack_name(attack),
                       rasterized=True)  # points as pixels in the SVG too: a third of the size
            low, high = min(low, truth.min()), max(high, truth.max())
        ax.plot([low, high], [low, high], color="black", linewidth=0.8, label="exact recovery")
        ax.set_title(column, fontsize=8)
        ax.tick_params(labelsize=7)
        if j % per_row == 0:
            ax.set_ylabel("attacker's estimate", fontsize=8)
        ax.set_xlabel("true value (normalised)", fontsize=8)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=8, frameon=False)
    fig.suptitle(f"What an attacker recovers of {party}'s columns", fontsize=10)
    return _save_outside(fig, out, f"attacks_{party}")
