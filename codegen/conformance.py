"""The manifest's ``tests:`` key: what the conformance suite (tests/conformance) needs to know
about an op (docs/conformance.md: the reference, with the defaults). Its Python sources
(reference, args, errors, samples) are evaluated by the suite with torch, over_dims (a reduction
over one dim as one over a dim list), and, for references written as a pointwise formula,
precise and pw (structgen/conformance/formula.py) in scope.

Everything has a default except the reference, so most ops need one line:

    tests:
      reference: torch.add              # a callable, or a lambda over the functional's arguments
      grad_reference: "lambda ..."      # the gradients' reference, where torch's op has wrong ones
      bits_reference: "lambda result, x, p: ..."  # a random op (tags: [nondeterministic_seeded])
                                        # whose CUDA kernel draws its own bits: the result
                                        # expected from the op's own draw (its mask), there
      domain: positive                  # values to sample: any (default), positive, nonzero, unit
      args: {alpha: [1, 2.5]}           # values to try for non-tensor arguments
      dtypes: [float32, int64]          # what to test (default: every dtype the op kind, or
                                        # the rule's `allowed` for the first tensor, allows)
      skip: {bool: "torch.neg rejects bool"}   # dtypes not tested, each with its reason
      cuda_skip: {complex64: "no CUDA kernel"} # dtypes not tested on CUDA, each with its reason
      tolerance: {float16: [1e-3, 1e-3]}       # [atol, rtol] per dtype
      extremes: false                   # no inf/nan/-0.0/int-limits sample
      errors:                           # inputs that must raise, and the message regex
      - {args: "torch.ones(2), torch.ones(3)", match: "must match the size"}
      - {args: "torch.ones(3), torch.tensor([5])", match: "index 5", data: true}   # raised by the
                                        # kernel from values (index checks): not on meta tensors
      samples: ["t(2, 3), t(3, 4)"]     # inputs, where the default does not fit: t(*shape) makes a
                                        # tensor of the tested dtype and device. Default: pointwise
                                        # and reduction ops have generators; other ops get inputs
                                        # drawn from their rule's patterns (structgen/conformance/drawn.py)
      hostile:                          # where the hostile check (structgen/conformance/hostile.py)
      - {samples: "^value=0.33", dtypes: [int64], differs: refuses, why: "..."}   # may not take
                                        # torch's result: the samples whose repr (description and
                                        # arguments) the regex matches, of these dtypes (default
                                        # all), and how they differ:
                                        # refuses (the op raises where torch returns), zero_signs
                                        # (the sign of a zero result is not compared), values (torch's
                                        # values are not the reference, torch being wrong there),
                                        # accuracy (with tolerance: [atol, rtol], what the op's own
                                        # arithmetic is documented to reach; a generated backward op
                                        # inherits its forward's), on these devices (cpu, cuda;
                                        # default both); an entry that matches nothing, or samples
                                        # that no longer differ, fails the check; `of: gradients`
                                        # scopes an accuracy entry to the generated gradient ops
      opinfo: nn.functional.relu        # the name of torch's OpInfo (tests/conformance/opinfo.py)
                                        # whose samples this op must pass (default: the op's name)
      opinfo:                           # or, with the failures that are known and why:
        name: nn.functional.embedding
        differs:
        - {dtypes: [complex64, complex128], why: "no complex kernels yet"}   # any failure there
        - {failures: "unexpected keyword argument 'sparse'", why: "..."}     # failures it matches
      opinfo: {none: "why"}             # no OpInfo calls this operator: say why
      vmap_loops: {calls: every, why: "..."}   # vmap runs this op one batch element at a time
                                        # (structgen/conformance/batching.py): every call may loop
                                        # (and one must), or with `calls: others` only the calls
                                        # that batch other tensors than the first
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from structgen.codegen.errors import SpecError
from structgen.codegen.load import LineDict
from structgen.codegen.model.tests import (
    DTYPES,
    OPINFO_DTYPES,
    ErrorCase,
    HostileDiffers,
    OpInfo,
    OpInfoDiffers,
    TestSpec,
)

DOMAINS = ("any", "positive", "nonzero", "unit")
KEYS = (
    "reference",
    "grad_reference",
    "bits_reference",
    "domain",
    "args",
    "dtypes",
    "skip",
    "cuda_skip",
    "tolerance",
    "extremes",
    "errors",
    "samples",
    "scaffold",
    "hostile",
    "opinfo",
    "vmap_loops",
)
VMAP_LOOP_CALLS = ("every", "others")
HOSTILE_DIFFERS = ("refuses", "zero_signs", "values", "accuracy")


def parse_tests(path: str, entry: LineDict, op: str, arg_names: set[str]) -> TestSpec | None:
    raw = entry.get("tests")
    if raw is None:
        return None
    line = entry.line_of("tests")

    def fail(problem: str, fix: str) -> SpecError:
        return SpecError(path, line, op, problem, fix)

    if not isinstance(raw, dict):
        raise fail("'tests' must be a mapping", "write e.g. 'tests: {reference: torch.add}'")
    for key in raw:
        if key not in KEYS:
            raise fail(f"unknown tests key '{key}'", f"use only: {', '.join(KEYS)}")
    reference = raw.get("reference")
    if not isinstance(reference, str) or not reference.strip():
        raise fail("'tests' needs a 'reference'", "name a torch function, e.g. 'reference: torch.add'")
    domain = raw.get("domain", "any")
    if domain not in DOMAINS:
        raise fail(f"unknown domain '{domain}'", f"use one of: {', '.join(DOMAINS)}")

    dtypes = _dtype_list(raw["dtypes"], "dtypes", fail) if "dtypes" in raw else None
    skips = {}
    for key in ("skip", "cuda_skip"):
        skips[key] = raw.get(key, {})
        _dtype_list(skips[key], key, fail)
        if not isinstance(skips[key], dict) or not all(isinstance(r, str) and r for r in skips[key].values()):
            raise fail(f"'tests.{key}' must map each dtype to its reason", 'write e.g. {bool: "not defined"}')
    arg_values = _arg_values(raw.get("args", {}), arg_names, fail)
    tolerance = _tolerance(raw.get("tolerance", {}), fail)
    extremes = raw.get("extremes", True)
    if not isinstance(extremes, bool):
        raise fail("'tests.extremes' must be true or false", "write 'extremes: false'")
    errors = _errors(raw.get("errors", []), line, fail)
    grad_reference = _source(raw, "grad_reference", fail)
    bits_reference = _source(raw, "bits_reference", fail)
    scaffold = raw.get("scaffold", False)
    if not isinstance(scaffold, bool):
        raise fail("'tests.scaffold' must be true or false", "remove it once the op is written")
    samples = raw.get("samples", [])
    if not isinstance(samples, list) or not all(isinstance(x, str) and x.strip() for x in samples):
        raise fail(
            "'tests.samples' must be a list of argument lists", 'write e.g. samples: ["t(2, 3), t(3, 4)"]'
        )
    hostile = tuple(_hostile(raw.get("hostile", []), fail, lambda v: _dtype_list(v, "hostile.dtypes", fail)))
    opinfo = _opinfo(raw.get("opinfo"), fail)
    vmap_loops = _vmap_loops(raw.get("vmap_loops"), fail)

    return TestSpec(
        reference=reference.strip(),
        domain=domain,
        arg_values=arg_values,
        dtypes=dtypes,
        skip=tuple(skips["skip"].items()),
        cuda_skip=tuple(skips["cuda_skip"].items()),
        tolerance=tolerance,
        extremes=extremes,
        errors=errors,
        samples=tuple(samples),
        grad_reference=grad_reference,
        bits_reference=bits_reference,
        scaffold=scaffold,
        hostile=hostile,
        opinfo=opinfo,
        vmap_loops=vmap_loops,
    )


def _dtype_list(value: object, key: str, fail) -> tuple[str, ...]:
    if not isinstance(value, list | dict):
        raise fail(f"'tests.{key}' must be a list of dtype names", "write e.g. [float32, int64]")
    for name in value:
        if name not in DTYPES:
            raise fail(f"unknown dtype '{name}' in tests.{key}", f"use one of: {', '.join(DTYPES)}")
    return tuple(value)


def _arg_values(args_raw: object, arg_names: set[str], fail) -> tuple[tuple[str, tuple], ...]:
    """tests.args: values to try for non-tensor arguments."""
    if not isinstance(args_raw, dict):
        raise fail("'tests.args' must map argument names to lists of values", "write e.g. {alpha: [1, 2]}")
    arg_values = []
    for name, values in args_raw.items():
        if name not in arg_names:
            raise fail(
                f"tests.args names '{name}', which is not an argument",
                f"use one of: {', '.join(sorted(arg_names))}",
            )
        if not isinstance(values, list) or not values:
            raise fail(f"tests.args.{name} must be a non-empty list", f"write e.g. '{name}: [1, 2]'")
        arg_values.append((name, tuple(_python_literal(v) for v in values)))
    return tuple(arg_values)


def _tolerance(tolerance_raw: object, fail) -> tuple[tuple[str, float, float], ...]:
    """tests.tolerance: [atol, rtol] per dtype."""
    if not isinstance(tolerance_raw, dict):
        raise fail("'tests.tolerance' must map dtypes to [atol, rtol]", "write e.g. {float16: [1e-3, 1e-3]}")
    tolerance = []
    for name, pair in tolerance_raw.items():
        _dtype_list([name], "tolerance", fail)
        if not (isinstance(pair, list) and len(pair) == 2 and all(_is_number(x) for x in pair)):
            raise fail(f"tests.tolerance.{name} must be [atol, rtol]", f"write e.g. '{name}: [1e-3, 1e-3]'")
        tolerance.append((name, float(pair[0]), float(pair[1])))
    return tuple(tolerance)


def _errors(errors_raw: object, line: int, fail) -> tuple[ErrorCase, ...]:
    """tests.errors: inputs that must raise, each with its message's regex."""
    if not isinstance(errors_raw, list):
        raise fail(
            "'tests.errors' must be a list of error cases",
            'write e.g. [{args: "torch.ones(2), torch.ones(3)", match: "size"}]',
        )
    errors = []
    for case in errors_raw:
        if not (
            isinstance(case, dict)
            and {"args", "match"} <= set(case) <= {"args", "match", "data"}
            and isinstance(case.get("data", False), bool)
        ):
            raise fail(
                "each tests.errors item needs 'args' and 'match' (and may set 'data: true')",
                'write e.g. {args: "torch.ones(2), torch.ones(3)", match: "size"}',
            )
        errors.append(
            ErrorCase(
                str(case["args"]), str(case["match"]), getattr(case, "line", line), case.get("data", False)
            )
        )
    return tuple(errors)


