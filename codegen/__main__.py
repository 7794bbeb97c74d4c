"""structgen (the console script; python -m structgen.codegen is the same): check a manifest,
generate the extension's sources, or print the hooks an op's hand-written code must define.

    structgen [--manifest M]                 check the manifest (writes nothing)
    structgen --out-dir DIR                  generate into DIR (what the CMake build runs)
    structgen --out-dir DIR --cmake-outputs  write DIR/outputs.cmake only: the build's file lists by
                                             kind (CMake's configure step)
    structgen signature OP                   the C++ functions to define for OP
    structgen new-op NAME [--kind pointwise|structured]   scaffold a new op (from torch's schemas
                                             where torch has NAME)
    structgen new-project DIR --name NAME    a new package of operators that builds as made
    structgen cmake-dir                      the folder of its CMake package, for
                                             find_package(structgen): -Dstructgen_DIR=...

Exit status 2 on a manifest error, printed as file:line: op: problem — fix; nothing is written.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

from structgen.codegen import new_op, new_project
from structgen.codegen.dest.structured import hooks
from structgen.codegen.errors import SpecError
from structgen.codegen.gen import all_outputs, generate, write_outputs_cmake
from structgen.codegen.manifest import load_manifest
from structgen.codegen.workers import default_workers

# structgenConfig.cmake's folder: what find_package(structgen) needs (as pybind11.get_cmake_dir()).
CMAKE_DIR = Path(__file__).resolve().parents[1] / "cmake"


def signature(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="structgen signature", description="the hooks to define")
    parser.add_argument("op", help="an op's name (sum), overload (sum.dim_IntList) or structured name")
    parser.add_argument("--manifest", type=Path, default=Path("native_functions.yaml"))
    args = parser.parse_args(argv)
    try:
        manifest = load_manifest(args.manifest)
    except SpecError as e:
        print(e, file=sys.stderr)
        return 2
    ops = hooks(manifest, args.op)
    if not ops:
        print(f"{args.op}: no such op in {args.manifest}", file=sys.stderr)
        return 1
    for op in ops:
        if not op.hooks:
            print(f"// {args.op}: every kernel is generated ({op.header})")
            continue
        print(f"#include <{op.header}>")
        for h in op.hooks:
            print(f"\n// {h.what}\n{h.declaration}")
    return 0


def scaffold(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="structgen new-op", description=new_op.__doc__)
    parser.add_argument("name")
    parser.add_argument(
        "--kind",
        choices=["pointwise", "structured"],
        help="required for a name torch does not have; for one it has, its schemas decide",
    )
    parser.add_argument("--manifest", type=Path, default=Path("native_functions.yaml"))
    args = parser.parse_args(argv)
    try:
        made = new_op.new_op(args.name, args.kind, args.manifest, args.manifest.resolve().parent)
    except (ValueError, SpecError) as e:
        print(e, file=sys.stderr)
        return 2
    if made.picked:
        print(made.picked)
    print(f"{made.manifest}: added the entries of {args.name}")
    if made.impl:
        print(f"{made.impl}: its CPU impl (an identity to start from)")
    print("next: bash tools/setup.sh (rebuild), then bash tools/test.sh tests/conformance -k " + args.name)
    return 0


def project(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="structgen new-project", description=new_project.__doc__)
    parser.add_argument("dir", type=Path, help="a new or empty folder")
    parser.add_argument("--name", required=True, help="the package and torch.ops namespace (a Python name)")
    args = parser.parse_args(argv)
    try:
        made = new_project.new_project(args.dir, args.name)
    except (ValueError, SpecError) as e:
        print(e, file=sys.stderr)
        return 2
    for f in made.files:
        print(f"wrote {f}")
    print(f"next: the two commands of {made.root / 'README.md'}")
    return 0


def cmake_dir(argv: list[str]) -> int:
    argparse.ArgumentParser(
        prog="structgen cmake-dir",
        description="Print the folder of the generator's CMake package, for find_package(structgen): "
        'cmake -Dstructgen_DIR="$(python -m structgen.codegen cmake-dir)" ...',
    ).parse_args(argv)
    print(CMAKE_DIR.as_posix())
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["signature"]:
        return signature(argv[1:])
    if argv[:1] == ["new-op"]:
        return scaffold(argv[1:])
    if argv[:1] == ["new-project"]:
        return project(argv[1:])
    if argv[:1] == ["cmake-dir"]:
        return cmake_dir(argv[1:])
    parser = argparse.ArgumentParser(
        prog="structgen", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--manifest", type=Path, default=Path("native_functions.yaml"))
    parser.add_argument("--out-dir", type=Path, help="write the generated sources here (default: check only)")
    parser.add_argument("--shards", type=int, default=4, help="translation units per dispatch key")
    parser.add_argument(
        "--jobs",
        type=int,
        default=default_workers(),
        help="processes that render the files (default: one per usable core, up to 4)",
    )
    parser.add_argument(
        "--list-outputs",
        action="store_true",
        help="print every output file, ';'-separated (for CMake), and exit",
    )
    parser.add_argument(
        "--cmake-outputs",
        action="store_true",
        help="write only OUT_DIR/outputs.cmake, the generated files by kind (for CMake), and exit",
    )
    parser.add_argument("--stamp", type=Path, help="touch this file after a successful run")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    try:
        manifest = load_manifest(args.manifest)
        if args.list_outputs:
            out_dir = args.out_dir or Path("generated")
            print(";".join(str(out_dir / f) for f in all_outputs(manifest, args.shards)))
            return 0
        if args.cmake_outputs:
            if args.out_dir is None:
                parser.error("--cmake-outputs needs --out-dir")
            write_outputs_cmake(manifest, args.out_dir, args.shards)
            return 0
        written = generate(manifest, args.out_dir, args.shards, args.jobs) if args.out_dir else []
    except SpecError as e:
        print(e, file=sys.stderr)
        return 2
    took = time.perf_counter() - start
    if args.out_dir is None:
        entries, ops = len(manifest.functions), len(manifest.groups)
        print(f"{args.manifest}: {entries} entries, {ops} structured ops: ok ({took:.2f}s)")
    elif args.verbose:
        print(f"codegen: {len(manifest.functions)} functions, {len(written)} files changed, {took:.2f}s")
        for f in written:
            print(f"  wrote {f}")
    if args.stamp:
        args.stamp.parent.mkdir(parents=True, exist_ok=True)
        args.stamp.touch()
    return 0


if __name__ == "__main__":
    # A short run that frees nothing until it exits: the cyclic collector's passes over the
    # growing object graph took a third of a 3,000-entry run (tools/bench_codegen.py).
    gc.disable()
    sys.exit(main())
