"""Pseudonyms at the speed of the cipher: a million ids through parties.pseudonyms, against one HMAC per id.

Times ``parties.pseudonyms.pseudonyms`` (AES-256 of every id's block in one
call) for ROWS integer ids, the same ids as text, and ROWS text ids longer
than one block (hashed one by one), against the first version's pseudonyms
(the first 16 bytes of HMAC-SHA256 of each id, one Python call per id, as
parties computed them before), in the same run. Prints wall and CPU seconds
per million ids (the CPU figure does not depend on what else runs on the
machine); target: under 0.1 s per million ids for integer and short text ids.

    python bench/pseudonyms.py [--rows 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import os
import sys
import time
from pathlib import Path

import numpy as np

from parties.pseudonyms import pseudonyms
from ppcsim.cli.entry import process_settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Figures  # noqa: E402

process_settings()  # ppc's process settings: this process's allocator, and what the processes it starts inherit


def hmac_pseudonyms(key: bytes, ids: np.ndarray) -> bytes:
    """The retired scheme, as parties computed it: one keyed-state copy and one digest per id."""
    base = hmac.new(key, digestmod=hashlib.sha256)

    def one(text: str) -> bytes:
        h = base.copy()
        h.update(text.encode())
        return h.digest()[:16]

    return b"".join(map(one, map(str, ids.tolist())))


def best(fn, repeat: int) -> tuple[float, float]:
    """Best wall and best CPU seconds of ``repeat`` calls."""
    wall, cpu = float("inf"), float("inf")
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = min(wall, time.perf_counter() - w), min(cpu, time.process_time() - c)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON (see harness.Figures)")
    args = parser.parse_args()
    key = os.urandom(32)
    ints = np.arange(args.rows, dtype=np.int64)
    cases = {"integer ids": ints, "text ids": ints.astype(str),
             "text ids of 20 bytes (hashed)": np.char.add("customer-", np.char.zfill(ints.astype(str), 11))}
    per = 1e6 / args.rows
    out = Figures("pseudonyms.py")
    print(f"{args.rows:,} ids, best of {args.repeat}, seconds per million ids")
    for name, ids in cases.items():
        wall, cpu = best(lambda ids=ids: pseudonyms(key, ids), args.repeat)
        out.add(f"{name} s per million", wall * per)
        out.add(f"{name} CPU s per million", cpu * per)
        print(f"AES-256 blocks, {name:<30} {wall * per:7.3f} s   CPU {cpu * per:7.3f} s")
        if "hashed" not in name:
            out.check(f"{name}: CPU s per million ids", cpu * per, "<", 0.1)
    wall, cpu = best(lambda: hmac_pseudonyms(key, ints), 1)
    out.add("HMAC one by one s per million", wall * per)
    out.add("HMAC one by one CPU s per million", cpu * per)
    print(f"HMAC-SHA256 one id at a time (retired)       {wall * per:7.3f} s   CPU {cpu * per:7.3f} s")
    ratio = out.figures["integer ids CPU s per million"] / out.figures["HMAC one by one CPU s per million"]
    print(f"AES blocks / HMAC one by one, integer ids, CPU: {ratio:.3f}")
    f = out.figures
    out.write(args.json, f"per million ids, CPU: integer {f['integer ids CPU s per million']:.3f} s, text "
              f"{f['text ids CPU s per million']:.3f} s, 20-byte text (hashed) "
              f"{f['text ids of 20 bytes (hashed) CPU s per million']:.3f} s; the retired HMAC one by one "
              f"{f['HMAC one by one CPU s per million']:.2f} s ({ratio:.3f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
