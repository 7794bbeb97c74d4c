"""structgen new-project DIR --name NAME: a new package of operators that builds, imports and passes
its own test and its generated conformance suite as created.

It writes the manifest (the project header and one pointwise op to start from), a CMakeLists.txt
that calls the installed generator's CMake function (found with find_package, as pybind11's is),
a pyproject.toml (`pip install --no-build-isolation .` builds and installs the package), the
package's __init__.py, its test and the conformance suite's test module (structgen's pytest
plugin), and a README whose two commands build and test it. Nothing names a path of the
generator's: the project needs structgen installed, not its checkout. The op is a real one,
``<name>_softclip`` = limit * tanh(self / limit), so the first build shows a formula's generated
kernel, inplace form and gradient working; the author replaces it with their own.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path

from structgen.codegen.manifest import load_manifest
from structgen.codegen.version import GENERATOR_VERSION

MANIFEST = """\
# {name}'s operators (the generator's manifest format: its docs/ say what each key means).
- project:
    name: {name}       # torch.ops.{name}; the C++ namespace, Python package, include prefix
    sources: [csrc]    # and autotune cache default to it; hand-written kernels go under csrc/
    format: 1

# A pointwise op: one formula; its CPU kernel, inplace form and gradient are generated.
- func: {op}.out(Tensor self, *, Scalar limit=1, Tensor(a!) out) -> Tensor(a!)
  structured: True
  pointwise: "limit * tanh(self / limit)"
  meta:
    dtype: {{out: "promote(self, kind=INT_TO_FLOAT)"}}
  tags: [pointwise]

- func: {op}(Tensor self, *, Scalar limit=1) -> Tensor
  structured_delegate: {op}.out
  tags: [pointwise]
  tests:
    reference: "lambda self, limit=1: limit * torch.tanh(self / limit)"
    # The generated gradient, grad * (1 - tanh(u)^2), keeps only tanh's rounding where tanh(u)
    # is near +-1 (as torch's tanh_backward), and is large near complex tanh's poles: these are
    # the accuracies the conformance suite holds it to (docs/conformance.md, the tests: key).
    tolerance: {{complex64: [1e-5, 1e-5]}}
    hostile:
    - {{samples: ".", dtypes: [float16, bfloat16, float32, complex64], differs: accuracy,
        tolerance: [1e-6, 0], of: gradients,
        why: "1 - tanh(u)^2 near |tanh(u)| = 1 keeps only tanh's rounding: a few float ulps of 1"}}
  doc: limit * tanh(self / limit), elementwise.

- func: {op}_(Tensor(a!) self, *, Scalar limit=1) -> Tensor(a!)
  structured_delegate: {op}.out
  tags: [pointwise]
"""

CMAKE = """\
# {name}: its manifest and csrc/ in, one extension out (the generator's CMake function).
cmake_minimum_required(VERSION 3.25)
project({name} LANGUAGES CXX)

# The generator's CMake package, the one the build's Python has installed (-Dstructgen_DIR=...
# names another).
find_package(Python 3.10 REQUIRED COMPONENTS Interpreter)
execute_process(
  COMMAND "${{Python_EXECUTABLE}}" -m structgen.codegen cmake-dir
  OUTPUT_VARIABLE structgen_cmake_dir OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
find_package(structgen {version} CONFIG REQUIRED HINTS "${{structgen_cmake_dir}}")

add_generated_extension({name} MANIFEST native_functions.yaml)
configure_file(python/{name}/__init__.py "${{{name}_PACKAGE_DIR}}/__init__.py" COPYONLY)

# `pip install --no-build-isolation .` (pyproject.toml): the package as built, its library beside
# the generated modules.
install(DIRECTORY "${{{name}_PACKAGE_DIR}}/" DESTINATION {name} PATTERN "__pycache__" EXCLUDE)
"""

PYPROJECT = """[build-system]
requires = ["scikit-build-core>=0.10", "structgen>={version},<{next_version}"]
build-backend = "scikit_build_core.build"

[project]
name = "{name}"
version = "0.1.0"
description = "{name}: PyTorch operators generated from native_functions.yaml"
requires-python = ">=3.10"
# torch is not listed: the build and the package use the torch already installed (a bare "torch"
# requirement may pull another build of it), so install with --no-build-isolation.
dependencies = ["structgen>={version},<{next_version}"]

[tool.scikit-build]
wheel.packages = []  # the package is what CMakeLists.txt installs
cmake.build-type = "Release"
"""

INIT = '''\
"""{name}: operators generated from ../../native_functions.yaml.

Importing the package loads its library, which registers torch.ops.{name}.*, and exposes them as
{name}.<op>. The runtime's Python helpers come from structgen (the generator's runtime).
"""

from pathlib import Path

import structgen  # noqa: F401 - the runtime's Python helpers the generated _ops module calls
import torch

torch.ops.load_library(str(Path(__file__).with_name("lib{name}.so")))

from {name}._ops import *  # noqa: E402, F403
from {name}._ops import __all__  # noqa: E402, F401
'''

TEST = '''\
"""{name}'s first test: the op against torch, on real and meta tensors, with its gradient."""

