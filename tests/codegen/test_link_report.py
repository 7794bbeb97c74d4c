"""A hook the manifest declares and no source defines fails the build right after the ops library
links: codegen/link.py lists the library's undefined symbols of the project's namespace (and the
runtime's) and names their manifest entries."""

import shutil
import subprocess
from pathlib import Path

import pytest
from structgen.codegen import link
from structgen.codegen.dest.structured import all_hooks
from structgen.codegen.gen import generate
from structgen.codegen.manifest import load_manifest

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "native_functions.yaml"

USES_UNDEFINED = """
namespace structops::impl { int declared_but_missing(int); int defined_here(int x) { return x; } }
namespace other { int elsewhere(int); }
int entry(int x) { return structops::impl::declared_but_missing(x) + other::elsewhere(x)
                          + structops::impl::defined_here(x); }
"""


def test_undefined_hooks_are_named_with_their_manifest_entry(tmp_path):
    manifest = load_manifest(FIXTURE)
    generate(manifest, tmp_path, shards=2)
    bmm = next(h for op in all_hooks(manifest) for h in op.hooks if h.symbol.endswith("_loop"))
    lines = link.report([bmm.symbol, "structops::impl::helper_nobody_declares"], tmp_path / "hooks.txt")
    assert lines[0].startswith(f"{bmm.where}: {bmm.symbol} (CPU impl variant 'loop' of bmm.out")
    assert "structgen signature" in lines[0]
    assert lines[1].startswith("structops::impl::helper_nobody_declares is called but defined nowhere")
    assert len(lines) == 2


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("nm") is None, reason="needs g++ and nm")
def test_only_the_namespaces_hooks_txt_names_are_reported(tmp_path, capsys):
    source = tmp_path / "uses.cpp"
    source.write_text(USES_UNDEFINED)
    library = tmp_path / "libuses.so"
    subprocess.run(["g++", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    assert link.undefined(library, ["structops"]) == ["structops::impl::declared_but_missing"]
    assert sorted(link.undefined(library, ["structops", "other"])) == [
        "other::elsewhere",
        "structops::impl::declared_but_missing",
    ]
    hooks = tmp_path / "hooks.txt"
    hooks.write_text(
        "# symbol\twhere\twhat\nnamespace\tstructops\n"
        "structops::impl::declared_but_missing\tm.yaml:7\tCPU impl of f\n"
    )
    assert link.main([str(library), str(hooks)]) == 1
    assert capsys.readouterr().err.startswith(
        "m.yaml:7: structops::impl::declared_but_missing (CPU impl of f)"
    )
    hooks_only_defined = tmp_path / "libdefined.so"
    source.write_text("namespace structops { int f(int x) { return x; } }\n")
    subprocess.run(["g++", "-shared", "-fPIC", "-o", str(hooks_only_defined), str(source)], check=True)
    assert link.main([str(hooks_only_defined), str(hooks)]) == 0
