"""Contexts for the generated pointwise kernels: per op with a ``pointwise:`` formula, a CPU and
a CUDA launcher (torch-free: plain data in, the formula run for the dtype), each op in files of
its own (the kernels are most of the generated compile time, and an edited formula then
recompiles one op's files); and the host glue that calls them: a file per op for CUDA, shards of
ops for CPU (kernels_cpu_host_N.cpp: torch's headers cost more than an op's glue).

Each op's formula becomes one functor template over the compute type T, emitted identically
into the CPU and the CUDA kernel files and built from the launch's fields the same way; the host
glue brings the promoted inputs to the common dtype, decides the host conditions once (the meta
function checked the str modes), converts the numbers and calls the launcher. The launcher turns
the conditions into the functor's template argument `case_`, one instantiation per combination
of the str arguments' values, so that a row loop holds one branch of the formula: with both of
gelu's in one loop, gcc vectorised neither (6x slower).
"""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen import dtypes, limits
from structgen.codegen.api import names
from structgen.codegen.dest.structured import impl_params, op_header, shard_of
from structgen.codegen.model.native import DispatchKey, Manifest, StructuredGroup


@dataclass(frozen=True)
class Field:
    ctype: str  # "T" or "bool"
    name: str
    init: str  # C++ in a launcher, with T known, from the launch p (cpu::RowLaunch or PointwiseLaunch)


@dataclass(frozen=True)
class PointwiseOp:
    op: str  # what messages start with: "add"
    header: str
    functor: str  # the formula's struct
    fields: tuple[Field, ...]
    conditions: tuple[tuple[str, str], ...]  # (field, host C++ bool) computed once per call
    cases: int  # instantiations of the functor: the combinations of the str arguments' values
    case_index: str  # C++ int in [0, cases) from the launch's conditions
    flags: tuple[tuple[str, str], ...]  # (condition field, C++ constexpr bool of case_)
    in_storage_type: bool  # T is the storage dtype, not its opmath type (Lowered.in_storage)
    scalars: tuple[str, ...]  # the Scalar and Scalar? arguments, in PointwiseLaunch::scalars order
    # Whether the numbers are checked for the compute type (Scalar::to<T>, as torch's kernels do).
    # Not in a generated backward op: its numbers are the forward's, which torch's backward takes
    # as wrapped numbers (div(x, 1e39) in bfloat16 has a gradient), and the forward checked them.
    checks_scalars: bool
    call_params: str  # "T self, T other"
    expr: str
    tensors: tuple[tuple[str, bool], ...]  # (C++ name, promoted)
    in_types: tuple[str, ...]  # per tensor: "scalar_t" or "bool"
    out_type: str  # "scalar_t" or "bool"
    cpu_kernel: str
    cpu_params: str
    cpu_dtypes: tuple[tuple[str, str], ...]  # (Dtype enumerator, C++ type)
    cuda_kernel: str
    # structgen::cuda_kernels::<launcher>(const PointwiseLaunch&) (one per CUDA variant: the
    # name of the default one) and structgen::cpu_kernels::<launcher>(const cpu::RowLaunch&)
    launcher: str
    cuda_dtypes: tuple[tuple[str, str], ...]  # (Dtype enumerator, CUDA type)
    # One generated kernel per variant of the manifest's `kernels:` (else one with the defaults):
    # (host function, grain size): the variants share the op's one CPU launcher, the grain is a
    # field of the launch
    cpu_variants: tuple[tuple[str, int], ...] = ()
    cuda_variants: tuple[tuple[str, str, int, int], ...] = ()  # (host function, launcher, block, unroll)


