"""The three ways side by side (one-shot disguises, secure aggregation, MPC): bytes, rounds, time, utility, what the
coordinator learns, message latencies in sequence.

Runs scenarios/comparison.toml's data (synthetic blobs, 8 columns, 5
clusters, two parties of 4 columns) with every party's method set to `none`,
`drbt` (k = 1 and k = 3 per party), `osbr` (average linkage; up to 1e4
records: at 1e5 it would send 40 GB per party), by secure aggregation and as
an MPC (up to MPC_MAX_ROWS records), at ROWS records (1e3 to 1e6), on an
unshaped loopback link and on a 100 Mbit/s, 20 ms link; then
scenarios/literature-2d.toml (100,000 2-D points, 5 clusters, two parties)
with none, drbt and secure aggregation, and the MPC at LITERATURE_MPC_ROWS of
its points; then the latency probe (PROBE_ROWS records, with and without
PROBE_LATENCY_MS of one-way latency). Every run is a real `ppc run`
(separate processes, mutual TLS, the relay counting and shaping each party's
bytes). Utility is the ARI of each run's labels against the `none` run's (k-means on the
joined normalised data, the same settings). Writes docs/comparison.md,
docs/comparison.csv and docs/figures/comparison.png; rows of
docs/comparison.csv that a run does not remeasure stay (``--fresh``: not).

    python bench/comparison.py                    # everything; hours on two cores, most of them the MPC's
    python bench/comparison.py --rows 1000 --only comparison latency --variants none "drbt k=1" "drbt k=3" osbr \
        "secure aggregation"                      # the small rows, each run 3 times (--repeats)
    python bench/comparison.py --rows 1000 5000 --only comparison --variants mpc    # a part
    python bench/comparison.py --from-csv         # only rewrite the page and figure from docs/comparison.csv
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

from parties.spu_env import problem as spu_problem

sys.path.insert(0, str(Path(__file__).resolve().parent))
import comparison_spread as spread  # noqa: E402
from comparison_figure import figure  # noqa: E402
from comparison_learns import LEARNS  # noqa: E402
from harness import Figures  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LINKS = {"unshaped": None, "100 Mbit/s, 20 ms": {"bandwidth_mbit": 100, "latency_ms": 20}}
#: Largest rows osbr is run at: m(m-1)/2 float64 per party (0.4 GB at 1e4, 40 GB at 1e5).
OSBR_MAX_ROWS = 10_000
#: Rows up to which the observer also runs the attacks (they sample, but ICA and multilateration take a while).
ATTACK_MAX_ROWS = 1_000

VARIANTS = {
    "none": {"method": "none"}, "drbt k=1": {"method": "drbt", "k": 1}, "drbt k=3": {"method": "drbt", "k": 3},
    "osbr": {"method": "osbr"}, "secure aggregation": None,
    "labels only": {"protocol": "secure_aggregation", "reveal": "labels"},
    "mpc": {"protocol": "mpc"},
    "mpc spu": {"protocol": "mpc", "engine": "spu"},
}
#: The MPC-backed ways (an MPC argmin, a full MPC): run up to MPC_MAX_ROWS, two parties with the helper.
RELAYED = ("labels only", "mpc")
#: Largest rows the MPC (MPyC, pure Python: megabytes and seconds per record and round) is run at.
MPC_MAX_ROWS = 5_000
#: Largest rows the MPC on SPU (compiled ABY3, in its own environment: `ppc spu-env`) is run at.
MPC_SPU_MAX_ROWS = 100_000
#: Points of the published 2-D workload the MPC is run at (measured there, not extrapolated to 100,000),
#: beside a `none` run of the same points for its ARI.
LITERATURE_MPC_ROWS = 2_000
#: The latency probe: each way at PROBE_ROWS records, unshaped and on a link of PROBE_LATENCY_MS one-way latency
#: with no bandwidth limit; the time the latency added, over the latency and the steps, is the one-way latencies
#: each step waits for in sequence. 200 ms, not 20: the added time must stand out of a shared machine's noise.
PROBE_ROWS = 100
PROBE_LATENCY_MS = 200
PROBE_LINKS = {"unshaped": None, f"{PROBE_LATENCY_MS} ms, no bandwidth limit": {"latency_ms": PROBE_LATENCY_MS}}
PROBE_VARIANTS = ("drbt k=3", "secure aggregation", "mpc")
#: Seconds an MPC run may take (its session's deadline): pure Python on a shared machine, hours at 5,000 records.
MPC_DEADLINE = 4 * 3600
#: Lloyd rounds of the MPC runs: an MPC does not stop early, so it runs a fixed number (what secure
#: aggregation needed at 1,000 records); its initial centres are k records drawn with the seed, not k-means++.
MPC_ROUNDS = 4


def variant(raw: dict, name: str, rows: int, link: dict | None) -> dict:
    """The scenario table of one run."""
    raw = copy.deepcopy(raw)
    raw["data"]["rows"] = rows
    # one output folder per run: the shaped and unshaped runs of a variant must not share one
    raw["name"] = f"{raw['name']}-{name.replace(' ', '-').replace('=', '')}-{rows}" + ("-shaped" if link else "")
    raw["security"] = {"mutual": True}
    raw.pop("network", None)
    raw.update({"network": dict(link)} if link else {})
    settings = VARIANTS[name]
    clustering = raw["clustering"]
    if name == "labels only":  # k records drawn with the seed (no k-means++ seeding: it would open distances)
        for key in ("init", "tol", "scale_bits"):
            clustering.pop(key, None)
        clustering.update(reveal="labels", helper=len(raw["parties"]) == 2)
        raw["deadline"] = max(raw.get("deadline", 600), MPC_DEADLINE)
        return raw
    if name in ("mpc", "mpc spu"):  # two parties: the coordinator's helper is the third share-holder
        for key in ("init", "tol", "scale_bits"):
            clustering.pop(key, None)
        clustering.update(protocol="mpc", helper=len(raw["parties"]) == 2, max_iter=MPC_ROUNDS,
                          engine="spu" if name == "mpc spu" else "mpyc")
        raw["deadline"] = max(raw.get("deadline", 600), MPC_DEADLINE)
        return raw
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
    out = Path(tempfile.mkdtemp(prefix=f"{raw['name']}-", dir=tmp))  # a new folder per run: links share names
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


def save(path: Path, kept: list[dict], measured: list[dict]) -> list[dict]:
    """Write ``measured`` and the rows of ``kept`` it does not remeasure to ``path``; return them all."""
    done = {(r["workload"], r["rows"], r["variant"], r["link"]) for r in measured}
    rows = [r for r in kept if (r["workload"], r["rows"], r["variant"], r["link"]) not in done] + measured
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def read_rows(path: Path) -> list[dict]:
    """The rows of a comparison.csv, with their numbers as numbers."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        for key in ("rows", "payload_up", "payload_down", "wire", "rounds"):
            r[key] = int(r[key])
        r["steps"] = int(r.get("steps") or r["rounds"])  # rows written before the latency probe have neither
        r["sequential"] = int(r["sequential"]) if r.get("sequential") else ""
        spread.read(r)
        for key in ("wall_seconds", "protocol_seconds", "ari_vs_plain"):
            r[key] = float(r[key])
    return rows


