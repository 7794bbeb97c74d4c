"""docs/rules.md lists every rule builtin as codegen/rules/builtins.py defines it: each table
between `<!-- builtins: CONTEXT -->` and `<!-- end builtins -->` is rendered from the table.
After changing a builtin: STRUCTOPS_UPDATE_GOLDEN=1 bash tools/test.sh tests/codegen/test_rule_docs.py"""

import os
import re
from pathlib import Path

import pytest
from structgen.codegen.rules import builtins

DOCS = {
    "shape": Path(__file__).resolve().parents[2] / "docs" / "rules.md",
    "check": Path(__file__).resolve().parents[2] / "docs" / "rules.md",
    "index": Path(__file__).resolve().parents[2] / "docs" / "rules.md",
}


def _block(context: str) -> re.Pattern:
    return re.compile(rf"(<!-- builtins: {context} -->\n)(.*?)(\n<!-- end builtins -->)", re.DOTALL)


@pytest.mark.parametrize("context", DOCS)
def test_docs_tables_are_the_builtin_table(context):
    path = DOCS[context]
    text = path.read_text()
    found = _block(context).search(text)
    assert found, f"{path.name} has no '<!-- builtins: {context} -->' ... '<!-- end builtins -->' block"
    expected = builtins.docs_table(context)
    if found.group(2) != expected and os.environ.get("STRUCTOPS_UPDATE_GOLDEN") == "1":
        path.write_text(text[: found.start(2)] + expected + text[found.end(2) :])
        return
    assert found.group(2) == expected, (
        f"{path.name}'s {context} builtins differ from codegen/rules/builtins.py"
    )


def test_every_builtin_has_a_documented_context():
    assert {b.context for b in builtins.BUILTINS} <= set(DOCS) | {"dtype", "layout", "tuning"}
