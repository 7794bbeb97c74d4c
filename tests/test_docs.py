"""The docs name files that exist: every repository path README.md and docs/*.md mention outside
code examples is a file of the tree, or one the build generates (codegen/gen.py)."""

import re
from pathlib import Path

import pytest
from structgen.codegen.gen import fixed_outputs
from structgen.codegen.manifest import load_manifest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PATH = re.compile(
    r"(?<![\w/.])((?:codegen|csrc|tests|tools|python|docs|cmake|structops)/[\w./-]+"
    r"\.(?:py|pyi|h|cuh|cpp|cu|md|sh|j2|cmake|yaml|txt))"
)
GENERATED = {
    Path(f).name
    for f in fixed_outputs(load_manifest(ROOT / "structops" / "native_functions.yaml").project, 1)
}


def _prose(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # code examples may name files to create


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_docs_name_files_that_exist(doc):
    stale = []
    for m in PATH.finditer(_prose(doc.read_text())):
        path = m.group(1)
        if path.startswith("structops/ops/") or Path(path).name in GENERATED:
            continue  # generated per op, or by the build
        if not any(
            p.exists()
            for p in (
                ROOT / path,
                ROOT / "csrc/include" / path,
                ROOT / "python" / path,
                ROOT / "structops" / path,
            )
        ):
            stale.append(path)
    assert not stale, f"{doc.name} names files that do not exist: {sorted(set(stale))}"