def ari(labels: dict, reference: dict) -> float:
    from sklearn.metrics import adjusted_rand_score

    ids = sorted(reference)
    return float(adjusted_rand_score([reference[i] for i in ids], [labels[i] for i in ids]))


def privacy(report: dict) -> str:
    """The report's privacy in one phrase: the lowest column privacy any attack reached."""
    p = report.get("privacy")
    if not p:
        return "-"
    if "roles" in p:  # an MPC: the coordinator holds sealed frames only
        return "nothing to attack (sealed frames)"
    if "arbiter" in p:
        ml, placed = p["multilateration"], p["arbiter"].get("placement", {}).get("relative_error")
        own = "" if placed is None else f"the arbiter's own attack: relative error {placed:.2g}; "
        return own + ("multilateration: skipped (k < d + 1)" if "skipped" in ml else
                      f"multilateration min {ml['min']:.3f}")
    found = [(a, r["min"]) for e in p.values() if isinstance(e, dict) and "attacks" in e
             for a, r in e["attacks"].items() if "min" in r]
    if not found:
        return "-"
    attack, low = min(found, key=lambda x: x[1])
    return f"{attack} min {low:.3f}"


def measure(report: dict) -> dict:
    coord = report["timing"]["coordinator"]
    secure = report.get("secure_aggregation") or report.get("mpc")
    mpc = report.get("mpc") or {}
    labels_only = (report.get("secure_aggregation") or {}).get("reveal") == "labels"  # its rounds are assignments
    counted = [r["sequential"] for r in mpc.get("per_round", []) if r["round"] >= 0 and "sequential" in r]
    comm = report["communication"]
    helper = comm.get("helper") or {d: {"payload": 0} for d in ("up", "down")}  # outside the totals, counted here
    return {
        "payload_up": comm["totals"]["up"]["payload"] + helper["up"]["payload"],
        "payload_down": comm["totals"]["down"]["payload"] + helper["down"]["payload"],
        "wire": sum(p["bytes"]["wire"] + p["bytes"]["wire_down"] for p in report["parties"]),
        "rounds": secure["rounds"] if secure else 1,
        # the steps that wait for the link: an MPC's assignments (rounds + 1), secure aggregation's rounds and
        # k-means++ steps, the one upload of a disguise
        "steps": (secure["rounds"] if labels_only else secure["rounds"] + 1 if mpc
                  else secure["rounds"] + len(secure.get("per_seeding_step", []))) if secure else 1,
        # an MPC's MPyC messages in sequence over its assignments, counted by the parties' tunnels
        "sequential": sum(counted) if counted else "",
        # from the last party's Join (the parties' processes start at different times) to the result
        "protocol_seconds": coord["done"] - max(e["time"] for e in report["communication"]["ledger"]
                                               if e["rpc"] == "Join" and e["direction"] == "up"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000, 5_000, 10_000, 100_000, 1_000_000])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    parser.add_argument("--no-literature", action="store_true", help="skip the 100,000-point 2-D workload")
    parser.add_argument("--only", nargs="+", choices=("comparison", "literature", "latency"),
                        default=["comparison", "literature", "latency"],
                        help="run only these parts: the table, the 2-D workload, the latency probe (default: all)")
    parser.add_argument("--links", nargs="+", choices=list(LINKS), default=list(LINKS),
                        help="run the table's rows on these links only (default: both)")
    parser.add_argument("--fresh", action="store_true",
                        help="drop OUT/comparison.csv's rows that this run does not remeasure (else they stay)")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS),
                        help="run only these (and none, the reference); keep OUT/comparison.csv's other rows")
    parser.add_argument("--no-eval", action="store_true", help="run no attacks (the privacy column stays empty)")
    parser.add_argument("--repeats", type=int, metavar="N",
                        help=f"runs of each row, its time the median (default: {spread.REPEATS} up to "
                        f"{spread.SMALL_ROWS:,} records, 1 above; the attacks run on the first only)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON (see harness.Figures)")
    parser.add_argument("--from-csv", action="store_true",
                        help="run nothing: rewrite comparison.md and the figure from OUT/comparison.csv")
    args = parser.parse_args()
    if args.from_csv:
        rows = read_rows(args.out / "comparison.csv")
        figure(rows, args.out / "figures", VARIANTS, LINKS)
        (args.out / "comparison.md").write_text(document(rows))
        print(f"wrote {args.out / 'comparison.md'} and figures/comparison.png from {args.out / 'comparison.csv'}")
        return
    base = tomllib.loads((ROOT / "scenarios" / "comparison.toml").read_text())
    literature = tomllib.loads((ROOT / "scenarios" / "literature-2d.toml").read_text())
    rows_out: list[dict] = []
    args.out.mkdir(parents=True, exist_ok=True)
    old = args.out / "comparison.csv"
    kept = [] if args.fresh or not old.exists() else read_rows(old)  # rows this run does not remeasure stay
    with tempfile.TemporaryDirectory(prefix="ppc-compare-") as tmp:
        tmp = Path(tmp)
        chosen = [n for n in VARIANTS if n in args.variants or n == "none"]
        if "mpc spu" in chosen and "--variants" not in sys.argv and (why := spu_problem()):
            chosen.remove("mpc spu")  # asked for by default only: name it in --variants to be told it cannot run
            print(f"mpc spu: not run ({why})", file=sys.stderr)
        plan = [("comparison", base, m, name, link) for m in args.rows for link in args.links for name in chosen
                if not (name == "osbr" and m > OSBR_MAX_ROWS) and not (name in RELAYED and m > MPC_MAX_ROWS)
                and not (name == "mpc spu" and m > MPC_SPU_MAX_ROWS)]
        if "comparison" not in args.only:
            plan = []
        if "literature" in args.only and not args.no_literature:
            if "mpc" in chosen:  # the MPC at the size it runs at here, beside the plain run of the same points
                plan += [("literature", literature, LITERATURE_MPC_ROWS, name, link)
                         for link in LINKS for name in ("none", "mpc")]
            plan += [("literature", literature, literature["data"]["rows"], name, link)
                     for link in LINKS for name in ("none", "drbt k=1", "secure aggregation") if name in chosen]
        if "latency" in args.only:
            plan += [("latency", base, PROBE_ROWS, name, link) for link in PROBE_LINKS for name in ("none", *PROBE_VARIANTS)
                     if name in chosen]
        reference: dict = {}
        for i, (workload, raw, m, name, link) in enumerate(plan):
            evaluate = (not args.no_eval and m <= ATTACK_MAX_ROWS and workload != "latency"
                        or (workload == "literature" and name == "secure aggregation"))
            table = variant(raw, name, m, {**LINKS, **PROBE_LINKS}[link])
            print(f"[{i + 1}/{len(plan)}] {workload} m={m:,} {name}, {link} ...", end=" ", flush=True)
            walls, times, loads = [], [], []
            for repeat in range(spread.repeats_for(m, args.repeats)):  # the attacks on the first run only
                loads.append(spread.load())
                seconds, again, labels_again = run(table, tmp, evaluate and not repeat)
                walls.append(seconds)
                times.append(measure(again)["protocol_seconds"])
                loads.append(spread.load())
                if not repeat:
                    report, labels = again, labels_again
            if name == "none":
                reference[(workload, m, link)] = labels
            row = {"workload": workload, "rows": m, "variant": name, "link": link, **measure(report),
                   **spread.summary(times, walls, loads), "ari_vs_plain": ari(labels, reference[(workload, m, link)]),
                   "privacy": privacy(report), "coordinator_learns": LEARNS[name]}
            rows_out.append(row)
            print(f"{row['protocol_seconds']:.2f} s (median of {row['repeats']}), {row['payload_up']:,} B up, "
                  f"{row['rounds']} round{'' if row['rounds'] == 1 else 's'}, ARI {row['ari_vs_plain']:.3f}, load {row['load']:.1f}", flush=True)
            save(args.out / "comparison.csv", kept, rows_out)  # after every run: a stopped run keeps its rows
    rows_out = save(args.out / "comparison.csv", kept, rows_out)
    figure(rows_out, args.out / "figures", VARIANTS, LINKS)
    (args.out / "comparison.md").write_text(document(rows_out))
    print(f"wrote {args.out / 'comparison.md'}, comparison.csv and figures/comparison.png")
    figures = Figures("comparison.py")
    for r in rows_out:
        key = f"{r['workload']} {r['rows']} {r['variant']} {r['link']}"
        figures.add(f"{key} seconds", r["protocol_seconds"])
        figures.add(f"{key} payload bytes", r["payload_up"] + r["payload_down"])
        figures.add(f"{key} ARI", r["ari_vs_plain"])
    figures.write(args.json, f"{len(rows_out)} runs ({', '.join(map(str, args.rows))} records); see docs/comparison.md")


