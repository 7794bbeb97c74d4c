"""The project header: a manifest's package names, declared once, each checked, and every name
the generated code gives the outside world taken from it (codegen/project.py)."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from structgen.codegen.manifest import load_manifest
from structgen.codegen.model.project import DEFAULT_PROJECT, Project
from structgen.codegen.version import GENERATOR_VERSION, MANIFEST_FORMAT

from tests.codegen.manifest_helpers import ROOT, load_error, write_manifest

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "native_functions.yaml"

ENTRY = """
- func: neg(Tensor self) -> Tensor
  dispatch: {CPU: neg_cpu}
"""


def _with_header(header: str) -> str:
    return textwrap.dedent(header).strip("\n") + "\n" + ENTRY


def test_a_name_alone_names_everything(tmp_path):
    manifest = load_manifest(write_manifest(tmp_path, _with_header("- project: {name: myops}")))
    assert manifest.project == Project(
        "myops", "myops", "myops", "myops", ("csrc",), "myops", MANIFEST_FORMAT
    )


def test_every_key_is_read(tmp_path):
    header = """
    - project:
        name: myops
        cpp_namespace: my::ops
        python_package: mypkg.ops
        include_prefix: mypkg/ops
        sources: [src, more/kernels]
        autotune_cache: my-ops
        format: 1
    """
    project = load_manifest(write_manifest(tmp_path, _with_header(header))).project
    assert project == Project(
        "myops", "my::ops", "mypkg.ops", "mypkg/ops", ("src", "more/kernels"), "my-ops", 1
    )
    assert project.python_dir == "python/mypkg/ops"


def test_no_header_is_the_default_project(tmp_path):
    assert load_manifest(write_manifest(tmp_path, ENTRY)).project == DEFAULT_PROJECT


@pytest.mark.parametrize(
    ("header", "line", "message"),
    [
        ("- project: {name: 3x}", 1, "project: name '3x' is not an identifier (letters, digits, _)"),
        (
            "- project: {name: aten}",
            1,
            "project: 'aten' is one of torch's own namespaces — choose another name",
        ),
        ("- project: {}", 1, "project: the header has no 'name'"),
        ("- project: {name: a, colour: red}", 1, "project: unknown key 'colour' — use one of: name,"),
        ("- project: {name: a, cpp_namespace: 'a::'}", 1, "cpp_namespace 'a::' is not a C++ namespace"),
        ("- project: {name: a, cpp_namespace: 'a::class'}", 1, "'class' is a C++ keyword"),
        ("- project: {name: a, python_package: a-b}", 1, "python_package 'a-b' is not a Python package name"),
        ("- project: {name: a, include_prefix: /abs}", 1, "include_prefix '/abs' is not an include folder"),
        ("- project: {name: a, sources: [../up]}", 1, "sources ['../up'] is not a list of folders"),
        ("- project: {name: a, sources: []}", 1, "sources [] is not a list of folders"),
        (
            "- project: {name: a, format: 99}",
            1,
            f"written for format 99; this generator ({GENERATOR_VERSION})",
        ),
        ("- project: {name: a, format: one}", 1, "format 'one' is not a format number"),
        ("- project: {name: a}\n  doc: x", 1, "the header holds other keys: doc — keep 'project:' alone"),
        ("- project: [a]", 1, "'project' must be a mapping"),
    ],
)
def test_a_bad_header_is_refused_at_its_line(tmp_path, header, line, message):
    error = load_error(tmp_path, _with_header(header))
    assert str(error).startswith(f"native_functions.yaml:{line}: project: "), str(error)
    assert message in str(error)


def test_a_header_that_is_not_first_is_refused(tmp_path):
    error = load_error(tmp_path, ENTRY.lstrip("\n") + "- project: {name: late}\n")
    assert str(error) == (
        "native_functions.yaml:3: project: the project header is not the manifest's first entry — "
        "move '- project: ...' to the top of the manifest, once"
    )


def test_generated_files_name_the_generator_version(tmp_path):
    from structgen.codegen.gen import generate

    generate(load_manifest(FIXTURE), tmp_path, shards=2)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert f"(generator {GENERATOR_VERSION})" in path.read_text().splitlines()[0], path


# Generate the fixture (project fixture_ops) with the runtime's names changed: what is left named
# structops would be a name neither the project header nor the one runtime table gives.
_RENAMED_RUNTIME = """
import sys
from pathlib import Path
from structgen.codegen.api import names
names.RUNTIME = names.Runtime(namespace="rt_ns", include="rt_inc", python="rt_py", macro="RT_MACRO")
from structgen.codegen.gen import generate
from structgen.codegen.manifest import load_manifest
generate(load_manifest(Path(sys.argv[1])), Path(sys.argv[2]), shards=2)
"""


def test_no_generated_file_names_structops_when_neither_project_nor_runtime_does(tmp_path):
    out = tmp_path / "generated"
    subprocess.run([sys.executable, "-c", _RENAMED_RUNTIME, str(FIXTURE), str(out)], cwd=ROOT, check=True)
    named = {
        f"{p.relative_to(out)}:{n}: {line.strip()}"
        for p in out.rglob("*")
        if p.is_file()
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if "structops" in line.lower() and n > 1  # line 1: the banner names the template's path
    }
    assert not named, "\n".join(sorted(named)[:20])
    wrappers = (out / "src/wrappers_cpu_0.cpp").read_text()
    assert "namespace fixture::ops {\nusing namespace ::rt_ns;" in wrappers
    assert "TORCH_LIBRARY_IMPL(fixture_ops, CPU, m)" in wrappers
    assert "#include <rt_inc/structured.h>" in wrappers
    assert "#include <fixture/include/ops/add_Tensor.h>" in wrappers
    assert "from rt_py._dispatch import" in (out / "python/fixture_pkg/ops/_ops.py").read_text()
    assert "#if defined(RT_MACRO_CUDA_EMULATION)" in (out / "src/wrappers_cuda_0.cpp").read_text()
