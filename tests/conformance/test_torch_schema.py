"""torch's schemas per op, under the op's suite name: the per-op command (`bash tools/test.sh
tests/conformance -k NAME`) runs this check with the others, so a new op named like a torch
operator is compared with torch's overloads before the whole suite runs (the sweep over every
name is tests/codegen/test_torch_parity.py, whose check this is)."""

import pytest

from tests.codegen.test_torch_parity import MANIFEST, MIRRORED, _base, parity_problems

# Each structured op's suite name with the torch names its overloads mirror.
OPS = [
    (group.name, bases)
    for group in MANIFEST.groups
    if group.functional is not None and group.backward_of is None
    for bases in [sorted({_base(str(f.func.name)) for f in group.members} & set(MIRRORED))]
    if bases
]


@pytest.mark.parametrize("op, bases", OPS, ids=[op for op, _ in OPS])
def test_torch_schema(op, bases):
    problems = [p for base in bases for p in parity_problems(base)]
    assert not problems, f"{op}: its overloads differ from torch's ({', '.join(bases)}):\n" + "\n".join(
        problems
    )
