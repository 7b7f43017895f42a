"""Secure-aggregation k-means beside the one-shot disguises: bytes, rounds, time, utility, what the coordinator learns.

Runs scenarios/comparison.toml's data (synthetic blobs, 8 columns, 5
clusters, two parties of 4 columns) with every party's method set to `none`,
`drbt` (k = 1 and k = 3 per party), `osbr` (average linkage; up to 1e4
records: at 1e5 it would send 40 GB per party) and by secure aggregation, at
ROWS records, on an unshaped loopback link and on a 100 Mbit/s, 20 ms link;
then scenarios/literature-2d.toml (100,000 2-D points, 5 clusters, two
parties) with none, drbt and secure aggregation. Every run is a real `ppc run`
(separate processes, mutual TLS, the relay counting and shaping each party's
bytes). Utility is the ARI of each run's labels against the `none` run's (k-means on the
joined normalised data, the same settings). Writes docs/comparison.md,
docs/comparison.csv and docs/figures/comparison.png (and .svg).

    python bench/comparison.py [--rows 1000 10000 100000] [--out docs]
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import numpy as np
import tomli_w

ROOT = Path(__file__).resolve().parent.parent
LINKS = {"unshaped": None, "100 Mbit/s, 20 ms": {"bandwidth_mbit": 100, "latency_ms": 20}}
#: Largest rows osbr is run at: m(m-1)/2 float64 per party (0.4 GB at 1e4, 40 GB at 1e5).
OSBR_MAX_ROWS = 10_000
#: Rows up to which the observer also runs the attacks (they sample, but ICA and multilateration take a while).
ATTACK_MAX_ROWS = 1_000

VARIANTS = {
    "none": {"method": "none"},
    "drbt k=1": {"method": "drbt", "k": 1},
    "drbt k=3": {"method": "drbt", "k": 3},
    "osbr": {"method": "osbr"},
    "secure aggregation": None,
}
LEARNS = {
    "none": "every party's normalised values",
    "drbt k=1": "a 1-D random projection of each party's block (known records fit the projection)",
    "drbt k=3": "a 3-D random projection of each party's 4 columns (known records fit it; k_j >= d_j would give it away)",
    "osbr": "all pairwise distances within each party's block (n + 1 known records locate every record)",
    "secure aggregation": "every record's distance to every centre in every round, the labels and sizes; "
                          "never a party's values or centre block",
}


def variant(raw: dict, name: str, rows: int, link: dict | None) -> dict:
    """The scenario table of one run."""
    raw = copy.deepcopy(raw)
    raw["data"]["rows"] = rows
    raw["name"] = f"{raw['name']}-{name.replace(' ', '-').replace('=', '')}-{rows}"
    raw["security"] = {"mutual": True}
    raw.pop("network", None)
    if link:
        raw["network"] = dict(link)
    settings = VARIANTS[name]
    clustering = raw["clustering"]
    if settings is not None:
        clustering.pop("protocol", None)
        for p in raw["parties"]:
            p.update(settings)
            if settings.get("k", 0) > len(p["columns"]):
                p["k"] = len(p["columns"])
        if settings["method"] == "osbr":
            clustering.update(algorithm="agglomerative", linkage="average")
    return raw


def run(raw: dict, tmp: Path, evaluate: bool) -> tuple[float, dict, dict]:
    """One `ppc run`: wall seconds, its report, its labels by id."""
    path = tmp / f"{raw['name']}.toml"
    path.write_text(tomli_w.dumps(raw))
    out = tmp / raw["name"]
    options = [] if evaluate else ["--no-eval"]
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ppcsim", "run", str(path), "--out", str(out), "--quiet",
                           *options], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(f"ppc run {raw['name']} failed:\n{proc.stderr}")
    report = json.loads((out / "report.json").read_text())
    lines = (out / "labels.csv").read_text().splitlines()[1:]
    labels = dict(line.rsplit(",", 1) for line in lines)
    return seconds, report, labels


def ari(labels: dict, reference: dict) -> float:
    from sklearn.metrics import adjusted_rand_score

    ids = sorted(reference)
    return float(adjusted_rand_score([reference[i] for i in ids], [labels[i] for i in ids]))


def privacy(report: dict) -> str:
    """The report's privacy in one phrase: the lowest column privacy any attack reached."""
    p = report.get("privacy")
    if not p:
        return "-"
    if "arbiter" in p:
        ml = p["multilateration"]
        return "multilateration: skipped (k < d + 1)" if "skipped" in ml else f"multilateration min {ml['min']:.3f}"
    found = [(a, r["min"]) for e in p.values() if isinstance(e, dict) and "attacks" in e
             for a, r in e["attacks"].items() if "min" in r]
    if not found:
        return "-"
    attack, low = min(found, key=lambda x: x[1])
    return f"{attack} min {low:.3f}"


