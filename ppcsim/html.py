"""Self-contained HTML reports (tables and figures embedded) that open in any browser."""

from __future__ import annotations

import base64
import html
from pathlib import Path

STYLE = """
body{font-family:system-ui,sans-serif;max-width:70em;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
img{max-width:100%;border:1px solid #eee;margin:.5em 0}
.note{color:#555;font-size:.9em}
"""


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}"
    return html.escape(str(value))


def table(header: list[str], rows: list[list]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def image(path: Path, alt: str) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def page(title: str, sections: list[str]) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>{''.join(sections)}</body></html>")


def run_page(report: dict, figures: dict[str, Path]) -> str:
    """One run: parties and bytes, join, clustering, utility, privacy, with the figures."""
    s = [f"<p class='note'>scenario file {html.escape(report['scenario_file'])}, seed {report['seed']}, "
         f"state {report['state']}{': ' + html.escape(report['error']) if report.get('error') else ''}</p>"]
    s.append("<h2>What each party sent</h2>")
    s.append(table(
        ["party", "method", "rows", "columns", "output", "predicted B", "payload B", "serialized B"],
        [[p["name"], p["method"], p["rows"], ", ".join(p["columns"]), p["output_dims"],
          p["bytes"]["predicted"], p["bytes"]["payload"], p["bytes"]["serialized"]] for p in report["parties"]],
    ))
    s += [image(figures[k], k) for k in ("bytes",) if k in figures]
    j, c = report["join"], report["clustering"]
    if j["rows_joined"] is not None:
        s.append(f"<h2>Join and clustering</h2><p>{j['rows_joined']:,} records in common; dropped: "
                 + ", ".join(f"{html.escape(k)} {v}" for k, v in j["dropped"].items())
                 + f".</p><p>{html.escape(c['algorithm'])} on {html.escape(c['input'] or '')}: "
                 f"{c['n_clusters_found']} clusters of sizes {', '.join(map(str, c['sizes']))}.</p>")
    u = report.get("utility")
    if u and "secure_aggregation" in report:
        s.append(secure_section(report))
        u = None
    if u:
        s.append(f"<h2>Utility</h2><p>stress (004 eq. 6) {u['stress']:.4f} over {u['stress_records']:,} records; "
                 f"reference: {html.escape(u['reference'])}.</p>")
        against = [(k, u[k]) for k in ("vs_original", "vs_truth", "original_vs_truth") if k in u]
        keys = list(against[0][1])
        s.append(table(["agreement", *keys], [[name.replace("_", " "), *[m[k] for k in keys]] for name, m in against]))
    p = report.get("privacy")
    if p and "skipped" not in p and "arbiter" not in p:
        s.append("<h2>Privacy</h2><p class='note'>Column privacy: the spread of the attacker's error on each "
                 "original column scaled to [0, 1] (002 §6.1.1); 0 means recovered exactly.</p>")
        rows = []
        for party, entry in p.items():
            for attack, r in entry["attacks"].items():
                rows.append([party, attack, r.get("knowledge", r.get("skipped")), r.get("min"), r.get("mean"), r.get("vd")])
        s.append(table(["party", "attack", "attacker knows", "min", "mean", "VD"], rows))
        s += [image(figures[k], k) for k in ("privacy",) if k in figures]
    t = report["communication"]["totals"]
    s.append(f"<h2>Communication</h2><p>up: {t['up']['messages']} messages, {t['up']['serialized']:,} B serialized "
             f"({t['up']['payload']:,} B payload); down: {t['down']['messages']} messages, {t['down']['serialized']:,} B. "
             "Every message is in report.json under communication.ledger.</p>")
    return page(f"ppc-sim run: {report['scenario']}", s)


def secure_section(report: dict) -> str:
    """A secure-aggregation run: its rounds, utility and what the arbiter learned (docs/secure-aggregation.md)."""
    a, u, p = report["secure_aggregation"], report["utility"], report.get("privacy", {})
    out = [f"<h2>Secure aggregation</h2><p>{a['rounds']} rounds after {a.get('seeding_steps', 0)} seeding steps "
           f"(init {html.escape(str(a.get('init_method')))}); labels "
           f"{'equal' if u['labels_equal_same_init'] else 'not equal'} to scikit-learn's KMeans from the same "
           f"initial records; ARI against the usual clustering of the original data {u['vs_original']['ari']:.3f}."
           "</p>"]
    out.append(table(["round", "seconds", "labels changed", "payload up B", "payload down B"],
                     [[r["index"], f"{r['seconds']:.3f}", r["changed"], r["up_payload"], r["down_payload"]]
                      for r in a["per_round"]]))
    if "arbiter" in p:
        out.append("<p>The coordinator saw: " + "; ".join(map(html.escape, p["arbiter"]["sees"]))
                   + ". It never saw: " + "; ".join(map(html.escape, p["arbiter"]["never_sees"])) + ".</p>")
        ml = p["multilateration"]
        out.append("<p>Multilateration from the initial records: "
                   + (html.escape(ml["skipped"]) if "skipped" in ml else
                      f"column privacy min {ml['min']:.3f}, mean {ml['mean']:.3f} (0 = recovered)") + ".</p>")
    return "".join(out)


def sweep_page(title: str, rows: list[dict], figures: dict[str, Path]) -> str:
    """A sweep: the figures, then one table row per run."""
    s = [image(path, name) for name, path in figures.items()]
    header = list(dict.fromkeys(k for r in rows for k in r))
    s.append("<h2>Runs</h2>" + table(header, [[r.get(k) for k in header] for r in rows]))
    return page(f"ppc-sim sweep: {title}", s)