# The keys whose value is a callable's source: (what is wrong, how to fix it).
_SOURCES = {
    "grad_reference": (
        "'tests.grad_reference' must be a callable's source",
        "write e.g. grad_reference: torch.add",
    ),
    "bits_reference": (
        "'tests.bits_reference' must be a callable's source, taking the op's result and its arguments",
        'write e.g. bits_reference: "lambda result, x, p: (x * result[1] / (1 - p), result[1])"',
    ),
}


def _source(raw: LineDict, key: str, fail) -> str | None:
    """A callable's source (grad_reference, bits_reference), stripped; None where not given."""
    value = raw.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise fail(*_SOURCES[key])
    return value.strip() if value else None


def _vmap_loops(raw: object, fail) -> tuple[str, str] | None:
    if raw is None:
        return None
    if (
        not isinstance(raw, dict)
        or set(raw) != {"calls", "why"}
        or raw["calls"] not in VMAP_LOOP_CALLS
        or not isinstance(raw["why"], str)
        or not raw["why"].strip()
    ):
        raise fail(
            "'tests.vmap_loops' must give 'calls' (every or others) and 'why' the op has no batched form",
            'write e.g. vmap_loops: {calls: every, why: "no batched sibling: meta.vmap_as would give one"}',
        )
    return raw["calls"], raw["why"].strip()


