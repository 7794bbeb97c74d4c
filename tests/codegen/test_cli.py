"""The `structgen` console script as an op author uses it: a check that writes nothing, and
`signature OP`, which prints the functions to define exactly as the generated header declares
them."""

import subprocess
import sys
from pathlib import Path

from structgen.codegen.conformance import scaffold_ops
from structgen.codegen.gen import generate
from structgen.codegen.manifest import load_manifest

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "codegen" / "fixtures" / "native_functions.yaml"


def _codegen(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).with_name("structgen")), *args],
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_generator_imports_no_torch():
    """The generator runs where torch is absent or slow to import (a build's configure step)."""
    code = "import sys, structgen.codegen.__main__, structgen.codegen.gen; print('torch' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.stdout.strip() == "False", proc.stderr


def test_plain_run_checks_and_writes_nothing(tmp_path):
    proc = _codegen("--manifest", str(FIXTURE), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "structured ops: ok" in proc.stdout
    assert list(tmp_path.iterdir()) == [], "a check writes no file"


def test_signature_prints_what_the_generated_header_declares(tmp_path):
    generate(load_manifest(FIXTURE), tmp_path, shards=2)
    proc = _codegen("signature", "bmm", "--manifest", str(FIXTURE))
    assert proc.returncode == 0, proc.stderr
    declarations = [line for line in proc.stdout.splitlines() if line.endswith(");")]
    assert declarations, proc.stdout
    header = (
        tmp_path / "include" / proc.stdout.splitlines()[0].removeprefix("#include <").rstrip(">")
    ).read_text()
    for d in declarations:
        assert d in header, f"{d} is not what the generated header declares"


def test_signature_of_a_generated_op_and_of_an_unknown_one():
    generated = _codegen("signature", "scaled_act", "--manifest", str(FIXTURE))
    assert generated.returncode == 0 and "every kernel is generated" in generated.stdout
    unknown = _codegen("signature", "nope", "--manifest", str(FIXTURE))
    assert unknown.returncode == 1 and "nope: no such op" in unknown.stderr


def test_new_op_scaffolds_entries_that_load_and_an_impl_of_the_exact_signature(tmp_path):
    manifest = tmp_path / "native_functions.yaml"
    manifest.write_text(FIXTURE.read_text())
    for name, kind in (("flipx", "structured"), ("softplusx", "pointwise")):
        proc = _codegen("new-op", name, "--kind", kind, "--manifest", str(manifest))
        assert proc.returncode == 0, proc.stderr
    loaded = load_manifest(manifest)
    assert {"flipx.out", "flipx", "softplusx.out", "softplusx", "softplusx_"} <= {
        str(f.func.name) for f in loaded.functions
    }
    # Marked as scaffolds: named like a torch op (flip, softplus), they stay out of the parity and
    # OpInfo checks (tests/codegen/test_torch_parity.py, tests/conformance/opinfo.py) until written.
    assert scaffold_ops(loaded.functions) == {"flipx", "softplusx"}
    generate(loaded, tmp_path / "generated", shards=2)
    header = (tmp_path / "generated" / "include" / "fixture" / "include" / "ops" / "flipx.h").read_text()
    impl = (tmp_path / "csrc" / "ops" / "flipx" / "cpu.cpp").read_text()
    assert "namespace fixture::ops::impl {" in impl  # the project's C++ namespace
    definition = next(line for line in impl.splitlines() if line.startswith("void flipx_out_cpu("))
    assert definition.removesuffix(" {") + ";" in header


def test_new_op_starts_a_name_torch_has_from_torch_schemas(tmp_path):
    """logaddexp (pointwise by torch's tags, two tensors, no inplace form) and triu (structured,
    SymInt, an inplace form): torch's overloads, types and defaults, torch's op as reference."""
    import torch

    manifest = tmp_path / "native_functions.yaml"
    manifest.write_text(FIXTURE.read_text())
    said = {}
    for name in ("logaddexp", "triu"):
        proc = _codegen("new-op", name, "--manifest", str(manifest))
        assert proc.returncode == 0, proc.stderr
        said[name] = proc.stdout
    assert "kind: pointwise: torch tags it pointwise" in said["logaddexp"]
    assert "kind: structured: torch does not tag it pointwise" in said["triu"]
    loaded = load_manifest(manifest)
    ours = {str(f.func.name): str(f.func) for f in loaded.functions}
    for name, overloads in (("logaddexp", ("", "out")), ("triu", ("", "out"))):
        for overload in overloads:
            qualified = f"{name}.{overload}" if overload else name
            (theirs,) = [
                str(s).removeprefix("aten::")
                for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}")
                if s.overload_name == overload
            ]
            assert ours[qualified] == theirs
    assert "triu_" in ours and "logaddexp_" not in ours  # torch has triu_, no logaddexp_
    tests = {str(f.func.name): f.tests for f in loaded.functions if f.tests is not None}
    assert tests["logaddexp"].reference == "torch.ops.aten.logaddexp" and not tests["logaddexp"].scaffold
    generate(loaded, tmp_path / "generated", shards=2)  # the entries generate
    assert (tmp_path / "csrc" / "ops" / "triu" / "cpu.cpp").exists()
    unknown = _codegen("new-op", "no_such_op", "--manifest", str(manifest))
    assert unknown.returncode == 2 and "give --kind pointwise or --kind structured" in unknown.stderr


def test_new_op_refuses_a_taken_or_bad_name_and_writes_nothing(tmp_path):
    manifest = tmp_path / "native_functions.yaml"
    manifest.write_text(FIXTURE.read_text())
    for name in ("bmm", "class", "so_x", "x_"):
        proc = _codegen("new-op", name, "--kind", "structured", "--manifest", str(manifest))
        assert proc.returncode == 2 and proc.stderr, name
    assert manifest.read_text() == FIXTURE.read_text()
    assert not (tmp_path / "csrc").exists()


def test_help_lists_the_commands_that_exist_one_per_line():
    helped = _codegen("--help")
    assert helped.returncode == 0
    usages = [line.split() for line in helped.stdout.splitlines() if line.startswith("    structgen ")]
    subcommands = {words[1] for words in usages if len(words) > 1 and not words[1].startswith(("-", "["))}
    assert subcommands == {"signature", "new-op", "new-project", "cmake-dir"}  # no 'check': the default
    for name in subcommands:
        proc = _codegen(name, "--help")
        assert proc.returncode == 0 and f"usage: structgen {name}" in proc.stdout


def test_cmake_dir_is_where_find_package_finds_the_generator():
    proc = _codegen("cmake-dir")
    assert proc.returncode == 0, proc.stderr
    assert (Path(proc.stdout.strip()) / "structgenConfig.cmake").is_file(), proc.stdout
