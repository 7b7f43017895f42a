"""What a run leaves behind: report.json, labels.csv, sent/<party>.npz, and the printed summary."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from coordinator.clustering import SECURE
from coordinator.secagg import accounting
from coordinator.session import STATE_NAMES, Session
from parties.run import peak_rss
from ppcsim.scenario import Scenario
from protos.ids import as_text


def write_atomic(path: Path, data: bytes | Callable[[BinaryIO], None]) -> None:
    """Write ``data`` (bytes, or a function writing to a file) to ``path`` through a temporary file,
    so that ``path`` is never half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            data(fh) if callable(data) else fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def output_dims(shapes: dict[str, list[int]]) -> int:
    """Columns per record sent (rows of features), or values per condensed array (m(m-1)/2)."""
    first = next(iter(shapes.values()))
    return first[1] if len(first) == 2 else first[0]


def build_report(scenario: Scenario, session: Session, summaries: dict[str, dict], timing: dict) -> dict:
    """The run's report as a JSON-ready dict (see README, "What a run writes")."""
    outcome = session.outcome
    bytes_by_party = session.byte_summary()
    parties = []
    for cfg in scenario.parties:
        contribution = session.contributions.get(cfg.name)
        upload = session.uploads.get(cfg.name)
        shapes = {a.name: list(a.shape) for a in upload.header.arrays} if contribution else {}
        b = bytes_by_party[cfg.name]
        parties.append(
            {
                "name": cfg.name,
                "method": cfg.method,
                "params": cfg.effective_params,
                "normalize": summaries.get(cfg.name, {}).get("normalize", cfg.normalize),
                "seed": cfg.seed,
                "source": cfg.source,
                "rows": len(contribution.ids) if contribution else None,
                "columns": list(cfg.columns),
                "output_dims": output_dims(shapes) if shapes else None,
                "sends": ("dissimilarities" if len(next(iter(shapes.values()))) == 1 else "features") if shapes else None,
                "arrays": shapes,
                "bytes": {k: b[k] for k in ("predicted", "payload", "serialized")},
                "timing": summaries.get(cfg.name, {}).get("timing", {}),
                "peak_rss": summaries.get(cfg.name, {}).get("peak_rss"),
            }
        )
    totals = session.ledger.totals()
    report = {
        "scenario": scenario.name,
        "scenario_file": str(scenario.path),
        "seed": scenario.seed,
        "state": STATE_NAMES[session.state],
        "error": session.error or None,
        "parties": parties,
        "join": {
            "rows_joined": len(outcome.join.ids) if outcome else None,
            "dropped": outcome.join.dropped if outcome else None,
        },
        "clustering": {
            **{k: v for k, v in session.spec.clustering.__dict__.items()},
            "input": outcome.combined.description if outcome else None,
            "embedding": outcome.combined.embedding if outcome else None,
            "sizes": outcome.sizes if outcome else None,
            "noise": outcome.noise if outcome else None,
        },
        "security": {
            "tls": scenario.security.tls,
            "mutual": scenario.security.mutual,
            "tokens": scenario.security.tokens,
            "parties": dict(session.protection),
        },
        "communication": {
            "totals": {
                direction: {
                    key: sum(t[direction][key] for t in totals.values()) for key in ("messages", "payload", "serialized")
                }
                for direction in ("up", "down")
            },
            "by_party": totals,
            "ledger": session.ledger.as_dicts(),
        },
        "timing": {**timing, "coordinator": session.timing},
        # measured when the session is over, before any evaluation: the process hosting the coordinator
        "memory": {"coordinator_peak_rss": peak_rss()},
    }
    report["clustering"]["n_clusters_found"] = len(outcome.sizes) if outcome else None
    if session.spec.clustering.protocol == SECURE:
        secure = report["secure_aggregation"] = accounting(session)
        for p in report["parties"]:
            p["method"], p["sends"] = SECURE, "masked partial distances"
            p["output_dims"] = session.spec.clustering.n_clusters
            if "by_party" in secure:
                p["bytes"]["predicted"] = secure["by_party"][p["name"]]["predicted"]["up"]
            p["rounds"] = summaries.get(p["name"], {}).get("rounds")
    return report


def write_outputs(out: Path, report: dict, session: Session, sent: bool = True) -> None:
    """report.json, labels.csv (id,cluster of the joined records) and, with ``sent``, sent/<party>.npz."""
    write_atomic(out / "report.json", json.dumps(report, indent=2).encode())
    outcome = session.outcome
    if outcome is not None:
        lines = ["id,cluster"] + [f"{i},{c}" for i, c in zip(outcome.join.ids.tolist(), outcome.labels.tolist())]
        write_atomic(out / "labels.csv", ("\n".join(lines) + "\n").encode())
    for party, c in session.contributions.items():
        if not sent or not c.arrays:
            continue  # the coordinator only summed this party's dissimilarities (keep_uploads off)
        write_atomic(out / "sent" / f"{party}.npz", lambda fh, c=c: np.savez(fh, ids=as_text(c.ids), **c.arrays))


def _n(x) -> str:
    return "-" if x is None else f"{x:,}"


