"""Drop-in parity with PyTorch's overloads (issue 23).

Every manifest op named like a PyTorch operator has each of torch's overloads of it, under the
same name and with the same schema text (so defaults match too), or names that overload in
`torch_differs:` with the reason. Other names are structops' own (add_relu, bias_gelu, mul_add,
_clamp_tensors), and so is a `codegen new-op` scaffold until its `tests: {scaffold: true}` goes.
Checked against the native_functions.yaml packaged with the installed torch, so a torch release
that adds or changes an overload is caught here. Named-tensor overloads (a `Dimname` argument)
are left out: torch 2.13 no longer has them, and structops supports torch 2.11 through 2.13 with
one manifest.
"""

from collections import defaultdict
from pathlib import Path

import pytest
import torch
import torchgen
import yaml
from structgen.codegen.conformance import scaffold_ops
from structgen.codegen.manifest import load_manifest

ROOT = Path(__file__).resolve().parents[2]
TORCH_MANIFEST = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"


def _base(name: str) -> str:
    return name.split(".")[0].removesuffix("_")


def _torch_schemas() -> dict[str, str]:
    """Every overload torch's manifest declares, with its schema: each `func:`, and each name its
    `autogen:` keys generate (add.Scalar_out), whose schema torch registers."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    entries = [e for e in yaml.load(TORCH_MANIFEST.read_text(), Loader=loader) if "Dimname" not in e["func"]]
    schemas = {e["func"].split("(")[0]: e["func"] for e in entries}
    for e in entries:
        for name in (n.strip() for n in str(e.get("autogen", "")).split(",") if n.strip()):
            base, _, overload = name.partition(".")
            packet = getattr(torch.ops.aten, base, None)
            if packet is not None and overload in packet.overloads():
                schemas[name] = str(getattr(packet, overload)._schema).removeprefix("aten::")
    return schemas


TORCH = _torch_schemas()
MANIFEST = load_manifest(ROOT / "structops" / "native_functions.yaml")
OURS = {str(f.func.name): str(f.func) for f in MANIFEST.functions if "generated" not in f.tags}
DIFFERS = {name: why for f in MANIFEST.functions for name, why in f.torch_differs}
TORCH_BY_BASE: dict[str, list[str]] = defaultdict(list)
for _name in TORCH:
    TORCH_BY_BASE[_base(_name)].append(_name)
MIRRORED = sorted({_base(n) for n in OURS} & set(TORCH_BY_BASE) - scaffold_ops(MANIFEST.functions))


def test_the_manifest_mirrors_torch_ops():
    """The ops named like torch's: the parity checks below have something to check."""
    assert {"add", "sum", "mm", "softmax", "embedding", "where"} <= set(MIRRORED)


def parity_problems(base: str) -> list[str]:
    """What differs between torch's overloads of ``base`` and the manifest's, unexplained."""
    problems = []
    for name in TORCH_BY_BASE[base]:
        if name in DIFFERS:
            if OURS.get(name) == TORCH[name]:
                problems.append(f"{name}: listed in torch_differs but declared as torch's: remove the reason")
            continue
        if name not in OURS:
            problems.append(f"missing {TORCH[name]}  (add it, or say why in torch_differs:)")
        elif OURS[name] != TORCH[name]:
            problems.append(f"{name}: ours {OURS[name]}\n    torch's {TORCH[name]}")
    return problems


@pytest.mark.parametrize("base", MIRRORED)
def test_torch_overloads_are_mirrored_or_explained(base):
    problems = parity_problems(base)
    assert not problems, "\n".join(problems)


def test_reasons_name_torch_overloads():
    """A reason for an overload torch does not have is stale (renamed or removed in torch)."""
    assert not sorted(set(DIFFERS) - set(TORCH))


def test_the_issue_examples_are_covered():
    """The overloads a user's first lines reach (issue 23's examples) are declared as torch's."""
    for name in ("add.Scalar", "mul.Scalar", "eq.Scalar", "where.ScalarOther", "sub.out", "div.out"):
        assert OURS[name] == TORCH[name]
