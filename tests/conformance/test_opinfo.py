"""structops against torch on PyTorch's own OpInfo samples (tests/conformance/opinfo.py): every
sample passes, or its failure is one of the differences listed here, each with its reason. A
listed difference that no longer occurs must be removed, so the list stays the truth."""

import re

import pytest

from tests.conformance.opinfo import check_op, mirrored_ops

# (ops, what the failure says, why structops differs)
COMPLEX_OPS = ("abs", "lerp")
KNOWN = (
    (
        COMPLEX_OPS,
        r"^complex(64|128) .*has dtype Complex\w+, which \w+ does not support",
        "complex inputs are not implemented for these ops yet; torch takes them",
    ),
    (
        ("embedding",),
        r"unexpected keyword argument '(sparse|scale_grad_by_freq|padding_idx|max_norm)'",
        "options of torch's backward and of F.embedding's Python layer: torch_differs in the manifest",
    ),
    (
        ("gather",),
        (
            r"T\(0,\)\): RuntimeError: gather: 'index' has dtype Byte|T\(2, 0\)\): RuntimeError: gather:"
            r" 'index' must have as many dims"
        ),
        (
            "an empty index: torch skips its dtype and rank checks, structops checks them whatever the"
            " sizes (docs/design.md, Known differences)"
        ),
    ),
)
# torch's OpInfo database (torch.testing._internal) imports expecttest, a dependency torch's wheel
# does not declare: tools/setup.sh installs it; a preinstalled torch (the GPU image) may lack it.
pytest.importorskip("expecttest", reason="torch's OpInfo database imports expecttest, absent here")
OPS = mirrored_ops()


@pytest.mark.parametrize("name, opinfo", OPS, ids=[name for name, _ in OPS])
def test_opinfo_samples_match_torch(name, opinfo):
    result = check_op(name, opinfo)
    assert result.total > 0, f"no OpInfo sample of {opinfo.name} on the CPU"
    known = [re.compile(pattern) for ops, pattern, _ in KNOWN if name in ops]
    unexplained = [f for f in result.failed if not any(k.search(f) for k in known)]
    assert not unexplained, "\n".join(unexplained[:20])
    stale = [k.pattern for k in known if not any(k.search(f) for f in result.failed)]
    assert not stale, f"listed differences that no longer occur (remove them from KNOWN): {stale}"