def _opinfo(raw: object, fail) -> OpInfo:
    example = 'write e.g. "opinfo: nn.functional.relu" or "opinfo: {none: <why>}"'
    if raw is None:
        return OpInfo(None)
    if isinstance(raw, str) and raw.strip():
        return OpInfo(raw.strip())
    if not isinstance(raw, dict) or not set(raw) <= {"name", "none", "differs"} or not raw:
        raise fail("'tests.opinfo' must be an OpInfo's name or a mapping of name, none, differs", example)
    if "none" in raw and set(raw) != {"none"}:
        raise fail("tests.opinfo: 'none' says there is no OpInfo: it takes no name or differs", example)
    if "none" in raw:
        if not isinstance(raw["none"], str) or not raw["none"].strip():
            raise fail("tests.opinfo.none must say why no OpInfo calls this operator", example)
        return OpInfo(None, raw["none"].strip())
    name = raw.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise fail("tests.opinfo.name must be an OpInfo's name", "write e.g. name: nn.functional.relu")
    differs_raw = raw.get("differs", [])
    item_example = 'write e.g. {dtypes: [complex64], why: "..."} or {failures: "<regex>", why: "..."}'
    if not isinstance(differs_raw, list) or not differs_raw:
        raise fail("tests.opinfo.differs must be a non-empty list", item_example)
    differs = []
    for item in differs_raw:
        if (
            not isinstance(item, dict)
            or not {"why"} < set(item) <= {"failures", "dtypes", "why"}
            or len(set(item) & {"failures", "dtypes"}) != 1
        ):
            raise fail(
                "each tests.opinfo.differs item gives 'why' and one of 'failures', 'dtypes'", item_example
            )
        if not isinstance(item["why"], str) or not item["why"].strip():
            raise fail("tests.opinfo.differs: 'why' must say why the op differs", "write the reason")
        dtypes = item.get("dtypes", [])
        if "dtypes" in item and (
            not isinstance(dtypes, list) or not dtypes or not all(d in OPINFO_DTYPES for d in dtypes)
        ):
            raise fail(
                f"tests.opinfo.differs: dtypes {dtypes!r} is not a list of dtype names",
                f"use: {', '.join(OPINFO_DTYPES)}",
            )
        failures = item.get("failures")
        if failures is not None:
            try:
                re.compile(str(failures))
            except re.error as e:
                raise fail(f"tests.opinfo.differs: 'failures' is no regex ({e})", "fix the regex") from None
        differs.append(
            OpInfoDiffers(None if failures is None else str(failures), tuple(dtypes), item["why"].strip())
        )
    return OpInfo(name.strip() if name else None, None, tuple(differs))


