"""python -m codegen: generate the extension's sources from a manifest.

Exit status 2 on a manifest error, printed as file:line: op: problem — fix; nothing is written.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from codegen.errors import SpecError
from codegen.gen import all_outputs, generate
from codegen.manifest import load_manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    parser.add_argument("--manifest", type=Path, default=Path("native_functions.yaml"))
    parser.add_argument("--out-dir", type=Path, default=Path("build/generated"))
    parser.add_argument("--shards", type=int, default=4, help="translation units per dispatch key")
    parser.add_argument(
        "--list-outputs",
        action="store_true",
        help="print every output file, ';'-separated (for CMake), and exit",
    )
    parser.add_argument("--stamp", type=Path, help="touch this file after a successful run")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    try:
        manifest = load_manifest(args.manifest)
        if args.list_outputs:
            print(";".join(str(args.out_dir / f) for f in all_outputs(manifest, args.shards)))
            return 0
        written = generate(manifest, args.out_dir, args.shards)
    except SpecError as e:
        print(e, file=sys.stderr)
        return 2
    if args.verbose:
        took = time.perf_counter() - start
        print(f"codegen: {len(manifest.functions)} functions, {len(written)} files changed, {took:.2f}s")
        for f in written:
            print(f"  wrote {f}")
    if args.stamp:
        args.stamp.parent.mkdir(parents=True, exist_ok=True)
        args.stamp.touch()
    return 0


if __name__ == "__main__":
    sys.exit(main())
