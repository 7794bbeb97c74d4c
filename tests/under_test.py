"""structops as the package the conformance suite (structgen.conformance) runs on, for structops'
own tests, its tools and the processes they start; another package's manifest given to pytest
with --manifest takes its place."""

from pathlib import Path

from structgen.conformance import spec

MANIFEST = Path(__file__).resolve().parents[1] / "structops" / "native_functions.yaml"


def use_structops() -> None:
    """Make structops the package under test, unless one was chosen already."""
    if spec.UNDER_TEST[0] is None:
        spec.use_manifest(MANIFEST)