def _b(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} B"


def crossover(ms: np.ndarray, ours: np.ndarray, theirs) -> float | None:
    """The smallest m (log grid, between and beyond the measured m) where ``theirs(m)`` exceeds ours, ours
    interpolated (and extrapolated linearly in m) from the measured points."""
    grid = np.logspace(2, 7, 2000)
    slope = (ours[-1] - ours[-2]) / (ms[-1] - ms[-2]) if len(ms) > 1 else 0.0
    ours_at = np.where(grid <= ms[-1], np.interp(grid, ms, ours), ours[-1] + slope * (grid - ms[-1]))
    above = np.flatnonzero(theirs(grid) > ours_at)
    return float(grid[above[0]]) if len(above) else None


def document(rows: list[dict]) -> str:
    """docs/comparison.md from the measured rows."""
    shaped, plain = list(LINKS)[1], list(LINKS)[0]
    data = [r for r in rows if r["workload"] == "comparison"]
    at = {(r["rows"], r["variant"], r["link"]): r for r in data}
    ms = sorted({r["rows"] for r in data})
    lines = [
        "# Three ways: one-shot disguises, secure aggregation, MPC",
        "",
        "What does a one-shot disguise (DRBT, OSBR) save, and what does it give up, against the secure-computation "
        "ways: the one production vertical federated systems use (Lloyd's rounds over secure aggregation, as "
        "FATE's HeteroKmeans does; [secure-aggregation.md](secure-aggregation.md)), and k-means as a secure "
        "multiparty computation, where nobody learns more than the labels ([mpc.md](mpc.md))? The same data, every "
        "way, measured by one bench. Regenerate this page, its table and its figure with",
        "",
        "```sh",
        "python bench/comparison.py          # hours (the MPC's); writes docs/comparison.md, comparison.csv, figures/comparison.png",
        "```",
        "",
        "Data: `scenarios/comparison.toml`, synthetic blobs of 8 columns in 5 overlapping clusters (standard deviation 3), two parties of 4 columns, "
        "k-means with 5 clusters (*secure aggregation* is the mode in which the arbiter reads the summed "
        "distances, `reveal = \"distances\"`, FATE's design: k-means++ seeding through the secure sums, then "
        "Lloyd's rounds until no label changes; *labels only* is the default mode, `reveal = \"labels\"`: the "
        "same rounds from k records drawn with the seed, each round's argmin an MPC over the parties' "
        "secret-shared partial distances with the coordinator's helper as third share-holder, only the labels "
        "opened; the others: scikit-learn's KMeans with 10 restarts on what the "
        "coordinator received; `osbr`: average linkage, as k-means needs features). Every run is a real "
        "`ppc run`: a process per party, mutual TLS, the relay counting each party's bytes and, on the shaped "
        "link, delaying them to 100 Mbit/s with 20 ms one-way latency. *bytes* are the payload up and down of "
        "all parties (the ledger; the wire adds TLS and HTTP/2 framing, in `comparison.csv`); *time* runs from "
        "the last party's Join to the result; *ARI* compares the labels with the `none` run's (k-means on the "
        "joined normalised data, no disguise); *attack* is the lowest column privacy any attack of the "
        "report reached (0 = a column recovered; measured up to 1,000 records). The machine is shared (two "
        "cores, other work running beside): compare times within a row's size with care. A run of a part "
        "(`--rows`, `--only`, `--variants`, `--links`) keeps `comparison.csv`'s other rows; every row names its "
        "size and link, none is extrapolated.",
        "",
        *([f"*mpc* is the third way: k-means as a secure multiparty computation on MPyC ([mpc.md](mpc.md)), "
           f"the two parties and the coordinator's helper as share-holders (threshold 1), k records drawn with the "
           f"seed as initial centres and exactly {MPC_ROUNDS} Lloyd rounds (an MPC does not stop early), every "
           f"byte relayed sealed through the coordinator; it runs up to {MPC_MAX_ROWS:,} records (MPyC is pure "
           "Python). Its *bytes* are the sealed frames of every share-holder, helper included.", ""]
          if any(r["variant"] == "mpc" for r in data) else []),
        "In every way the parties share the pseudonym key and the coordinator does not: a party colluding with the "
        "coordinator hands it the key, and the coordinator can then test guessed ids against every party's "
        "pseudonyms (a dictionary test). The column below assumes no party colludes.",
        "",
        *(["*mpc spu* is the same MPC (the same share-holders, initial records and rounds) on SPU's ABY3, compiled "
           f"([mpc.md](mpc.md#the-spu-engine)), run up to {MPC_SPU_MAX_ROWS:,} records.", ""]
          if any(r["variant"] == "mpc spu" for r in data) else []),
        "| m | method | bytes | rounds | time unshaped | time 100 Mbit/s, 20 ms | ARI vs plain | attack | the coordinator learns |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for m in ms:
        for name in VARIANTS:
            r, q = at.get((m, name, plain)), at.get((m, name, shaped))
            if r is None and q is None and name == "mpc" and m <= MPC_MAX_ROWS:
                lines.append(f"| {m:,} | mpc | not measured | | not run | not run | | | {LEARNS[name]} |")
                continue
            if r is None:
                if name == "osbr":
                    lines.append(f"| {m:,} | osbr | {_b(2 * m * (m - 1) / 2 * 8)} (predicted) | 1 | not run | "
                                 f"{2 * m * (m - 1) / 2 * 8 / 2 / 12.5e6:,.0f} s of transfer (predicted) | | | "
                                 f"{LEARNS[name]} |")
                continue
            noisy = spread.overlap(r, q)
            lines.append(f"| {m:,} | {name} | {_b(r['payload_up'] + r['payload_down'])} | {r['rounds']} | "
                         f"{spread.cell(r, noisy)} | {spread.cell(q, noisy)} | {r['ari_vs_plain']:.3f} | "
                         f"{r['privacy']} | {r['coordinator_learns']} |")
    lines += ["", spread.note(data), "", "![bytes and time against records](figures/comparison.png)", ""]
    # the m where secure aggregation and DRBT ran on both links (a part run alone may leave some out)
    full = [m for m in ms if all((m, v, link) in at for v in ("secure aggregation", "drbt k=3") for link in LINKS)]
    lines += ["## Crossover points", ""] if full else []
    if full:  # a part run alone (--variants mpc) may have no size where both ran
        sec = [at[(m, "secure aggregation", shaped)] for m in full]
        rounds = [r["rounds"] for r in sec]
        k = 5
        lines.append(
            f"- **Bytes.** Secure aggregation sends about (R k + k - 1) m 8 bytes up per party (R rounds; k - 1 "
            f"k-means++ steps); here R was {', '.join(map(str, rounds))} at m = {', '.join(f'{m:,}' for m in full)}. "
            "That is linear in m like DRBT's m k_j 8 bytes, so there is no crossover with DRBT: secure aggregation "
            "costs " + ", ".join(
                f"{(at[(m, 'secure aggregation', plain)]['payload_up'] + at[(m, 'secure aggregation', plain)]['payload_down']) / (at[(m, 'drbt k=3', plain)]['payload_up'] + at[(m, 'drbt k=3', plain)]['payload_down']):.0f}x"
                for m in full) + " the bytes of DRBT with k = 3 at those m. OSBR's m(m-1)/2 8 bytes per party are "
            f"quadratic: OSBR sends fewer bytes only while m - 1 < 2 (R k + k - 1), i.e. below about "
            f"m = {2 * (rounds[0] * k + k - 1) + 1:,} records at R = {rounds[0]}; above it secure aggregation is "
            "the cheaper of the two exact-distance protocols.")
        secure_t = np.array([r["protocol_seconds"] for r in sec])
        osbr_model = lambda m: m * (m - 1) / 2 * 8 / 12.5e6  # noqa: E731  (one party's transfer at 100 Mbit/s)
        cross = crossover(np.array(full, dtype=float), secure_t, osbr_model)
        drbt_t = np.array([at[(m, "drbt k=3", shaped)]["protocol_seconds"] for m in full])
        faster = [f"{m:,}" for m, a, b in zip(full, secure_t, drbt_t) if a < b]
        # where the measured time curves cross (interpolated in log m between the measured m)
        grid = np.logspace(np.log10(full[0]), np.log10(full[-1]), 2000)
        gap = np.interp(np.log10(grid), np.log10(full), secure_t - drbt_t)
        turns = np.flatnonzero(np.diff(np.sign(gap)) != 0)
        meet = (f" The measured curves cross at about m = {grid[turns[-1]]:,.0f} (interpolated between the measured m)."
                if len(turns) else "")
        lines.append(
            "- **Time on 100 Mbit/s, 20 ms.** Each round costs at least two latencies (post, then labels) plus its "
            f"transfer: secure aggregation took {', '.join(f'{t:.1f} s' for t in secure_t)} at m = "
            f"{', '.join(f'{m:,}' for m in full)}, DRBT (k = 3) {', '.join(f'{t:.1f} s' for t in drbt_t)} for its one "
            "upload and k-means with 10 restarts at the coordinator (the one-shot runs' time includes that "
            "clustering, and loading scikit-learn for it; the arbiter's work is inside the rounds). "
            + (f"Secure aggregation was the faster at m = {', '.join(faster)}; " if faster else
               "DRBT was the faster at every m; ")
            + f"at the largest m it took {secure_t[-1] / drbt_t[-1]:.1f}x DRBT's time.{meet} OSBR's transfer alone "
            "(m(m-1)/2 8 bytes a party at 100 Mbit/s) overtakes the secure run's measured time "
            + (f"from about m = {cross:,.0f} records." if cross else "nowhere in the measured range."))
    lines += ["- **Utility.** Secure aggregation is k-means exactly (one k-means++ start; labels equal "
              "scikit-learn's from the same records): its ARI against the plain clustering is below 1 only "
              "where a single start ends in another local optimum than the plain run's ten restarts. DRBT's "
              "ARI depends on k; OSBR clusters exact distances, by another algorithm.",
              "- **What the coordinator learns.** DRBT and OSBR hand it a disguised copy of each party's block "
              "once, open to the attacks in the table. Secure aggregation hands it no party's data, but every "
              "record's distance to every centre in every round, summed over the parties; in the 2-D workload "
              "below that locates every record from the k initial records (multilateration), because k >= d + 1, "
              "and the arbiter needs no record to begin with: round 0's centres are joined records whose mutual "
              "distances are in the sums (classical scaling places them; the report's "
              "`privacy.arbiter.placement`). That is a coordinator that follows the protocol; an active one, "
              "choosing the labels (k - 1 singleton clusters a round), gathers anchors that span the d joined "
              "columns in about d / (k - 1) rounds and then places every record; `max_iter` does not stop that "
              "([secure-aggregation.md](secure-aggregation.md#against-an-active-coordinator)). *labels only* "
              "(the default) leaves it nothing to place a record with.",
              ""]
    lines += mpc_points(at, ms, plain, shaped)
    lines += ["## Labels only, on either engine (m = 1,000)", "",
              "The table above runs the labels-only mode on MPyC with two parties and the helper. "
              "`python bench/secure_kmeans.py --labels-only --cold-spu` sets it beside the full MPC on both "
              "engines, side by side in one run, on 1,000 records of blobs over 3 parties of 2 columns, k = 4, "
              "`max_iter = 10`: [secure-aggregation.md](secure-aggregation.md#speed) has its table. On SPU the "
              "labels-only mode sent 0.050x the bytes of the default full MPC (MPyC) and took 0.029x its time, "
              "the target of a tenth met; against the full MPC on its own engine it is met on neither (the "
              "secure comparisons of the argmin, which both computations take, are most of the cost).", ""]
    lines += probe(rows)
    lit = [r for r in rows if r["workload"] == "literature"]
    if lit:
        m = max(r["rows"] for r in lit)
        lines += ["## The published workload", "",
                  f"{m:,} two-dimensional points in five clusters, two parties (one column each), a 100 Mbit/s "
                  "link (`scenarios/literature-2d.toml`; ours with 20 ms latency). The published figures are "
                  "cited, not rerun; they come from other machines and protect more.", "",
                  "| protocol | bytes | time | ARI vs plain | what the coordinator (or the other party) learns |",
                  "|---|---|---|---|---|"]
        shown = {(r["variant"], r["rows"]): r for r in lit if r["link"] == plain}  # unshaped where it alone ran
        shown.update({(r["variant"], r["rows"]): r for r in lit if r["link"] == shaped})
        for r in sorted(shown.values(), key=lambda r: r["rows"] != m):  # the MPC's smaller run last
            if r["rows"] != m and r["variant"] == "none":
                continue
            size = "" if r["rows"] == m else f" ({r['rows']:,} of the points: the most it ran here; not extrapolated)"
            link = "" if r["link"] == shaped else ", unshaped: not run on the link"
            lines.append(f"| ppc-sim {r['variant']}{size} | {_b(r['payload_up'] + r['payload_down'])} | "
                         f"{r['protocol_seconds']:.1f} s ({r['rounds']} round{'s' if r['rounds'] > 1 else ''}{link}) | "
                         f"{r['ari_vs_plain']:.3f} | "
                         f"{r['coordinator_learns']}"
                         + (f"; measured: {r['privacy']}" if r["privacy"] != "-" else "") + " |")
        lines += [
            "| fully secure Lloyd's with garbled circuits (Mohassel, Rosulek, Trieu, *Practical Privacy-Preserving "
            "K-means Clustering*, PETS 2020) | about 101 GB | over a day | exact k-means | only the result |",
            "| homomorphic encryption with differential privacy (Mazzone et al., *Privacy-Preserving Vertical "
            "K-Means Clustering*, 2025) | 73 MB | under 3 minutes | approximate (noisy centres) | the noisy "
            "centres and the result, under differential privacy |",
            ""]
        ours = {r["variant"]: r["payload_up"] + r["payload_down"] for r in shown.values() if r["rows"] == m}
        mpc = [r for r in shown.values() if r["variant"] == "mpc"]
        if "drbt k=1" in ours and "secure aggregation" in ours:
            lines += [f"The published protocols hide the distances that secure aggregation shows the arbiter. In "
                      f"bytes, homomorphic encryption costs {73e6 / ours['drbt k=1']:,.0f}x DRBT's one upload and "
                      f"{73e6 / ours['secure aggregation']:.2g}x secure aggregation here; garbled circuits "
                      f"{101e9 / ours['drbt k=1']:,.0f}x and {101e9 / ours['secure aggregation']:,.0f}x.", ""]
        for r in mpc:
            lines += [f"Our MPC hides what the garbled circuits hide (everything but the labels; here with the "
                      f"coordinator's helper as third share-holder, an honest-majority assumption the two-party "
                      f"garbled circuits do not need). On {r['rows']:,} of the points, the most it ran here in the "
                      f"time the bench had, it sent {_b(r['payload_up'] + r['payload_down'])} and took "
                      f"{r['protocol_seconds']:,.0f} s for {MPC_ROUNDS} updates, on a shared machine; it was not "
                      "run on the 100,000 points, and this page extrapolates nothing to them.", ""]
    return "\n".join(lines) + "\n"


def probe(rows: list[dict]) -> list[str]:
    """The section on message latencies in sequence, from the latency probe's rows."""
    at = {(r["variant"], r["link"]): r for r in rows if r["workload"] == "latency"}
    plain, slow = list(PROBE_LINKS)
    found = [n for n in PROBE_VARIANTS if (n, plain) in at and (n, slow) in at]
    if not found:
        return []
    m = next(r["rows"] for r in rows if r["workload"] == "latency")
    lines = [
        "## Message latencies in sequence", "",
        f"How many one-way link latencies does each way wait for, one after the other? Measured twice. **By time**: "
        f"each way at m = {m:,} records, unshaped and on a link of {PROBE_LATENCY_MS} ms one-way latency with no "
        "bandwidth limit (so that only latency differs), in the same run of the bench; the time the latency added, "
        f"divided by {PROBE_LATENCY_MS} ms and by the steps that wait (an MPC's assignments, secure aggregation's "
        "rounds and k-means++ steps, a disguise's one upload), is the one-way latencies per step "
        f"({PROBE_LATENCY_MS} ms rather than 20 so that the added time stands out of a shared machine's noise; "
        "it includes start-up calls, Join to result, spread over the steps). **By count** (the MPC): each party's "
        "tunnel parses MPyC's messages on its links and counts, per round, the times its program began sending "
        "after a peer's message had ended (the report's `mpc.per_round[].sequential`, the most any data party "
        "counted); each such message crosses two links (party to coordinator to party), so twice the count is "
        "the one-way latencies it implies. Messages of independent operations that a party happens to send "
        "after a receipt count too, so two runs differ by some (66 to 76 per round in the test suite's run).", "",
        f"| way | steps | time unshaped | time, {PROBE_LATENCY_MS} ms latency | one-way latencies per step (by time) "
        "| MPyC messages in sequence per assignment (by count) | one-way latencies per assignment (2 x count) |",
        "|---|---|---|---|---|---|---|"]
    notes: list[str] = []
    for name in found:
        r, q = at[(name, plain)], at[(name, slow)]
        per_step = (q["protocol_seconds"] - r["protocol_seconds"]) / (PROBE_LATENCY_MS / 1000) / q["steps"]
        counted = [x["sequential"] / x["steps"] for x in (r, q) if x["sequential"] != ""]
        count = " and ".join(f"{c:.0f}" for c in counted) if counted else "-"
        doubled = " and ".join(f"{2 * c:.0f}" for c in counted) if counted else "-"
        by_time = f"{per_step:.1f}" if per_step > 0.5 and not spread.overlap(r, q) else "lost in the noise"
        lines.append(f"| {name} | {q['steps']} | {spread.cell(r)} | {spread.cell(q)} | "
                     f"{by_time} | {count} | {doubled} |")
        if name == "mpc" and counted:
            notes.append(f"For the MPC the two measures agree: {per_step:.0f} one-way latencies per assignment by "
                         f"time, {2 * min(counted):.0f} to {2 * max(counted):.0f} by count; on a 20 ms link that is "
                         f"about {per_step * 0.020:.1f} s of waiting per assignment (the count was alike at 40 and 100 "
                         "records: the program is vectorised, so its messages grow in size with m, not in number).")
        if name == "secure aggregation":
            notes.append(f"A secure-aggregation step waits for four (its post and the reply, the labels' request and "
                         f"reply); the calls before the first step (Join, the keys, the upload of ids, the alignment, "
                         f"the confirmations) and GetResult, spread over its {q['steps']} steps, add the rest of the "
                         f"{per_step:.1f} measured.")
        if name.startswith("drbt"):
            notes.append("A disguise waits for the latency a handful of times in all (Join, the keys, its upload, "
                         "the result), not per round: "
                         + (f"{per_step:.1f} one-way latencies here, once." if by_time != "lost in the noise" else
                            "on this machine that was lost in the noise of starting processes and clustering."))
    return lines + [""] + [" ".join(notes), ""]


def latency_note(unshaped: float, shaped: float, rounds: int) -> str:
    """The MPC's two times, and why their difference is not the latency's."""
    return (f"It took {shaped:.1f} s on the shaped link and {unshaped:.1f} s unshaped, for {rounds + 1} assignments; "
            "the two runs came at different moments of a shared machine, whose load moves such a run by minutes, "
            "so their difference is not what the latency costs: the latency probe below measures that apart.")


def mpc_points(at: dict, ms: list[int], plain: str, shaped: str) -> list[str]:
    """What the MPC rows say beside secure aggregation's, at the m where both ran."""
    both = [m for m in ms if (m, "mpc", plain) in at and (m, "secure aggregation", plain) in at]
    if not both:
        return []
    out = []
    for m in both:
        mpc, sec = at[(m, "mpc", plain)], at[(m, "secure aggregation", plain)]
        mpc_q, sec_q = at.get((m, "mpc", shaped)), at.get((m, "secure aggregation", shaped))
        ratio = (mpc["payload_up"] + mpc["payload_down"]) / (sec["payload_up"] + sec["payload_down"])
        on_link = (f", {mpc_q['protocol_seconds'] / sec_q['protocol_seconds']:,.0f}x on 100 Mbit/s with 20 ms "
                   f"({mpc['protocol_seconds']:.1f} s and {mpc_q['protocol_seconds']:.1f} s)" if mpc_q and sec_q else
                   f" ({mpc['protocol_seconds']:.1f} s; not run on the shaped link)")
        out.append(
            f"- **The price of hiding the distances (m = {m:,}).** The MPC sent {ratio:,.0f}x secure aggregation's "
            f"bytes and took {mpc['protocol_seconds'] / sec['protocol_seconds']:,.0f}x its time unshaped"
            f"{on_link}, for {mpc['rounds']} rounds "
            f"against {sec['rounds']}; its ARI against the plain clustering is {mpc['ari_vs_plain']:.3f} (one "
            "start from k random records, a fixed number of rounds). In return the coordinator learns the labels "
            "and no distance. Its cost grows linearly in m like secure aggregation's, with a far larger constant "
            "(secure comparisons, bit by bit), so there is no crossover in m with them: the MPC costs more at every "
            f"size. OSBR's bytes grow with m squared (8 m (m - 1) for two parties): at the MPC's "
            f"{(mpc['payload_up'] + mpc['payload_down']) / m / 1e3:,.0f} kB per record measured here, OSBR would send "
            f"more from about m = {(mpc['payload_up'] + mpc['payload_down']) / m / 8 + 1:,.0f} (a model: OSBR's exact "
            "formula against the MPC's bytes per record at this m, taken as constant, which the program's vectorised "
            "rounds make it nearly). "
            + (latency_note(mpc["protocol_seconds"], mpc_q["protocol_seconds"], mpc["rounds"]) if mpc_q else ""))
    return out + [""]


if __name__ == "__main__":
    main()
