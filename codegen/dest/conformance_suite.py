"""What the conformance suite (tests/conformance) knows about each structured op, as plain data.

One SuiteSpec per op: overload and argument names, flags, dtypes with skip reasons, and the
manifest's `tests:` sources (reference, samples, error cases, argument values) as strings. The
suite loads the specs when pytest collects it and compiles the sources itself; the generator
writes no test files and knows no check by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen.api import python
from structgen.codegen.dest import lowerings
from structgen.codegen.model.autograd import NOT_IMPLEMENTED
from structgen.codegen.model.native import DispatchKey, Manifest, StructuredGroup
from structgen.codegen.model.schema import BaseTy, BaseType, ListType
from structgen.codegen.model.tests import DTYPES
from structgen.codegen.pointwise.model import CUDA_TYPES
from structgen.codegen.rules.model import arg_kind

# What an op kind is tested with when the manifest names no dtypes (reductions: those of them
# the rule allows); other ops: every dtype their rule allows their first tensor (_allowed_dtypes).
DEFAULT_DTYPES = {
    "pointwise": DTYPES,
    "reduction": ("float32", "float64", "float16", "bfloat16", "complex64", "int64", "int32", "bool"),
}


@dataclass(frozen=True)
class SuiteSpec:
    name: str  # the generated files' name for the op: add_Tensor
    kind: str  # pointwise | reduction | other
    namespace: str  # the torch.ops namespace the overloads live in
    functional: str | None  # "add.Tensor"
    inplace: str | None
    out: str | None
    outs: tuple[str, ...]  # the out overload's output arguments (layer_norm: out, mean, rstd)
    positional: tuple[str, ...]  # the functional's positional argument names
    kwarg_only: tuple[str, ...]
    tensor_args: tuple[str, ...]
    defaults: tuple[tuple[str, str], ...]  # name -> Python source
    arg_values: tuple[tuple[str, str], ...]  # name -> Python source of a tuple
    reference: str | None  # Python source of a callable
    dtypes: tuple[str, ...]
    devices: tuple[str, ...]  # the devices the op has kernels for ("cpu", "cuda")
    skips: tuple[tuple[str, str], ...]  # dtype -> why it is not tested
    cuda_skips: tuple[tuple[str, str], ...]  # dtypes the CUDA kernels do not cover, with why
    tolerance: tuple[tuple[str, tuple[float, float]], ...]  # dtype -> (atol, rtol)
    domain: str  # values to sample: any | positive | nonzero | unit
    extremes: bool  # an inf/nan/-0.0/int-limits sample
    errors: tuple[tuple[str, str, bool], ...]  # (args source, match, raised from data)
    samples: tuple[str, ...]  # argument-list sources over t(*shape)
    # The output size depends on data (masked_select): no meta kernel, a fake impl, and an out=
    # overload no tracer can follow (it resizes `out` to a size only the data knows).
    dynamic_output_shape: bool
    # The one output is a Tensor(a!)[] (split_with_sizes_copy): the functional returns a list, the
    # out= overload takes a list and returns nothing.
    list_out: bool
    # What an out= (or inplace self) of another dtype gets: castable, exact, or dtype_argument
    # (its dtype stands for a missing dtype=).
    out_dtype: str
    kernel_variants: tuple[tuple[str, tuple[str, ...]], ...] = ()  # device -> variant names (`kernels:`)
    described: bool = False  # a meta rule: structgen.describe() gives its index space
    differentiable: bool = False  # derivatives (written or derived): backward gives gradients
    grad_inputs: tuple[str, ...] = ()  # the tensor inputs backward gives a gradient (a formula)
    grad_reference: str | None = None  # the gradients' reference where torch's op is wrong
    forward_ad: bool = False  # a forward-mode formula (derived, written or auto_linear)
    # The rule, for samples drawn from it when the manifest gives none: each tensor input's
    # pattern (argument, kind, pattern text), each argument's rule kind (int, ints, tensor, ...)
    # and the dtypes `allowed` gives single arguments (indices: int32, int64).
    patterns: tuple[tuple[str, str, str], ...] = ()
    arg_kinds: tuple[tuple[str, str], ...] = ()
    arg_dtypes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    backward_of: str | None = None  # a generated backward op (docs/autograd.md): its forward op
    # The hostile check's known differences (tests.hostile): (sample regex, dtypes, how, why,
    # (atol, rtol) of an accuracy entry or None, devices, of the generated gradients only).
    hostile: tuple[
        tuple[str, tuple[str, ...], str, str, tuple[float, float] | None, tuple[str, ...], bool], ...
    ] = ()
    vmap_loops: tuple[str, str] | None = None  # tests.vmap_loops: (every | others, why)
    # Inductor compiles the functional as its formula (structgen/lowering.py): "all" dtypes, or
    # "floating" where an integer division keeps integer dtypes a call of the op; None: a call.
    lowered: str | None = None
    # tags: [nondeterministic_seeded]: every call the suite compares is made from one seed
    seeded: bool = False
    bits_reference: str | None = None  # tests.bits_reference: the result expected from the op's own draw


def _kind(group: StructuredGroup) -> str:
    tags = group.out.tags
    return "pointwise" if "pointwise" in tags else "reduction" if "reduction" in tags else "other"


def _allowed_dtypes(group: StructuredGroup) -> tuple[str, ...]:
    """Every dtype the suite knows that the rule's `allowed` lets the first tensor input have."""
    rule = group.out.rule
    tensors = [a.name for a in group.out.func.arguments.non_out if a.type == BaseType(BaseTy.Tensor)]
    allowed = dict(rule.allowed) if rule else {}
    own = allowed.get(tensors[0]) if tensors else None
    permitted = own or allowed.get(None) or DTYPES
    return tuple(d for d in DTYPES if d in permitted)


