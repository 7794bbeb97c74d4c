"""structops against torch on PyTorch's own OpInfo samples (tests/conformance/opinfo.py): every
sample passes, or its failure is one of the differences the op's manifest entry lists
(`tests: {opinfo: {differs: ...}}`), each with its reason. A listed difference that no longer
occurs must be removed, so the list stays the truth."""

import re

import pytest

from tests.conformance.opinfo import check_op, mirrored_ops, opinfo_specs

# torch's OpInfo database (torch.testing._internal) imports expecttest, a dependency torch's wheel
# does not declare: tools/setup.sh installs it; a preinstalled torch (the GPU image) may lack it.
pytest.importorskip("expecttest", reason="torch's OpInfo database imports expecttest, absent here")
OPS = mirrored_ops()
SPECS = opinfo_specs()


@pytest.mark.parametrize("name, opinfo", OPS, ids=[name for name, _ in OPS])
def test_opinfo_samples_match_torch(name, opinfo):
    result = check_op(name, opinfo)
    assert result.total > 0, f"no OpInfo sample of {opinfo.name} on the CPU"
    spec = SPECS.get(name)
    known = [_pattern(d) for d in (spec.differs if spec else ())]
    unexplained = [f for f in result.failed if not any(k.search(f) for k in known)]
    assert not unexplained, "\n".join(unexplained[:20])
    stale = [k.pattern for k in known if not any(k.search(f) for f in result.failed)]
    assert not stale, (
        f"listed differences that no longer occur (remove them from tests.opinfo.differs): {stale}"
    )


def _pattern(differs) -> re.Pattern[str]:
    """A difference as the failures it covers: the regex, or any failure of its dtypes (each failure
    starts with the dtype it ran in)."""
    if differs.failures is not None:
        return re.compile(differs.failures)
    return re.compile("^(" + "|".join(differs.dtypes) + ") ")
