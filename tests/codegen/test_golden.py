"""Golden outputs of the fixture manifest: a template change shows up as a reviewable diff.

Regenerate after an intended change: STRUCTOPS_UPDATE_GOLDEN=1 pytest tests/codegen/test_golden.py
"""

import ast
import os
import shutil
from pathlib import Path

from structgen.codegen.gen import generate
from structgen.codegen.manifest import load_manifest

HERE = Path(__file__).parent
GOLDEN = HERE / "golden"


def test_fixture_outputs_match_golden(tmp_path):
    generate(load_manifest(HERE / "fixtures/native_functions.yaml"), tmp_path, shards=2)
    produced = {p.relative_to(tmp_path).as_posix(): p.read_text() for p in tmp_path.rglob("*") if p.is_file()}
    if os.environ.get("STRUCTOPS_UPDATE_GOLDEN"):
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for rel, text in produced.items():
            (GOLDEN / rel).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / rel).write_text(text)
    expected = {p.relative_to(GOLDEN).as_posix(): p.read_text() for p in GOLDEN.rglob("*") if p.is_file()}
    assert sorted(produced) == sorted(expected)
    for rel, text in produced.items():
        assert text == expected[rel], f"{rel} differs from golden (see module docstring)"
        if rel.endswith((".py", ".pyi")):
            ast.parse(text, rel)  # a default like mode="fast" must stay a literal in every context
