"""FileManager and build-facing behaviour of the generator."""

import time
from pathlib import Path

import pytest
import yaml
from structgen.codegen.dest.structured import shard_of
from structgen.codegen.entry import KNOWN_TAGS
from structgen.codegen.gen import (
    OutputKind,
    all_outputs,
    fixed_outputs,
    generate,
    outputs,
    write_outputs_cmake,
)
from structgen.codegen.manifest import load_manifest

HERE = Path(__file__).parent
FIXTURE = HERE / "fixtures/native_functions.yaml"


def test_unchanged_outputs_keep_their_mtime(tmp_path):
    manifest = load_manifest(FIXTURE)
    assert generate(manifest, tmp_path, shards=2)  # first run writes everything
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    time.sleep(0.01)
    assert generate(manifest, tmp_path, shards=2) == []
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()} == stamps


def test_editing_one_op_rewrites_only_its_files(tmp_path):
    generate(load_manifest(FIXTURE), tmp_path, shards=4)
    edited = tmp_path / "native_functions.yaml"
    edited.write_text(FIXTURE.read_text().replace("doc: self + alpha * other.", "doc: changed"))
    assert generate(load_manifest(edited), tmp_path, shards=4) == ["python/fixture_pkg/ops/_ops.py"]
    edited.write_text(edited.read_text().replace("CPU: aminmax_out_cpu", "CPU: aminmax_cpu_v2"))
    written = generate(load_manifest(edited), tmp_path, shards=4)
    shard = shard_of("aminmax", 4)
    # hooks.txt lists the renamed hook; only the link reads it, so nothing recompiles for it
    assert written == ["hooks.txt", "include/fixture/include/ops/aminmax.h", f"src/wrappers_cpu_{shard}.cpp"]


def test_removed_op_header_is_deleted(tmp_path):
    generate(load_manifest(FIXTURE), tmp_path, shards=2)
    assert (tmp_path / "include/fixture/include/ops/my_fused.h").exists()
    smaller = tmp_path / "native_functions.yaml"
    smaller.write_text(FIXTURE.read_text().split("- func: my_fused")[0])
    generate(load_manifest(smaller), tmp_path, shards=2)
    assert not (tmp_path / "include/fixture/include/ops/my_fused.h").exists()


def test_every_file_has_the_generated_banner(tmp_path):
    generate(load_manifest(FIXTURE), tmp_path, shards=2)
    for p in tmp_path.rglob("*"):
        if p.is_file():
            first = p.read_text().splitlines()[0]
            assert "@generated from native_functions.yaml by codegen/templates/" in first
            assert "DO NOT EDIT" in first


def test_fixed_outputs_are_what_cmake_compiles(tmp_path):
    generate(load_manifest(FIXTURE), tmp_path, shards=3)
    assert all((tmp_path / f).is_file() for f in fixed_outputs(load_manifest(FIXTURE).project, 3))


def test_known_tags_match_torch():
    torchgen = pytest.importorskip("torchgen")
    tags_yaml = Path(torchgen.__file__).parent / "packaged/ATen/native/tags.yaml"
    torch_tags = {t["tag"] for t in yaml.safe_load(tags_yaml.read_text())}
    assert set(KNOWN_TAGS) <= torch_tags | {"inplace", "out"}


def test_every_generated_file_is_declared_to_cmake(tmp_path):
    """Undeclared outputs would be stat'ed by ninja before codegen runs: stale objects."""
    manifest = load_manifest(FIXTURE)
    generate(manifest, tmp_path, shards=2)
    produced = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert produced == set(all_outputs(manifest, 2))


def test_outputs_cmake_lists_every_generated_file_under_its_kind(tmp_path):
    """CMake's file lists are the generator's registry (OutputKind), not patterns over names."""
    manifest = load_manifest(FIXTURE)
    generate(manifest, tmp_path, shards=2)
    by_kind = {o.path: o.kind for o in outputs(manifest, 2)}
    assert set(by_kind) == {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert by_kind["src/wrappers_cuda_0.cpp"] is OutputKind.CUDA_HOST
    assert by_kind["src/wrappers_meta_1.cpp"] is OutputKind.GLUE
    assert by_kind["src/kernels_cpu_scaled_act.cpp"] is OutputKind.KERNELS
    assert by_kind["src/kernels_cpu_host_0.cpp"] is OutputKind.OPS
    assert by_kind["src/kernels_cuda_scaled_act.cu"] is OutputKind.CUDA_DEVICE
    assert by_kind["python/fixture_pkg/ops/_rules.py"] is OutputKind.PYTHON
    text = (tmp_path / "outputs.cmake").read_text()
    for kind in OutputKind:
        listed = text.split(f"set(GENERATED_{kind.value}\n", 1)[1].split(")", 1)[0].split()
        assert listed == [f'"${{CMAKE_CURRENT_LIST_DIR}}/{p}"' for p, k in by_kind.items() if k is kind]
    assert 'set(GENERATED_UNITY_wrappers_1 "${CMAKE_CURRENT_LIST_DIR}/src/wrappers_cpu_1.cpp"' in text
    # The configure step's copy (--cmake-outputs) is the same file, so the build does not rewrite it.
    alone = tmp_path / "alone"
    assert write_outputs_cmake(manifest, alone, 2) == ["outputs.cmake"]
    assert (alone / "outputs.cmake").read_text() == text
