"""Write (or check) ``docs/report.schema.json``, the JSON Schema of ``report.json``, from the report's types.

``python -m ppcsim.report.schema`` writes it (to ``docs/report.schema.json``
under the current folder, or the path given); ``--check`` compares instead and
exits 1 when the file differs from what the types give. The types are in
ppcsim.report.model; the schema is never edited by hand.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ppcsim.report.model import schema_text

#: Where the schema is published, relative to the project's root.
DEFAULT = Path("docs") / "report.schema.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ppcsim.report.schema",
                                     description="Write the JSON Schema of report.json, generated from the report's "
                                                 "types (ppcsim.report.model).")
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT,
                        help=f"where to write it (default: {DEFAULT})")
    parser.add_argument("--check", action="store_true",
                        help="write nothing: exit 1 if the file differs from what the types give")
    args = parser.parse_args(argv)
    text = schema_text()
    if args.check:
        try:
            current = args.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            print(f"{args.path}: no such file; write it with python -m ppcsim.report.schema", file=sys.stderr)
            return 1
        if current != text:
            print(f"{args.path} is out of date: write it again with python -m ppcsim.report.schema", file=sys.stderr)
            return 1
        return 0
    args.path.parent.mkdir(parents=True, exist_ok=True)
    args.path.write_text(text, encoding="utf-8")
    print(f"wrote {args.path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