import torch

import {name}


def test_{op}_matches_torch():
    x = torch.tensor([-10.0, -0.5, 0.0, 0.5, 10.0], dtype=torch.float64, requires_grad=True)
    torch.testing.assert_close({name}.{op}(x, limit=2.5), 2.5 * torch.tanh(x / 2.5))
    assert torch.autograd.gradcheck(lambda v: {name}.{op}(v, limit=2.5), (x,))
    y = x.detach().clone()
    {name}.{op}_(y)
    torch.testing.assert_close(y, torch.tanh(x.detach()))
    assert {name}.{op}(torch.empty(2, 3, device="meta")).shape == (2, 3)
'''

CONFORMANCE = '''\
"""structgen's conformance suite on every op of native_functions.yaml (the plugin finds the
manifest at pytest's rootdir; -k NAME runs one op's cases)."""

from structgen.conformance.test_conformance import test_conformance  # noqa: F401 - collected here
'''

README = """\
# {name}

Operators for PyTorch, generated from `native_functions.yaml` by structgen {version} (one
structured kernel per op: a meta function and an impl, from which the functional, inplace and
out= variants are derived).

```bash
cmake -S . -B build -G Ninja -DPython_EXECUTABLE="$(command -v python)" && cmake --build build
PYTHONPATH=build/{name}_generated/python python -m pytest -q -p no:cacheprovider tests
```

The first builds the extension into `build/{name}_generated/python/{name}/` (`pip install
--no-build-isolation .` builds and installs the package instead); the second runs your
tests and structgen's conformance suite (`tests/test_conformance.py`) on every op of the
manifest (meta functions, references, out= and inplace forms, errors, gradients and forward AD,
torch.compile, describe() and sharding, vmap, hostile values, and the CUDA kernels on the CPU
emulator, which it builds on first use). torch and structgen must be installed in the Python
that runs them. Add an op with `structgen new-op NAME --kind pointwise|structured`.
"""


@dataclass(frozen=True)
class Created:
    root: Path
    files: tuple[Path, ...]


def new_project(root: Path, name: str) -> Created:
    """Write the project into ``root`` (absent or empty). ValueError, nothing written, for a name
    that cannot be a package and namespace, or a folder that holds files."""
    if (
        not re.fullmatch(r"[a-z_][a-z0-9_]*", name)
        or keyword.iskeyword(name)
        or name in ("torch", "structgen")
    ):
        raise ValueError(
            f"'{name}' cannot name a project: use a lowercase Python identifier (it names the package)"
        )
    if root.exists() and any(root.iterdir()):
        raise ValueError(f"{root} holds files already: give a new or empty folder")
    op = f"{name}_softclip"
    major, minor, _ = GENERATOR_VERSION.split(".")
    values = {
        "name": name,
        "op": op,
        "version": f"{major}.{minor}",  # the minor version it is made for
        "next_version": f"{major}.{int(minor) + 1}" if major == "0" else f"{int(major) + 1}",
    }
    files = {
        "native_functions.yaml": MANIFEST,
        "CMakeLists.txt": CMAKE,
        "pyproject.toml": PYPROJECT,
        f"python/{name}/__init__.py": INIT,
        f"tests/test_{name}.py": TEST,
        "tests/test_conformance.py": CONFORMANCE,
        "README.md": README,
        "csrc/ops/.gitkeep": "",
    }
    written = []
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.format(**values))
        written.append(path)
    load_manifest(root / "native_functions.yaml")  # the manifest it wrote must load
    return Created(root, tuple(written))
