"""The conformance suite for any generated package, as a pytest plugin.

    python -m pytest <generator>/tests/conformance --manifest path/to/native_functions.yaml

runs every check (meta, references, out=/inplace, errors, gradients, forward AD, torch.compile,
describe and sharding, vmap, hostile values, emulated CUDA where the package has an emulator
build) on the package that manifest generates: the project header's `python_package` is imported
first (its library registers torch.ops.<name>; its _ops module serves it to the runtime), then
the suite's cases are drawn from its manifest. Without --manifest the suite runs on structops.
tests/conftest.py loads the plugin; the package must be importable (on PYTHONPATH).
"""

from __future__ import annotations

import importlib
from pathlib import Path


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--manifest",
        default=None,
        help="the manifest of the generated package to run the conformance suite on (default: structops')",
    )


def pytest_configure(config) -> None:
    path = config.getoption("--manifest")
    if path is None:
        return
    from tests.conformance import spec

    spec.UNDER_TEST[0] = Path(path).resolve()
    importlib.import_module(spec.under_test().python_package)
