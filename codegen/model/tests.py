"""An op's ``tests:`` key as the model holds it: the knobs of its generated conformance suite
(reference, domain, argument values, the differences from torch it declares, and why). Data only:
conformance.py parses the key; dest/conformance_suite.py prints the suite's spec.
"""

from __future__ import annotations

from dataclasses import dataclass

# torch dtype names the suite knows, in the order tests run.
DTYPES = (
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "complex64",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "bool",
)
# OpInfo's samples come in every dtype torch supports, complex128 too.
OPINFO_DTYPES = DTYPES + ("complex128",)


@dataclass(frozen=True)
class ErrorCase:
    args: str  # Python source of the positional arguments, evaluated with torch in scope
    match: str  # regex the error message must match
    line: int
    data: bool = False  # raised from the tensors' values, which meta tensors do not have


@dataclass(frozen=True)
class HostileDiffers:
    """Samples of the hostile check on which the op differs from torch on purpose, and why."""

    samples: str  # a regex searched in the sample's description
    dtypes: tuple[str, ...]  # () for every dtype
    differs: str  # one of conformance.py's HOSTILE_DIFFERS
    why: str
    tolerance: tuple[float, float] | None = None  # accuracy: (atol, rtol) the op's own arithmetic needs
    devices: tuple[str, ...] = ()  # cpu, cuda (its kernels, on a GPU or the emulator); () for both
    gradients: bool = False  # `of: gradients`: the generated backward ops' accuracy, not the op's


@dataclass(frozen=True)
class OpInfoDiffers:
    """OpInfo samples on which the op fails on purpose: a failure of these dtypes, or one
    whose message the regex matches; a listed difference that no longer occurs fails the check."""

    failures: str | None  # a regex searched in the failure's description
    dtypes: tuple[str, ...]  # () when ``failures`` says which
    why: str


@dataclass(frozen=True)
class OpInfo:
    """Which of torch's OpInfos the op answers to (tests/conformance/test_opinfo.py)."""

    name: str | None  # None: the op's own name
    none: str | None = None  # no OpInfo calls this operator: why
    differs: tuple[OpInfoDiffers, ...] = ()


@dataclass(frozen=True)
class TestSpec:
    reference: str
    domain: str
    arg_values: tuple[tuple[str, tuple[str, ...]], ...]  # argument -> Python literals to try
    dtypes: tuple[str, ...] | None  # None: the default set for the op kind
    skip: tuple[tuple[str, str], ...]
    cuda_skip: tuple[tuple[str, str], ...]
    tolerance: tuple[tuple[str, float, float], ...]
    extremes: bool
    errors: tuple[ErrorCase, ...]
    samples: tuple[str, ...] = ()  # Python source of argument lists, with t(*shape) in scope
    grad_reference: str | None = None  # the gradients' reference (default: reference)
    bits_reference: str | None = None  # (result, *args) -> the result expected from the op's own draw
    # `python -m structgen.codegen new-op`'s scaffold (an identity) under the name of the op it will become:
    # not compared with torch's operator of that name (schema parity, OpInfo samples) until the
    # author removes the key; its own suite runs against `reference` as any op's.
    scaffold: bool = False
    hostile: tuple[HostileDiffers, ...] = ()
    opinfo: OpInfo = OpInfo(None)
    vmap_loops: tuple[str, str] | None = None  # (which calls: conformance.VMAP_LOOP_CALLS, why)