def _hostile(raw: object, fail, dtype_list) -> Iterable[HostileDiffers]:
    example = '{samples: "^value=0.33", differs: refuses, why: "torch truncates it"}'
    if not isinstance(raw, list):
        raise fail("'tests.hostile' must be a list of differences", f"write e.g. [{example}]")
    for item in raw:
        if not isinstance(item, dict) or not {"samples", "differs", "why"} <= set(item) <= {
            "samples",
            "dtypes",
            "differs",
            "why",
            "tolerance",
            "devices",
            "of",
        }:
            raise fail(
                "each tests.hostile item needs 'samples', 'differs' and 'why' (and may give 'dtypes',"
                " 'devices', 'tolerance', 'of')",
                f"write e.g. {example}",
            )
        if item["differs"] not in HOSTILE_DIFFERS:
            raise fail(
                f"tests.hostile: unknown difference '{item['differs']}'",
                f"use one of: {', '.join(HOSTILE_DIFFERS)}",
            )
        if not isinstance(item["why"], str) or not item["why"].strip():
            raise fail("tests.hostile: 'why' must say why the op differs", "write the reason")
        try:
            re.compile(str(item["samples"]))
        except re.error as e:
            raise fail(f"tests.hostile: 'samples' is no regex ({e})", "fix the regex") from None
        tolerance = item.get("tolerance")
        if (item["differs"] == "accuracy") != (tolerance is not None) or (
            tolerance is not None
            and not (
                isinstance(tolerance, list) and len(tolerance) == 2 and all(_is_number(x) for x in tolerance)
            )
        ):
            raise fail(
                "tests.hostile: 'differs: accuracy' takes a 'tolerance: [atol, rtol]' (and only it does)",
                "write e.g. {samples: '.', differs: accuracy, tolerance: [1e-6, 0], why: ...}",
            )
        dtypes = dtype_list(item["dtypes"]) if "dtypes" in item else ()
        devices = item.get("devices", [])
        if not isinstance(devices, list) or not set(devices) <= {"cpu", "cuda"}:
            raise fail("tests.hostile: 'devices' must list cpu, cuda or both", "write e.g. devices: [cuda]")
        if item.get("of", "gradients") != "gradients" or ("of" in item and tolerance is None):
            raise fail(
                "tests.hostile: 'of: gradients' scopes an accuracy entry to the op's generated gradients",
                "write e.g. {samples: '.', differs: accuracy, tolerance: [0, 1e-5], of: gradients, why: ...}",
            )
        pair = (float(tolerance[0]), float(tolerance[1])) if tolerance is not None else None
        yield HostileDiffers(
            str(item["samples"]),
            dtypes,
            str(item["differs"]),
            item["why"].strip(),
            pair,
            tuple(devices),
            "of" in item,
        )


def scaffold_ops(functions: Iterable[Any]) -> frozenset[str]:
    """Base names of the ops marked `tests: {scaffold: true}` (new-op's, not yet written): what the
    checks against the torch operator of the same name leave out."""
    return frozenset(f.func.name.name.base for f in functions if f.tests is not None and f.tests.scaffold)


def _is_number(value: object) -> bool:
    """YAML 1.1 reads 1e-4 (no dot) as a string; accept it as the number it means."""
    try:
        float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return not isinstance(value, bool)


def _python_literal(value: object) -> str:
    """A YAML value as Python source (None, True, 2.5, [0, 1], 'mean')."""
    return repr(value)
