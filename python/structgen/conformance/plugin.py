"""The conformance suite for any generated package, as a pytest plugin (the pytest11 entry
point of the structgen distribution, so it is loaded wherever structgen is installed).

    python -m pytest --pyargs structgen.conformance --manifest path/to/native_functions.yaml

runs every check (meta, references, out=/inplace, errors, gradients, forward AD, torch.compile,
describe and sharding, vmap, hostile values, emulated CUDA where the package has an emulator
build) on the package that manifest generates: the project header's `python_package` is imported
first (its library registers torch.ops.<name>; its _ops module serves it to the runtime), then
the suite's cases are drawn from its manifest. Without --manifest, a native_functions.yaml at
pytest's rootdir is the one; a project's own test module can also hold the suite:
`from structgen.conformance.test_conformance import test_conformance`. The package must be
importable (installed, or on PYTHONPATH).
"""

from __future__ import annotations

from pathlib import Path


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--manifest",
        default=None,
        help="the manifest of the generated package to run the conformance suite on "
        "(default: native_functions.yaml at the rootdir)",
    )


# The manifest at pytest's rootdir: the suite's when no other is named, read only once the suite
# is collected (spec._manifest), so a test run that does not collect it (the plugin is loaded
# wherever structgen is installed) neither imports torch nor reads a native_functions.yaml that
# is not structgen's.
ROOTDIR_MANIFEST: list[Path | None] = [None]


def pytest_configure(config) -> None:
    ROOTDIR_MANIFEST[0] = config.rootpath / "native_functions.yaml"
    given = config.getoption("--manifest")
    if given is not None:  # named: loaded now, its package imported
        from structgen.conformance import spec

        spec.use_manifest(Path(given))