def _cases(conditions) -> tuple[int, str, tuple[tuple[str, str], ...]]:
    """The functor's `case_`: per str argument, the position of the value the call has among
    those the formula compares it with (its count when none of them), combined as digits in a
    mixed radix. A condition is then `case_ / <place> % <radix> == <position>`."""
    by_arg: dict[str, list[int]] = {}
    for i, c in enumerate(conditions):
        by_arg.setdefault(c.arg, []).append(i)
    cases, terms, flags = 1, [], []
    for indices in by_arg.values():
        radix = len(indices) + 1
        digit = str(len(indices))
        for position, i in reversed(list(enumerate(indices))):
            digit = f"p.conditions[{i}] ? {position} : {digit}"
        terms.append(f"({digit}) * {cases}")
        flags += [
            (conditions[i].field, f"case_ / {cases} % {radix} == {position}")
            for position, i in enumerate(indices)
        ]
        cases *= radix
    return cases, " + ".join(terms) or "0", tuple(flags)


# The generated kernels' parameters when the manifest lists no variants.
DEFAULT_BLOCK, DEFAULT_UNROLL = 256, 2


def pointwise_op(group: StructuredGroup) -> PointwiseOp:
    fn = group.out
    kernel = fn.pointwise
    assert kernel is not None
    low = kernel.lowered
    decls = {k.key: k for k in op_header(group).kernels if k.variant is None}
    fields: list[Field] = []
    conditions = []
    for c in low.conditions:
        arg = names.cpp_name(c.arg)
        if c.value is None:
            host = f"!{arg}.has_value()"
        elif c.optional:
            host = f'({arg}.has_value() && *{arg} == "{c.value}")'
        else:
            host = f'{arg} == "{c.value}"'
        conditions.append((c.field, host))
    cases, case_index, flags = _cases(low.conditions)
    scalar_slot = 0
    for s in low.scalars:
        arg = names.cpp_name(s)
        fields.append(Field("T", arg, f"pw::scalar_as<T>(p.scalars[{scalar_slot}])"))
        scalar_slot += 1
    for s in low.optional_scalars:
        arg = names.cpp_name(s)
        fields.append(Field("bool", f"has_{arg}", f"p.scalars[{scalar_slot}].present"))
        fields.append(Field("T", arg, f"pw::scalar_as<T>(p.scalars[{scalar_slot}])"))
        scalar_slot += 1
    tensors = tuple((names.cpp_name(n), t == "T") for n, t in low.tensors)
    base = fn.func.name.name.base
    launcher = fn.func.name.unambiguous
    cpu_kernel, cuda_kernel = decls[DispatchKey.CPU.value].name, decls[DispatchKey.CUDA.value].name
    cpu_variants = [(cpu_kernel, limits.GRAIN_SIZE)]
    cuda_variants = [(cuda_kernel, launcher, DEFAULT_BLOCK, DEFAULT_UNROLL)]
    if fn.kernels is not None and fn.kernels.variants("CPU"):
        cpu_variants = [
            (names.variant_kernel(cpu_kernel, v.name), dict(v.params).get("grain", limits.GRAIN_SIZE))
            for v in fn.kernels.variants("CPU")
        ]
    if fn.kernels is not None and fn.kernels.variants("CUDA"):
        cuda_variants = [
            (
                names.variant_kernel(cuda_kernel, v.name),
                names.variant_kernel(launcher, v.name),
                dict(v.params).get("block", DEFAULT_BLOCK),
                dict(v.params).get("unroll", DEFAULT_UNROLL),
            )
            for v in fn.kernels.variants("CUDA")
        ]
    return PointwiseOp(
        op=base,
        header=names.group_header(group.name),
        functor=f"{fn.func.name.unambiguous}_formula",
        fields=tuple(fields),
        conditions=tuple(conditions),
        cases=cases,
        case_index=case_index,
        flags=flags,
        in_storage_type=low.in_storage,
        scalars=tuple(names.cpp_name(s) for s in low.scalars + low.optional_scalars),
        checks_scalars=group.backward_of is None,
        call_params=", ".join(f"{t} {names.cpp_name(n)}" for n, t in low.tensors),
        expr=low.expr,
        tensors=tensors,
        in_types=tuple("scalar_t" if promoted else "bool" for _, promoted in tensors),
        out_type="bool" if kernel.bool_result else "scalar_t",
        cpu_kernel=cpu_kernel,
        cpu_params=decls[DispatchKey.CPU.value].params,
        cpu_dtypes=tuple((dtypes.dtype(d).launch_code, dtypes.dtype(d).cpu_type) for d in kernel.dtypes),
        cuda_kernel=cuda_kernel,
        launcher=launcher,
        cuda_dtypes=tuple(
            (dtypes.dtype(d).launch_code, dtypes.dtype(d).cuda_type)
            for d in kernel.dtypes
            if dtypes.dtype(d).cuda_type is not None
        ),
        cpu_variants=tuple(cpu_variants),
        cuda_variants=tuple(cuda_variants),
    )


