"""Fused backward kernels: a pointwise op's gradient formula as another generated pointwise op.

A derived gradient such as bias_gelu's (grad times a chain of erf, exp and products) would run
as a dozen ATen ops, each a pass over memory; as a pointwise op of its own it is one pass, CPU
and CUDA kernels generated like every formula's. For each such gradient (ir.Gradient.kernel)
this writes the manifest entries of an op

    - func: _bias_gelu_backward_self.out(Tensor grad, Tensor self, Tensor bias, *, ...) -> ...
      pointwise: "grad * conj(...)"

(and its functional), over grad, the arguments the formula reads and `result` where it reads the
output; inputs with the same formula share one op (bias_gelu's self and bias). The autograd
kernel calls it when backward needs no graph of its own (create_graph=False); with grad mode on
it computes the same formula with ATen ops, which are differentiable again. The entries are
checked by the manifest's own checker, tagged `generated`, and have no derivatives.
"""

from __future__ import annotations

import ast

from structgen.codegen.dtypes import GROUPS
from structgen.codegen.load import LineDict
from structgen.codegen.model.formula import Node, free_names
from structgen.codegen.model.schema import BaseTy, BaseType, FunctionSchema, OptionalType
from structgen.codegen.model.tests import DTYPES as TESTED_DTYPES
from structgen.codegen.model.tests import TestSpec
from structgen.codegen.pointwise.python import python


def _type(t) -> str | None:
    """The schema type a backward op takes for a forward argument."""
    if t == BaseType(BaseTy.Tensor):
        return "Tensor"
    if isinstance(t, BaseType) and t.name in (BaseTy.Scalar, BaseTy.str):
        return str(t)
    if isinstance(t, OptionalType) and t.elem in (BaseType(BaseTy.Scalar), BaseType(BaseTy.str)):
        return str(t)
    return None


def backward_op_name(group_name: str, input_name: str) -> str:
    return f"_{group_name}_backward_{input_name}"


def entry(values: dict, line: int) -> LineDict:
    """A manifest mapping as the loader makes it (nested mappings too), placed at ``line``."""
    d = LineDict({k: entry(v, line) if isinstance(v, dict) else v for k, v in values.items()})
    d.line = line
    d.key_lines = {}
    return d


def backward_entries(
    group_name: str,
    functional: FunctionSchema,
    kernels: list[tuple[str, Node]],
    bool_tensors: set[str],
    groups: list[str],
    forward_tests: TestSpec | None,
    line: int,
) -> list[tuple[str, tuple[str, ...], list[LineDict]]]:
    """Per distinct kernel formula: (op name, its arguments in order, its two manifest entries),
    for the (input, formula) pairs of one pointwise op's gradients; ``groups``: the dtype groups
    (floating, and complex where the op takes it) its kernels are made for; ``forward_tests``:
    the forward op's tests, whose domain and argument values its gradients' tests take too."""
    out = []
    seen: dict[str, str] = {}
    for input_name, formula in kernels:
        text = str(formula)
        if text in seen:
            continue
        name = backward_op_name(group_name, input_name)
        seen[text] = name
        used = free_names(formula)
        # grad, then the arguments the formula reads (those with defaults last, keeping them: a
        # str argument's default is one of the values it accepts)
        args = [("grad", "Tensor", None)]
        used_args = [a for a in functional.arguments.all if a.name in used and _type(a.type) is not None]
        for a in sorted(used_args, key=lambda a: a.default is not None):
            args.append((a.name, _type(a.type), a.default))
        if "result" in used:
            args.insert(1, ("result", "Tensor", None))
        params = ", ".join(f"{t} {n}" + (f"={d}" if d is not None else "") for n, t, d in args)
        floats = [n for n, t, _ in args if t == "Tensor" and n not in bool_tensors]
        allowed = {n: ["bool"] for n, t, _ in args if n in bool_tensors}
        allowed.update({n: list(groups) for n in floats})
        meta = {"dtype": {"out": f"promote({', '.join(floats)})"}, "allowed": allowed}
        doc = (
            f"The gradient of {functional.name}'s {input_name}, generated from its formula "
            "(docs/autograd.md)."
        )
        out_entry = entry(
            {
                "func": f"{name}.out({params}, *, Tensor(a!) out) -> Tensor(a!)",
                "structured": True,
                "pointwise": text,
                "meta": meta,
                "tags": ["pointwise", "generated"],
            },
            line,
        )
        functional_entry = entry(
            {
                "func": f"{name}({params}) -> Tensor",
                "structured_delegate": f"{name}.out",
                "tags": ["pointwise", "generated"],
                "derivatives": "not_differentiable",
                "doc": doc,
                "tests": {
                    # the formula in torch, in double precision (structgen/conformance/formula.py)
                    "reference": f"precise(lambda {', '.join(n for n, _, _ in args)}: {python(formula)}, "
                    f"{tuple(floats)!r})",
                    "dtypes": [d for g in groups for d in GROUPS[g] if d in TESTED_DTYPES],
                    **_forward_test_values(forward_tests, {n for n, _, _ in args}, groups),
                },
            },
            line,
        )
        out.append((name, tuple(n for n, _, _ in args), [out_entry, functional_entry]))
    return out


def _forward_test_values(tests: TestSpec | None, names: set[str], groups: list[str]) -> dict:
    """The forward op's domain, the values it tries for the arguments a backward op shares
    (div's rounding_mode: None, 'trunc', 'floor'), the dtypes of ``groups`` it skips and its
    tolerances (its formula's accuracy holds for its derivatives too), as manifest values."""
    if tests is None:
        return {"domain": "any"}
    values = {n: [ast.literal_eval(v) for v in vs] for n, vs in tests.arg_values if n in names}
    skip = {d: why for d, why in tests.skip if any(d in GROUPS[g] for g in groups)}
    tolerance = {d: [atol, rtol] for d, atol, rtol in tests.tolerance if any(d in GROUPS[g] for g in groups)}
    return {
        "domain": tests.domain,
        **({"args": values} if values else {}),
        **({"skip": skip} if skip else {}),
        **({"tolerance": tolerance} if tolerance else {}),
    }


def shared(kernels: list[tuple[str, Node]], group_name: str) -> dict[str, str]:
    """Each input's backward op (inputs with the same formula share the first one's)."""
    first: dict[str, str] = {}
    result = {}
    for input_name, formula in kernels:
        result[input_name] = first.setdefault(str(formula), backward_op_name(group_name, input_name))
    return result
