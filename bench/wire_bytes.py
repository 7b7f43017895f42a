"""Targets 3 and 5: protocol overhead on the connection, and the cost model, for DRBT runs.

For each row count, a real `ppc run` (4 parties, 25 columns each, k = 10,
TLS and tokens as by default) reports per party the paper's prediction
m * k_j * 8, the payload the coordinator received, the serialised messages
and the bytes the connection really carried (measured by the launcher's
relay). Prints wire / payload (target <= 1.03 at 100,000 rows and more) and
whether payload equals the prediction exactly (target 5).

    python bench/wire_bytes.py [--rows 100000 200000] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e_drbt import scenario  # noqa: E402
from harness import Figures  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 200_000])
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON (see harness.Figures)")
    args = parser.parse_args()
    print(f"{'rows':>9}  {'party':5}  {'predicted':>11}  {'payload':>11}  {'serialized':>11}  {'wire':>11}  wire/payload")
    worst = 0.0
    out = Figures("wire_bytes.py")
    exact_all = True
    for rows in args.rows:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench.toml"
            path.write_text(scenario(rows, 1))
            proc = subprocess.run([sys.executable, "-m", "ppcsim", "run", str(path), "--out", f"{tmp}/out", "--no-eval",
                                   "--quiet"], capture_output=True, text=True)
            if proc.returncode:
                print(proc.stderr, file=sys.stderr)
                return 1
            report = json.loads((Path(tmp) / "out" / "report.json").read_text())
        for p in report["parties"]:
            b = p["bytes"]
            ratio = b["wire"] / b["payload"]
            worst = max(worst, ratio)
            exact = "exact" if b["payload"] == b["predicted"] else "DIFFERS"
            exact_all &= b["payload"] == b["predicted"]
            out.add(f"{rows} {p['name']} wire / payload", ratio)
            print(f"{rows:>9,}  {p['name']:5}  {b['predicted']:>11,}  {b['payload']:>11,}  {b['serialized']:>11,}  "
                  f"{b['wire']:>11,}  {ratio:.4f}  payload {exact}")
    print(f"worst wire / payload {worst:.4f}   (target <= 1.03)")
    out.check("worst wire / payload", worst, "<=", 1.03)
    out.check("every payload equals the prediction", float(exact_all), "==", 1)
    out.write(args.json, f"worst wire / payload {worst:.4f} at {', '.join(f'{r:,}' for r in args.rows)} records; "
              + ("every party's payload equals the prediction" if exact_all else "a payload DIFFERS from the prediction"))
    return 0 if exact_all else 1


if __name__ == "__main__":
    sys.exit(main())