def measure(report: dict) -> dict:
    coord = report["timing"]["coordinator"]
    secure = report.get("secure_aggregation")
    return {
        "payload_up": report["communication"]["totals"]["up"]["payload"],
        "payload_down": report["communication"]["totals"]["down"]["payload"],
        "wire": sum(p["bytes"]["wire"] + p["network"]["wire_down"] for p in report["parties"]),
        "rounds": secure["rounds"] if secure else 1,
        # from the last party's Join (the parties' processes start at different times) to the result
        "protocol_seconds": coord["done"] - max(e["time"] for e in report["communication"]["ledger"]
                                               if e["rpc"] == "Join" and e["direction"] == "up"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    parser.add_argument("--no-literature", action="store_true", help="skip the 100,000-point 2-D workload")
    args = parser.parse_args()
    base = tomllib.loads((ROOT / "scenarios" / "comparison.toml").read_text())
    literature = tomllib.loads((ROOT / "scenarios" / "literature-2d.toml").read_text())
    rows_out = []
    with tempfile.TemporaryDirectory(prefix="ppc-compare-") as tmp:
        tmp = Path(tmp)
        plan = [("comparison", base, m, name, link) for m in args.rows for link in LINKS for name in VARIANTS
                if not (name == "osbr" and m > OSBR_MAX_ROWS)]
        if not args.no_literature:
            plan += [("literature", literature, literature["data"]["rows"], name, link)
                     for link in LINKS for name in ("none", "drbt k=1", "secure aggregation")]
        reference: dict = {}
        for i, (workload, raw, m, name, link) in enumerate(plan):
            evaluate = m <= ATTACK_MAX_ROWS or (workload == "literature" and name == "secure aggregation")
            table = variant(raw, name, m, LINKS[link])
            print(f"[{i + 1}/{len(plan)}] {workload} m={m:,} {name}, {link} ...", end=" ", flush=True)
            seconds, report, labels = run(table, tmp, evaluate)
            if name == "none":
                reference[(workload, m, link)] = labels
            row = {"workload": workload, "rows": m, "variant": name, "link": link, "wall_seconds": seconds,
                   **measure(report), "ari_vs_plain": ari(labels, reference[(workload, m, link)]),
                   "privacy": privacy(report), "coordinator_learns": LEARNS[name]}
            rows_out.append(row)
            print(f"{row['protocol_seconds']:.2f} s, {row['payload_up']:,} B up, {row['rounds']} rounds, "
                  f"ARI {row['ari_vs_plain']:.3f}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "comparison.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows_out[0]))
        writer.writeheader()
        writer.writerows(rows_out)
    figure(rows_out, args.out / "figures")
    print(f"wrote {args.out / 'comparison.csv'} and {args.out / 'figures' / 'comparison.png'}")


def figure(rows: list[dict], folder: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    data = [r for r in rows if r["workload"] == "comparison"]
    for name in VARIANTS:
        for link, style in zip(LINKS, ("--", "-")):
            pts = sorted((r["rows"], r["payload_up"] + r["payload_down"], r["protocol_seconds"])
                         for r in data if r["variant"] == name and r["link"] == link)
            if not pts:
                continue
            m, b, s = (np.array(x) for x in zip(*pts))
            if style == "-":
                left.loglog(m, b, "o-", label=name)
            right.loglog(m, s, "o" + style, label=f"{name} ({link})" if style == "-" else None,
                         color=left.lines[-1].get_color() if left.lines else None)
    left.set(xlabel="records m", ylabel="payload bytes, up and down (all parties)", title="bytes")
    right.set(xlabel="records m", ylabel="seconds, last Join to result", title="time (dashed: unshaped)")
    left.legend(fontsize=8)
    right.legend(fontsize=7)
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(folder / "comparison.png", dpi=120)
    fig.savefig(folder / "comparison.svg")
    plt.close(fig)


if __name__ == "__main__":
    main()
