"""The generator's layers (docs/architecture.md): each module imports only modules of lower
layers, and only the checking layers raise SpecError, so a manifest that loads generates."""

import ast
from pathlib import Path

import pytest

CODEGEN = Path(__file__).resolve().parents[2] / "codegen"

# Lowest first. A module may import modules of lower layers only (dest/ modules also share
# helpers among themselves).
LAYERS = (
    (
        "errors",
        "limits",
        "dtypes",
        "memo",
        "model",
        "api.names",
        "link",
        "workers",
        "version",
    ),  # leaves
    (
        "load",
        "files",
        "autograd.functions",
        "api.cpp",
        "api.python",
        "rules.syntax",
        "rules.ir",
        "rules.builtins",
        "pointwise.syntax",
    ),
    (
        "project",
        "api.boxed",
        "rules.spec",
        "rules.cpp",
        "rules.python",
        "pointwise.lower",
        "pointwise.python",
        "autograd.derive",
        "autograd.aten",
    ),  # IR printers
    ("rules.check",),  # a rule as written -> its IR
    ("rules.model", "conformance", "multi_kernel", "autograd.formulas", "composite"),  # manifest keys
    ("pointwise.model", "autograd.cpp", "autograd.fused"),
    ("native",),  # the typed model of a checked manifest
    (
        "spellings",
        "python_names",
        "kernel_keys",
        "entry_checks",
    ),  # manifest keys over the model (an entry's, a name's)
    ("entry", "scalar_of"),  # the checker: one entry (a Scalar overload with its target's keys)
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