def summary_table(report: dict) -> str:
    """The per-party table printed at the end of a run."""
    head = ("party", "rows", "cols", "method", "out", "predicted B", "payload B", "serialized B", "wire B")
    rows = []
    for p in report["parties"]:
        method = p["method"] + (f"/{p['params']['projection']}" if "projection" in p["params"] else "")
        method += f"/{p['params']['metric']}" if "metric" in p["params"] else ""
        if p["output_dims"] is None:
            out = "-"
        elif p["sends"] == "dissimilarities":
            out = f"{len(p['arrays'])}x{p['output_dims']:,} pairs"
        else:
            out = f"{p['output_dims']} dims"
        b = p["bytes"]
        rows.append((p["name"], _n(p["rows"]), str(len(p["columns"])), method, out,
                     _n(b["predicted"]), _n(b["payload"]), _n(b["serialized"]), _n(b.get("wire"))))
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    fmt = lambda r: "  ".join(c.ljust(w) if i in (0, 3, 4) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    lines = [fmt(head), fmt(tuple("-" * w for w in widths)), *map(fmt, rows)]
    j, c, t = report["join"], report["clustering"], report["communication"]["totals"]
    if j["rows_joined"] is not None:
        dropped = ", ".join(f"{k} {v}" for k, v in j["dropped"].items())
        lines.append(f"join: {j['rows_joined']:,} records in common (dropped: {dropped})")
        sizes = ", ".join(map(str, c["sizes"]))
        noise = f", noise {c['noise']}" if c["noise"] else ""
        lines.append(f"clustering: {c['algorithm']} on {c['input']}")
        lines.append(f"clusters: {c['n_clusters_found']} (sizes {sizes}{noise})")
    secure = report.get("secure_aggregation")
    if secure and secure.get("rounds"):
        per = secure["per_round"]
        exact = all(p["exact"] for p in secure.get("by_party", {}).values())
        lines.append(f"secure aggregation: {secure['rounds']} rounds ({'converged' if secure['converged'] else 'stopped'}"
                      f"), {sum(r['seconds'] for r in per):.2f} s; payload "
                      + ("equal to" if exact else "DIFFERENT from") + " the prediction (m*k*8 up, m*4 down per round)")
    u = report.get("utility")
    if u and "labels_equal_same_init" in u:
        lines.append(f"utility: labels {'equal' if u['labels_equal_same_init'] else 'NOT equal'} to scikit-learn's "
                     f"KMeans from the same initial records; vs clustering the original data: ARI "
                     f"{u['vs_original']['ari']:.3f}")
        if "fixed_point" in u:
            lines.append(f"         fixed point 2^{u['fixed_point']['scale_bits']}: largest distance error "
                         f"{u['fixed_point']['max_abs_error']:.2g} (bound {u['fixed_point']['bound']:.2g})")
        if "vs_truth" in u:
            lines.append(f"         vs true labels: ARI {u['vs_truth']['ari']:.3f} "
                         f"(original data: {u['original_vs_truth']['ari']:.3f})")
        u = None
    if isinstance(report.get("privacy"), dict) and "arbiter" in report["privacy"]:
        priv = report["privacy"]
        for party, entry in priv.get("posts", {}).get("by_party", {}).items():
            lines.append(f"privacy of {party}: its posts vs its partial distances: correlation "
                         f"{entry['correlation_with_partial_distances']:+.3f}, uniform (KS p = "
                         f"{entry['uniformity_ks_pvalue']:.2f})")
        ml = priv["multilateration"]
        lines.append("privacy of the joined records against the arbiter: multilateration from the initial records "
                     + (f"skipped ({ml['skipped']})" if "skipped" in ml else
                        f"column privacy min {ml['min']:.3f} mean {ml['mean']:.3f} (0 = recovered)"))
    if u:
        o = u["vs_original"]
        lines.append(f"utility: stress {u['stress']:.4f} (004 eq. 6, {u['stress_records']:,} records); vs clustering "
                     f"the original data: ARI {o['ari']:.3f}, misclassified {o['misclassification']:.1%}")
        if "vs_truth" in u:
            lines.append(f"         vs true labels: ARI {u['vs_truth']['ari']:.3f} "
                         f"(original data: {u['original_vs_truth']['ari']:.3f})")
    for party, entry in report.get("privacy", {}).items():
        if isinstance(entry, dict) and "attacks" in entry:
            found = ", ".join(f"{a} min {r['min']:.3f} mean {r['mean']:.3f}" if "min" in r else f"{a} skipped"
                              for a, r in entry["attacks"].items())
            lines.append(f"privacy of {party} (column privacy, 0 = recovered): {found}")
    for p in report["parties"]:
        if "network" not in p or p["network"]["link"].startswith("loopback"):
            continue
        n = p["network"]
        took = p["timing"].get("upload")
        lines.append(f"network {p['name']}: {n['link']}; join and upload took "
                     + (f"{took:.2f} s" if took is not None else "-"))
    protection = {f"{v['transport']}, identified by {v['identity']}" for v in report["security"]["parties"].values()}
    if protection:
        lines.append(f"security: {'; '.join(sorted(protection))}")
    lines.append(
        f"wire: up {t['up']['messages']} messages, {t['up']['serialized']:,} B serialized "
        f"({t['up']['payload']:,} B payload); down {t['down']['messages']} messages, {t['down']['serialized']:,} B"
    )
    return "\n".join(lines)
