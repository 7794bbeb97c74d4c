"""The generator's layers (docs/architecture.md): each module imports only modules of lower
layers, and only the checking layers raise SpecError, so a manifest that loads generates."""

import ast
from pathlib import Path

import pytest

CODEGEN = Path(__file__).resolve().parents[2] / "codegen"

# Lowest first. A module may import modules of lower layers only (dest/ modules also share
# helpers among themselves).
LAYERS = (
    ("errors", "limits", "dtypes", "memo", "api.names", "link", "workers", "version"),  # leaves
    # The model at the bottom (codegen/model/): frozen types that import nothing of the parsers.
    ("model.schema", "model.rule_tree", "model.rule_ir", "model.formula", "model.tests"),
    ("model.rule", "model.pointwise", "model.autograd", "model.composite", "model.kernels", "model.project"),
    ("model.native",),  # an entry, a structured op, the manifest
    (
        "load",
        "files",
        "api.cpp",
        "api.python",
        "rules.syntax",
        "rules.builtins",
        "rules.cpp",
        "rules.python",
        "pointwise.syntax",
        "pointwise.lower",
        "pointwise.python",
        "autograd.derive",
        "autograd.functions",
    ),  # parsers of one language, and printers of its IR
    (
        "project",
        "api.boxed",
        "autograd.aten",
        "autograd.cpp",
        "rules.check",
        "composite",
        "conformance",
        "multi_kernel",
        "scalar_of",
    ),  # a rule as written -> its IR; manifest keys
    ("rules.model", "pointwise.model", "autograd.formulas", "autograd.fused"),  # manifest keys
    (
        "spellings",
        "python_names",
        "kernel_keys",
        "entry_checks",
    ),  # manifest keys over the model (an entry's, a name's)
    ("entry",),  # the checker: one entry
    ("manifest",),  # the checker: the whole manifest
    ("dest.*",),  # template contexts from the model
    ("gen", "new_op", "new_project"),
    ("__main__",),
)
CHECKING = {m for layer in LAYERS[: LAYERS.index(("manifest",)) + 1] for m in layer}


def _module(path: Path) -> str:
    return ".".join(path.relative_to(CODEGEN).with_suffix("").parts)


def _layer(module: str) -> int:
    for i, layer in enumerate(LAYERS):
        if module in layer or (module.startswith("dest.") and "dest.*" in layer):
            return i
    raise AssertionError(f"codegen.{module} is in no layer of tests/codegen/test_architecture.py: add it")


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("structgen.codegen"):
            base = node.module.removeprefix("structgen.codegen").lstrip(".")
            for alias in node.names:  # `from structgen.codegen.rules import ir` imports the module rules.ir
                sub = f"{base}.{alias.name}" if base else alias.name
                found.add(sub if (CODEGEN / (sub.replace(".", "/") + ".py")).exists() else base)
        elif isinstance(node, ast.Import):
            found.update(
                a.name.removeprefix("structgen.codegen.")
                for a in node.names
                if a.name.startswith("structgen.codegen.")
            )
    return {m for m in found if m}


SOURCES = sorted(p for p in CODEGEN.rglob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: _module(p))
def test_imports_run_downwards(path):
    module = _module(path)
    for imported in _imports(path):
        both_dest = module.startswith("dest.") and imported.startswith("dest.")
        assert both_dest or _layer(imported) < _layer(module), (
            f"codegen.{module} (layer {_layer(module)}) imports codegen.{imported} (layer {_layer(imported)})"
        )


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: _module(p))
def test_only_the_checker_raises_spec_errors(path):
    module = _module(path)
    if module in CHECKING:
        return
    assert "SpecError(" not in path.read_text(), f"codegen.{module} raises SpecError: check it in manifest.py"