def suite_spec(group: StructuredGroup, namespace: str) -> SuiteSpec:
    rule = group.out.rule
    args = group.out.func.arguments
    non_out = args.non_out
    tests = group.tests
    defaults = []
    for a in non_out:
        if a.default is not None:
            defaults.append((a.name, python.default(a.default) or "None"))
    kind = _kind(group)
    lowered = lowerings.lowering(group)
    tensor_args = tuple(a.name for a in non_out if a.type == BaseType(BaseTy.Tensor))
    if tests and tests.dtypes:
        dtypes = tests.dtypes
    elif kind == "reduction":
        dtypes = tuple(d for d in DEFAULT_DTYPES[kind] if d in _allowed_dtypes(group))
    else:
        dtypes = DEFAULT_DTYPES.get(kind) or _allowed_dtypes(group)
    return SuiteSpec(
        name=group.name,
        kind=kind,
        namespace=namespace,
        functional=str(group.functional.func.name) if group.functional else None,
        inplace=str(group.inplace.func.name) if group.inplace else None,
        out=str(group.out.func.name),
        outs=tuple(a.name for a in args.out),
        positional=tuple(a.name for a in args.positional),
        kwarg_only=tuple(a.name for a in args.kwarg_only if a not in args.out),
        tensor_args=tensor_args,
        defaults=tuple(defaults),
        arg_values=tuple((n, "(" + "".join(f"{v}, " for v in vals) + ")") for n, vals in tests.arg_values)
        if tests
        else (),
        reference=tests.reference if tests else None,
        dtypes=dtypes,
        devices=tuple(
            key.value.lower()
            for key in (DispatchKey.CPU, DispatchKey.CUDA)
            if key in dict(group.out.dispatch)
        ),
        skips=tests.skip if tests else (),
        cuda_skips=tuple(
            (d, "the generated CUDA kernels have no complex dtypes yet (docs/pointwise.md)")
            for d in dtypes
            if group.out.pointwise is not None and d not in CUDA_TYPES
        )
        + (tests.cuda_skip if tests else ()),
        tolerance=tuple((d, (atol, rtol)) for d, atol, rtol in tests.tolerance) if tests else (),
        domain=tests.domain if tests else "any",
        extremes=tests.extremes if tests else True,
        errors=tuple((e.args, e.match, e.data) for e in tests.errors) if tests else (),
        samples=tests.samples if tests else (),
        dynamic_output_shape=group.dynamic_output_shape,
        list_out=any(isinstance(o.type, ListType) for o in args.out),
        out_dtype=group.out.out_dtype,
        described=group.out.rule is not None,
        differentiable=group.autograd is not None,
        grad_reference=tests.grad_reference if tests else None,
        forward_ad=group.autograd is not None and group.autograd.forward is not None,
        grad_inputs=tuple(n for g in group.autograd.gradients if g.text != NOT_IMPLEMENTED for n in g.inputs)
        if group.autograd
        else (),
        patterns=tuple((i.arg, i.kind, str(i.pattern)) for i in rule.inputs) if rule else (),
        arg_kinds=tuple((a.name, arg_kind(a.type) or "other") for a in non_out),
        arg_dtypes=tuple((a, d) for a, d in rule.allowed if a is not None) if rule else (),
        backward_of=group.backward_of,
        hostile=tuple(
            (h.samples, h.dtypes, h.differs, h.why, h.tolerance, h.devices, h.gradients)
            for h in tests.hostile
        )
        if tests
        else (),
        vmap_loops=tests.vmap_loops if tests else None,
        lowered=None if lowered is None else "floating" if lowered.integer_division else "all",
        seeded="nondeterministic_seeded" in group.out.tags,
        bits_reference=tests.bits_reference if tests else None,
        kernel_variants=tuple((d.lower(), tuple(v.name for v in vs)) for d, vs in group.out.kernels.devices)
        if group.out.kernels
        else (),
    )


def suite_specs(manifest: Manifest, namespace: str | None = None) -> list[SuiteSpec]:
    """One spec per structured op that has a functional overload, in manifest order; the ops in
    torch.ops.<namespace> (the project's by default; a test library registers them elsewhere)."""
    namespace = namespace or manifest.project.name
    return [suite_spec(g, namespace) for g in manifest.groups if g.functional is not None]