@dataclass(frozen=True)
class Forward:
    """A Scalar overload's kernel (codegen/scalar_of.py): its target's, each number passed as a
    0-dim CPU tensor."""

    header: str
    function: str  # eq_Scalar_out_cpu
    params: str
    target: str  # eq_Tensor_out_cpu
    args: str  # "self, cpu::wrapped_number(other), common_dtype, out"


@dataclass(frozen=True)
class KernelUnit:
    """One op's kernel translation units (CPU, CUDA device code, CUDA host glue): the op's
    kernels, those of its generated backward ops (codegen/autograd/fused.py) and its Scalar
    overloads' forwards, so a formula's edit recompiles its files alone and neither the backward
    nor a Scalar overload adds files."""

    stem: str  # the files' name part: kernels_cpu_<stem>.cpp
    ops: tuple[PointwiseOp, ...]
    cpu_forwards: tuple[Forward, ...] = ()
    cuda_forwards: tuple[Forward, ...] = ()


def pointwise_groups(manifest: Manifest) -> list[StructuredGroup]:
    """The pointwise ops with files of their own (generated backward ops and Scalar overloads
    share their op's)."""
    return [
        group
        for group in manifest.groups
        if group.out.pointwise is not None and group.backward_of is None and group.out.scalar_of is None
    ]


def _forward(group: StructuredGroup, target: StructuredGroup, key: DispatchKey) -> Forward:
    number_args = {
        names.cpp_name(a.name)
        for a, t in zip(group.out.func.arguments.all, target.out.func.arguments.all)
        if a.type != t.type
    }
    args = ", ".join(
        f"cpu::wrapped_number({b.name})" if b.name in number_args else b.name for b in impl_params(group)
    )
    decl = next(k for k in op_header(group).kernels if k.key == key.value and k.variant is None)
    target_kernel = next(k for k in op_header(target).kernels if k.key == key.value and k.variant is None)
    return Forward(names.group_header(group.name), decl.name, decl.params, target_kernel.name, args)


def kernel_units(manifest: Manifest) -> list[KernelUnit]:
    by_out = {str(g.out.func.name): g for g in manifest.groups}
    # Each group's unit: its own, its forward op's (backward ops) or its target's (Scalar overloads).
    home: dict[str, str] = {}
    for group in manifest.groups:
        if group.out.scalar_of is not None:
            home[group.name] = by_out[str(group.out.scalar_of)].name
    for group in manifest.groups:
        if group.backward_of is not None:
            home[group.name] = home.get(group.backward_of, group.backward_of)
    members: dict[str, list[StructuredGroup]] = {}
    for group in manifest.groups:
        if group.name in home:
            members.setdefault(home[group.name], []).append(group)
    units = []
    for group in pointwise_groups(manifest):
        shared = members.get(group.name, [])
        scalar = [g for g in shared if g.out.scalar_of is not None]
        units.append(
            KernelUnit(
                group.name,
                tuple(pointwise_op(g) for g in (group, *(g for g in shared if g.out.scalar_of is None))),
                tuple(_forward(g, group, DispatchKey.CPU) for g in scalar),
                tuple(_forward(g, group, DispatchKey.CUDA) for g in scalar),
            )
        )
    return units


def cpu_host_shards(units: list[KernelUnit], shards: int) -> list[tuple[KernelUnit, ...]]:
    """The units' CPU host glue in ``shards`` files, by a stable hash of the op's name."""
    buckets: list[list[KernelUnit]] = [[] for _ in range(shards)]
    for unit in units:
        buckets[shard_of(unit.stem, shards)].append(unit)
    return [tuple(b) for b in buckets]
