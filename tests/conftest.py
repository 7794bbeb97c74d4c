import os
import sys
import tempfile
from pathlib import Path

# Kernel-variant decisions (structops.autotune) go to a fresh folder, not the user's cache: the
# suite then times variants the way a first run does. Set before structops loads (it reads once).
os.environ.setdefault("STRUCTOPS_AUTOTUNE_CACHE_DIR", tempfile.mkdtemp(prefix="structops-autotune-"))
# Inductor's C++ kernels, each keyed by its own source, and its probes of the CPU stay between runs
# in build/: a second run of one op's suite skips their compiles (add_Tensor: 36 s -> 25 s on 2
# cores). Its caches of whole compiled graphs (FX graphs, and AOTAutograd's, which needs those) are
# off by default, as are Dynamo's saved profiles of dynamic dims: they key a graph by the traced
# graph and torch, not by the extension's build, so an earlier build's lowering would come back
# (and a profile would make a later static compile dynamic).
os.environ.setdefault(
    "TORCHINDUCTOR_CACHE_DIR", str(Path(__file__).resolve().parents[1] / "build" / "inductor-cache")
)
os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE_DEFAULT", "0")
os.environ.setdefault("TORCH_DYNAMO_AUTOMATIC_DYNAMIC_LOCAL_PGO", "0")

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


_SECONDS: dict[str, dict[str, float]] = {"test files": {}, "conformance checks": {}}


def pytest_runtest_logreport(report) -> None:
    """Sums each test file's setup, call and teardown time, and each conformance check's over its
    ops and dtypes (test_conformance[op-check-device-dtype]), for the summary below. Under xdist
    the workers' reports reach the controller, which sums them."""
    path, _, name = report.nodeid.partition("::")
    files, checks = _SECONDS.values()
    files[path] = files.get(path, 0.0) + report.duration
    if name.startswith("test_conformance["):
        check = name.split("-")[-3]
        checks[check] = checks.get(check, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter) -> None:
    """The 20 slowest test files and conformance checks: where the suite's time goes, for whoever
    makes it faster."""
    for what, seconds in _SECONDS.items():
        if not seconds:
            continue
        terminalreporter.section(f"slowest {what} (seconds summed over their tests)")
        for name, s in sorted(seconds.items(), key=lambda item: -item[1])[:20]:
            terminalreporter.write_line(f"{s:8.1f}  {name}")
        terminalreporter.write_line(f"{sum(seconds.values()):8.1f}  all {len(seconds)} {what}")
