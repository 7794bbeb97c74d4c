import sys
from pathlib import Path

# The generator is a plain source package at the repository root (not installed).
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def pytest_sessionstart(session):
    """Render the conformance suite (tests/generated/, git-ignored) from the manifest."""
    from codegen.gen import generate_tests
    from codegen.manifest import load_manifest

    generate_tests(load_manifest(ROOT / "native_functions.yaml"), ROOT / "tests" / "generated")
