import os
import sys
import tempfile
from pathlib import Path

# Kernel-variant decisions (structops.autotune) go to a fresh folder, not the user's cache: the
# suite then times variants the way a first run does. Set before structops loads (it reads once).
os.environ.setdefault("STRUCTOPS_AUTOTUNE_CACHE_DIR", tempfile.mkdtemp(prefix="structops-autotune-"))
# Inductor's caches key compiled graphs by the graph and torch, not by the extension's build: a
# cache left by an earlier build would replay that build's lowering. Each run compiles afresh.
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="structops-inductor-"))

# The generator is a plain source package at the repository root (not installed), and the tests
# import each other's helpers as tests.<folder> (tests/conformance: the conformance engine).
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Checkouts from before the conformance engine moved to tests/conformance/ may still hold the
# per-op modules it rendered into tests/generated/; they import a module that no longer exists.
collect_ignore = ["generated"]


def pytest_configure(config) -> None:
    """The conformance suite runs on structops unless --manifest (structgen's pytest plugin)
    names another package."""
    from tests.under_test import use_structops

    use_structops()
