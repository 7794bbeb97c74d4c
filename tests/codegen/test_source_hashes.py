"""Kernel variants' source hashes (the autotune cache key, docs/multi_kernel.md): the generator
never reads csrc/, and the build (cmake/autotune_build.cmake) hashes exactly the files each
variant declares in `kernels: sources:` into one small translation unit.

structops' manifest and csrc/, and the runtime's headers, are copied to a temporary folder, edited
there, and run through the generator and the build's hashing script, as CMake runs them.
"""

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from structgen.codegen.errors import SpecError
from structgen.codegen.gen import generate
from structgen.codegen.manifest import load_manifest

from tests.codegen.manifest_helpers import write_manifest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "cmake/autotune_build.cmake"
CMAKE = shutil.which("cmake", path=str(Path(sys.executable).parent)) or shutil.which("cmake")

needs_cmake = pytest.mark.skipif(CMAKE is None, reason="no cmake (pip install cmake, as tools/setup.sh does)")
# mm.out with two hand-written variants, and no `sources:`.
MM_OUT = (
    "- func: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
    '  dispatch: {CPU: mm_cpu}\n  meta: {shape: {self: "[n, k]", mat2: "[k, m]", out: "[n, m]"}}\n'
    '  kernels:\n    key: "[n]"\n    CPU:\n    - {name: a, kernel: a}\n    - {name: b, kernel: b}\n'
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the manifest, its csrc/ and the runtime's headers: what the generator and the hashing
    script read."""
    shutil.copy(ROOT / "structops" / "native_functions.yaml", tmp_path / "native_functions.yaml")
    shutil.copytree(ROOT / "structops" / "csrc", tmp_path / "csrc")
    shutil.copytree(ROOT / "csrc" / "include", tmp_path / "runtime_include")
    return tmp_path


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    return {
        p.relative_to(folder).as_posix(): (p.read_text(), p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file()
    }


def touch_comment(path: Path) -> None:
    path.write_text(path.read_text() + "// an edited comment\n")


def build_hashes(tree: Path) -> dict[str, str]:
    """Runs the hashing script as the build does; the hash of every variant by its C++ name."""
    out = tree / "build"
    cmd = [
        CMAKE,
        f"-DVARIANTS={tree / 'gen/variant_sources.cmake'}",
        f"-DCSRC={tree / 'csrc'}",
        f"-DRUNTIME_INCLUDE={tree / 'runtime_include'}",
        f"-DOUT={out / 'autotune_build.cpp'}",
        f"-DDEPFILE={out / 'autotune_build.d'}",
        f"-DSTAMP={out / 'autotune_build.stamp'}",
        "-DCOMPILE_FLAGS=GNU 12 Release",
        "-DTORCH_VERSION=2.13.0",
        "-P",
        str(SCRIPT),
    ]
    out.mkdir(exist_ok=True)
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    text = (out / "autotune_build.cpp").read_text()
    return dict(re.findall(r'extern const char (\w+)\[\] = "([0-9a-f]{16})";', text))


def test_generated_files_do_not_read_csrc(tree):
    """Editing csrc/ — an op without variants, or even a variant's own kernel — rewrites no generated
    file: the hashes live in the build's translation unit, not in the choosers."""
    manifest = load_manifest(tree / "native_functions.yaml")
    generate(manifest, tree / "gen", shards=4)
    before = snapshot(tree / "gen")
    time.sleep(0.01)
    touch_comment(tree / "csrc/ops/pool/cpu.cpp")  # max_pool2d and friends: no kernel variants
    touch_comment(tree / "csrc/ops/reduce/cpu_sum.cpp")  # sum's CPU variants
    touch_comment(tree / "runtime_include/structgen/cpu/reduce.h")  # a header sum's variants declare
    assert generate(load_manifest(tree / "native_functions.yaml"), tree / "gen", shards=4) == []
    assert snapshot(tree / "gen") == before


@needs_cmake
def test_variant_hash_follows_its_declared_sources(tree):
    generate(load_manifest(tree / "native_functions.yaml"), tree / "gen", shards=4)
    base = build_hashes(tree)
    tu = tree / "build/autotune_build.cpp"
    stamp = tu.stat().st_mtime_ns
    sum_cpu = {k for k in base if k.startswith("sum_IntList_out_cpu__")}
    sum_cuda = {k for k in base if k.startswith("sum_IntList_out_cuda__")}
    mm_cpu = {k for k in base if re.match(r"(mm|addmm|linear)_out_cpu__", k)}
    assert sum_cpu and sum_cuda and mm_cpu

    def changed() -> set[str]:
        return {k for k, v in build_hashes(tree).items() if v != base[k]}

    # An op without variants: the translation unit is not even rewritten, nor is the file a dependency.
    time.sleep(0.01)
    touch_comment(tree / "csrc/ops/pool/cpu.cpp")
    assert changed() == set()
    assert tu.stat().st_mtime_ns == stamp
    assert "ops/pool" not in (tree / "build/autotune_build.d").read_text()

    # A variant's kernel file: that device's variants of that op, nothing else.
    touch_comment(tree / "csrc/ops/reduce/cpu_sum.cpp")
    assert changed() == sum_cpu
    base = build_hashes(tree)
    touch_comment(tree / "csrc/ops/reduce/cuda.cu")
    assert changed() == sum_cuda
    base = build_hashes(tree)

    # A shared header a variant declares, and a file added to a declared folder.
    touch_comment(tree / "runtime_include/structgen/cpu/reduce.h")
    assert changed() == sum_cpu
    base = build_hashes(tree)
    (tree / "csrc/ops/linalg/cpu_extra.cpp").write_text("// new\n")
    assert changed() == mm_cpu


@needs_cmake
def test_a_missing_source_stops_the_build(tree):
    text = (tree / "native_functions.yaml").read_text()
    (tree / "native_functions.yaml").write_text(text.replace("sources: [ops/reduce,", "sources: [ops/reduc,"))
    generate(load_manifest(tree / "native_functions.yaml"), tree / "gen", shards=4)
    with pytest.raises(subprocess.CalledProcessError) as e:
        build_hashes(tree)
    assert (
        "native_functions.yaml: sum.IntList_out: kernels.sources names 'ops/reduc', which is not in csrc/"
        in (" ".join(e.value.stderr.split()))
    )


def test_hand_written_variants_must_declare_sources(tmp_path):
    path = write_manifest(tmp_path, MM_OUT)
    with pytest.raises(SpecError) as e:
        generate(load_manifest(path), tmp_path / "gen", shards=2)
    assert str(e.value).startswith(
        "native_functions.yaml:5: mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!): "
        "'kernels' with hand-written variants needs 'sources'"
    )
    assert not (tmp_path / "gen").exists()


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        (
            "[csrc/ops/linalg]",
            "kernels.sources: 'csrc/ops/linalg' starts with csrc/; paths are under csrc/ already",
        ),
        ("[../secrets]", "kernels.sources: '../secrets' is not a plain relative path under csrc/"),
        ("[]", "kernels.sources must list the files or folders under csrc/ the variants' code is in"),
    ],
    ids=["csrc_prefix", "parent_dir", "empty"],
)
def test_malformed_sources(tmp_path, sources, message):
    with pytest.raises(SpecError) as e:
        load_manifest(write_manifest(tmp_path, MM_OUT + f"    sources: {sources}\n"))
    assert message in str(e.value)
