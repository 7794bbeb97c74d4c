"""Time the generator: the full run on this repo's manifest, and the front end (YAML with line
numbers, schema parsing, C++ signature mapping) on PyTorch's own manifest.

The in-process figures are the best of a few rounds, so the parse caches (rule texts, templates)
are warm after the first; the synthetic manifest is rendered in one process and in as many as
``python -m structgen.codegen`` starts (codegen/workers.py), and also run as the CMake build runs it, one
fresh ``python -m structgen.codegen`` process, into an empty folder and into an up-to-date one.

PyTorch's manifest cannot be generated as a whole (it uses keys structops does not implement,
e.g. autogen and method variants), so the second figure is the part of codegen that scales with
the number of entries.
"""

import gc
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from structgen.codegen.api import cpp
from structgen.codegen.gen import generate
from structgen.codegen.load import read_manifest_entries
from structgen.codegen.manifest import load_manifest
from structgen.codegen.model.schema import FunctionSchema
from structgen.codegen.workers import default_workers


def best_of(n, fn):
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def run_codegen_process(manifest: Path, out: Path) -> None:
    """One ``python -m structgen.codegen`` run, as the CMake build starts it."""
    command = [sys.executable, "-m", "structgen.codegen", "--manifest", str(manifest), "--out-dir", str(out)]
    subprocess.run(command + ["--shards", "4"], check=True, cwd=ROOT)


def synthetic_manifest(ops: int) -> str:
    """``ops`` pointwise ops of two inputs, each an out=, functional and inplace entry (3 * ops
    entries): formulas, dtype rules, derived gradients and fused backward ops all scale with it."""
    entry = """
- func: synth{i}.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  structured: True
  pointwise: "self * other + alpha * {i}"
  meta:
    dtype: {{out: "promote(self, other, alpha)"}}
  tags: [pointwise]

- func: synth{i}(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  structured_delegate: synth{i}.out
  tags: [pointwise]
  doc: "synthetic op {i}"

- func: synth{i}_(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  structured_delegate: synth{i}.out
  tags: [pointwise]
"""
    return "".join(entry.format(i=i) for i in range(ops))


def main() -> None:
    gc.disable()  # as python -m structgen.codegen runs (codegen/__main__.py)
    with tempfile.TemporaryDirectory() as out:
        t = best_of(
            5, lambda: generate(load_manifest(ROOT / "structops" / "native_functions.yaml"), Path(out), 4)
        )
    entries = len(load_manifest(ROOT / "structops" / "native_functions.yaml").functions)
    print(f"repo manifest: {entries} entries, full codegen {t * 1000:.1f} ms")

    with tempfile.TemporaryDirectory() as out:
        manifest = Path(out) / "native_functions.yaml"
        manifest.write_text(synthetic_manifest(1000))
        workers = default_workers()
        for n in sorted({1, workers}):
            t = best_of(3, lambda n=n: generate(load_manifest(manifest), Path(out) / f"gen{n}", 4, n))
            print(
                f"synthetic manifest: 3000 entries (1000 pointwise ops), full codegen {t * 1000:.0f} ms "
                f"(rendered in {n} process{'es' if n > 1 else ''})"
            )
        fresh = best_of(1, lambda: run_codegen_process(manifest, Path(out) / "fresh"))
        up_to_date = best_of(3, lambda: run_codegen_process(manifest, Path(out) / "fresh"))
        print(
            f"  as the build runs it (python -m structgen.codegen, {workers} render workers): into an empty "
            f"folder {fresh * 1000:.0f} ms, up to date {up_to_date * 1000:.0f} ms"
        )

    try:
        import torchgen
    except ImportError:
        print("torchgen not importable: skipping PyTorch's manifest")
        return
    path = Path(torchgen.__file__).parent / "packaged/ATen/native/native_functions.yaml"

    def front_end():
        mapped = 0
        for entry in read_manifest_entries(path):
            schema = FunctionSchema.parse(entry["func"])
            try:
                cpp.kernel_signature(schema)
                mapped += 1
            except cpp.UnsupportedType:
                pass
        return mapped

    t = best_of(3, front_end)
    print(
        f"PyTorch manifest: {len(read_manifest_entries(path))} entries, load + parse + C++ signatures "
        f"{t * 1000:.0f} ms ({front_end()} with a C++ mapping)"
    )
    import torchgen.gen

    def torchgen_parse():
        # parse_native_yaml caches by path: cleared so each round parses again
        for cache in ("_GLOBAL_PARSE_NATIVE_YAML_CACHE", "_GLOBAL_PARSE_TAGS_YAML_CACHE"):
            getattr(torchgen.gen, cache, {}).clear()
        torchgen.gen.parse_native_yaml(str(path), str(path.parent / "tags.yaml"))

    theirs = best_of(3, torchgen_parse)
    print(f"torchgen's parse_native_yaml of the same file: {theirs * 1000:.0f} ms ({theirs / t:.1f}x ours)")


if __name__ == "__main__":
    main()
