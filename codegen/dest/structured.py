"""Contexts for the per-op declaration headers and the per-dispatch-key wrapper shards.

The meta function takes the functional arguments and returns one TensorSpec per out argument
(plus the ``precomputed`` values); the impl takes the same arguments, with precomputed values in
place of the ones they replace, and writes tensors that match the specs exactly.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

from structgen.codegen.api import boxed, cpp, names
from structgen.codegen.memo import by_identity
from structgen.codegen.model.native import DispatchKey, Manifest, NativeFunction, StructuredGroup
from structgen.codegen.model.project import Project
from structgen.codegen.model.schema import Argument, BaseTy, BaseType, ListType, OptionalType, SchemaKind
from structgen.codegen.rules import cpp as rules_cpp


@dataclass(frozen=True)
class MetaDecl:
    struct: str
    function: str
    outputs: tuple[str, ...]
    precomputed: tuple[cpp.Binding, ...]  # extra struct fields
    params: str
    describes: str  # "add.out, add.Tensor, add_.Tensor"
    from_rule: bool  # generated from the manifest's rule (else hand-written in csrc/ops/<family>/meta.cpp)
    reads_data: bool = False  # dynamic_output_shape: the output size is counted from the data
    list_out: bool = False  # one Tensor(a!)[] output: a std::vector<TensorSpec>, one per element


@dataclass(frozen=True)
class KernelDecl:
    """A hand-written kernel the generated code calls: an impl or an unstructured kernel."""

    name: str
    returns: str
    params: str
    key: str
    op: str
    variant: str | None = None  # a kernel variant's name (manifest `kernels:`)
    chooser: bool = False  # the impl that picks among the variants


@dataclass(frozen=True)
class DeviceEntry:
    """A device entry point of the runtime kernel an op runs (manifest `scan:`, `triangle:`),
    defined in the generated runtime_kernels_cuda.cu. The op's header declares it, so the op's
    host glue and a project's hand-written kernels (masked_select scans its counts with cumsum's)
    call it by that declaration."""

    name: str
    launch: str  # the runtime's plain-data struct it takes: ScanLaunch, TriangleLaunch (<family>_launch.h)
    plans: bool = False  # returns the runtime's ScanPlan; else the CUDA error string (nullptr: none)


@dataclass(frozen=True)
class OpHeader:
    group: str
    meta: MetaDecl | None
    kernels: tuple[KernelDecl, ...]
    family: str | None = None  # the runtime kernel's family (scan, triangle), whose launch header it includes
    device_entries: tuple[DeviceEntry, ...] = ()


@dataclass(frozen=True)
class ImplCall:
    """The impl a wrapper runs: its function and the arguments before the outputs (the op's
    arguments, precomputed values from so_meta, the compute dtype), each a C++ expression."""

    function: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class Wrapper:
    name: str
    op: str
    kind: str  # functional | inplace | out
    returns: str
    params: str
    meta_call: str
    device: str  # the expression of the device the call runs on (so_device in the wrapper)
    guard: bool  # sets so_device current (CUDA: the host glue's allocations and launches go there)
    inputs: str  # a braced list of NamedTensor, or the local `inputs` vector (see lists)
    lists: tuple[str, ...]  # Tensor[] arguments, whose elements join the inputs at run time
    named: str  # the braced NamedTensor list of the single-tensor arguments
    outs: tuple[str, ...]  # out argument names, in order
    impl: ImplCall | None  # None for Meta
    pointwise: bool
    # The impl walks any output strides (a generated pointwise kernel): an out= or self whose
    # strides differ from the meta function's is written in place, not through a copy.
    writes_any_strides: bool
    out_dtype: str  # what prepare_out / check_inplace demand of a written tensor's dtype: castable | exact
    dtype_from: str | None = (
        None  # the written tensor whose dtype fills a missing `dtype=` (out_dtype: dtype_argument)
    )
    list_out: bool = False  # the only output is a Tensor(a!)[] (the out= overload returns nothing)


@dataclass(frozen=True)
class Registration:
    op: str
    kernel: boxed.BoxedKernel  # the boxed adapter registered for op, calling the unboxed function


@dataclass(frozen=True)
class WrapperShard:
    key: str
    # A CUDA shard registers for CUDA, or, built by the CPU emulator (tests/cuda_emu), as CPU
    # kernels of the library <name>_emu, where CPU tensors stand in for device memory.
    cuda: bool
    headers: tuple[str, ...]
    wrappers: tuple[Wrapper, ...]
    registrations: tuple[Registration, ...]


def _params(bindings: tuple[cpp.Binding, ...]) -> str:
    return ", ".join(b.decl() for b in bindings)


def _meta_params(group: StructuredGroup) -> tuple[cpp.Binding, ...]:
    # The meta function reads its inputs only: every argument is taken as an input.
    args = tuple(Argument(a.name, a.type, a.default, None) for a in group.out.func.arguments.non_out)
    return cpp.arguments(args)


def impl_params(group: StructuredGroup) -> tuple[cpp.Binding, ...]:
    pre = group.out.precomputed
    replaced = dict(pre.replace) if pre else {}
    out_args = group.out.func.arguments.out
    params: list[cpp.Binding] = []
    for b, a in zip(_meta_params(group), group.out.func.arguments.non_out):
        if a.name in replaced:
            params.extend(cpp.arguments(replaced[a.name]))
        else:
            params.append(b)
    if pre:
        params.extend(cpp.arguments(pre.add))
    if group.out.pointwise is not None:
        params.append(cpp.Binding("at::ScalarType", "common_dtype"))
    elif group.out.rule is not None:
        params.append(cpp.Binding("at::ScalarType", "compute_dtype"))
    params.extend(
        cpp.Binding("at::TensorList" if _is_list(o) else "const at::Tensor&", names.cpp_name(o.name))
        for o in out_args
    )
    return tuple(params)


def _is_list(a: Argument) -> bool:
    return isinstance(a.type, ListType)


def _list_out(group: StructuredGroup) -> bool:
    """manifest.py allows a Tensor(a!)[] output only as the op's one output."""
    return any(_is_list(o) for o in group.out.func.arguments.out)


# Asked for by the header, the meta function, the hooks and each pointwise kernel file of a group.
@by_identity
def op_header(group: StructuredGroup) -> OpHeader:
    pre = group.out.precomputed
    fields = ()
    if pre:
        fields = tuple(cpp.Binding(cpp.value_type(a.type), names.cpp_name(a.name)) for a in pre.all_values)
    meta = MetaDecl(
        struct=names.meta_result_struct(group.name),
        function=names.meta_function(group.name),
        outputs=tuple(names.cpp_name(o.name) for o in group.out.func.arguments.out),
        precomputed=fields,
        params=_params(_meta_params(group)),
        describes=", ".join(str(f.func.name) for f in group.members),
        from_rule=group.out.rule is not None,
        reads_data=group.dynamic_output_shape,
        list_out=_list_out(group),
    )
    params = _params(impl_params(group))
    op = str(group.out.func.name)
    kernels = []
    mk = group.out.kernels
    for key, kernel in group.out.dispatch:
        variants = mk.variants(key.value) if mk else ()
        kernels.append(KernelDecl(kernel, "void", params, key.value, op, chooser=bool(variants)))
        for v in variants:  # the hooks of hand-written variants; generated ones are <impl>__<name>
            kernels.append(
                KernelDecl(
                    v.kernel or names.variant_kernel(kernel, v.name), "void", params, key.value, op, v.name
                )
            )
    kernel = group.out.runtime_kernel
    family = kernel.family if kernel else None
    return OpHeader(group.name, meta, tuple(kernels), family, device_entries(group.name, family))


def device_entries(entry: str, family: str | None) -> tuple[DeviceEntry, ...]:
    """The device entry points of a runtime kernel family, named after the op's group."""
    if family == "scan":
        return (
            DeviceEntry(f"{entry}_scan_plan", "ScanLaunch", plans=True),
            DeviceEntry(f"{entry}_scan", "ScanLaunch"),
        )
    if family == "triangle":
        return (DeviceEntry(f"{entry}_triangle", "TriangleLaunch"),)
    return ()


def unstructured_header(fn: NativeFunction) -> OpHeader:
    ret = cpp.return_type(fn.func.returns)
    params = _params(cpp.arguments(fn.func.arguments.all))
    kernels = tuple(KernelDecl(k, ret, params, key.value, str(fn.func.name)) for key, k in fn.dispatch)
    return OpHeader(fn.func.name.unambiguous, None, kernels)


def _device_expr(key: DispatchKey, inputs: str) -> str:
    """The device the call runs on. CUDA: as torch picks it, the first tensor argument that is not
    a CPU scalar (a 0-dim CPU tensor), so `add(cpu_scalar, cuda_tensor)` writes on the GPU."""
    if key is DispatchKey.CPU:
        return "at::kCPU"
    if key is DispatchKey.Meta:
        return "at::kMeta"
    return f"device_of({inputs}, at::kCUDA)"  # at::kCUDA: only an empty Tensor[] (cat([]) raises)


def _named_tensors(args: tuple[Argument, ...]) -> str:
    """Every tensor argument, Tensor? ones included (absent: undefined, which the checks skip)."""
    tensor, optional = BaseType(BaseTy.Tensor), OptionalType(BaseType(BaseTy.Tensor))
    named = []
    for a in args:
        if a.type == tensor:
            named.append(f'{{"{a.name}", {names.cpp_name(a.name)}}}')
        elif a.type == optional:
            named.append(f'{{"{a.name}", tensor_or_undefined({names.cpp_name(a.name)})}}')
    return ", ".join(named)


@dataclass(frozen=True)
class _Member:
    """What a member's wrapper is whatever the dispatch key: its signature, checks and impl
    arguments (each key's wrapper adds its name, device, guard and impl function)."""

    wrapper: Wrapper  # name, device, guard and impl left empty
    impl_args: tuple[str, ...]
    registration: boxed.BoxedKernel  # name and function left empty


def _member(group: StructuredGroup, fn: NativeFunction) -> _Member:
    ret, bindings = cpp.kernel_signature(fn.func)
    non_out = fn.func.arguments.non_out
    meta_args = ", ".join(names.cpp_name(a.name) for a in non_out)
    lists = tuple(
        names.cpp_name(a.name) for a in non_out if a.type == ListType(BaseType(BaseTy.Tensor), None)
    )
    pre = group.out.precomputed
    replaced = dict(pre.replace) if pre else {}
    args = []
    for a in non_out:
        if a.name in replaced:
            args.extend(f"so_meta.{names.cpp_name(p.name)}" for p in replaced[a.name])
        else:
            args.append(names.cpp_name(a.name))
    if pre:
        args.extend(f"so_meta.{names.cpp_name(p.name)}" for p in pre.add)
    if group.out.pointwise is not None:
        args.append("so_meta.common_dtype")
    elif group.out.rule is not None:
        args.append("so_meta.compute_dtype")
    named = _named_tensors(non_out)
    wrapper = Wrapper(
        name="",
        op=str(fn.func.name),
        kind="functional" if fn.kind is SchemaKind.mutable else fn.kind.value,  # batch_norm's running stats
        returns=ret,
        params=_params(bindings),
        meta_call=f"meta::{names.meta_function(group.name)}({meta_args})",
        device="",
        guard=False,
        inputs="so_inputs" if lists else "{" + named + "}",
        lists=lists,
        named=named,
        outs=tuple(names.cpp_name(o.name) for o in group.out.func.arguments.out),
        impl=None,
        pointwise="pointwise" in group.out.tags,
        writes_any_strides=group.out.pointwise is not None,
        out_dtype="castable" if group.out.out_dtype == "castable" else "exact",
        dtype_from=_dtype_from(group, fn),
        list_out=_list_out(group),
    )
    return _Member(wrapper, tuple(args), boxed.boxed_kernel(fn.func, "", ""))


def _wrapper(group: StructuredGroup, fn: NativeFunction, key: DispatchKey, member: _Member) -> Wrapper:
    kernel = group.impl_name(key)
    return replace(
        member.wrapper,
        name=names.wrapper(key.value, fn.func.name.unambiguous),
        device=_device_expr(key, member.wrapper.inputs),
        guard=key is DispatchKey.CUDA,
        impl=None if kernel is None else ImplCall(f"impl::{kernel}", member.impl_args),
    )


def _dtype_from(group: StructuredGroup, fn: NativeFunction) -> str | None:
    if group.out.out_dtype != "dtype_argument" or fn.kind is SchemaKind.functional:
        return None
    return names.cpp_name(fn.func.arguments.out[0].name) if fn.kind is SchemaKind.out else "self"


def shard_of(name: str, shards: int) -> int:
    """A stable shard for a group: the same op always lands in the same translation unit."""
    return zlib.crc32(name.encode()) % shards


def wrapper_shards(
    manifest: Manifest, keys: tuple[DispatchKey, ...], shards: int
) -> dict[DispatchKey, list[WrapperShard]]:
    """Wrappers and registrations per dispatch key, each key's split into ``shards`` files."""
    buckets = {key: [([], [], []) for _ in range(shards)] for key in keys}
    for group in manifest.groups:
        # Meta: every group but those whose output size counts data (the fake impl in Python).
        group_keys = [
            key
            for key in keys
            if (
                not group.dynamic_output_shape
                if key is DispatchKey.Meta
                else group.impl_name(key) is not None
            )
        ]
        shard = shard_of(group.name, shards)
        for key in group_keys:
            buckets[key][shard][0].append(names.group_header(group.name))
        for fn in group.members if group_keys else ():
            member = _member(group, fn)
            for key in group_keys:
                w = _wrapper(group, fn, key, member)
                buckets[key][shard][1].append(w)
                kernel = replace(member.registration, name=f"boxed_{w.name}", function=w.name)
                buckets[key][shard][2].append(Registration(w.op, kernel))
    for fn in manifest.unstructured:
        for key in keys:
            kernel = dict(fn.dispatch).get(key)
            if kernel is None:
                continue
            headers, _, regs = buckets[key][shard_of(fn.func.name.unambiguous, shards)]
            headers.append(names.group_header(fn.func.name.unambiguous))
            name = f"boxed_{names.wrapper(key.value, fn.func.name.unambiguous)}"
            regs.append(Registration(str(fn.func.name), boxed.boxed_kernel(fn.func, f"impl::{kernel}", name)))
    return {key: [_shard(key, *bucket) for bucket in buckets[key]] for key in keys}


def _shard(
    key: DispatchKey, headers: list[str], wrappers: list[Wrapper], regs: list[Registration]
) -> WrapperShard:
    return WrapperShard(key.value, key is DispatchKey.CUDA, tuple(headers), tuple(wrappers), tuple(regs))


def all_headers(manifest: Manifest) -> list[OpHeader]:
    return [op_header(g) for g in manifest.groups] + [unstructured_header(f) for f in manifest.unstructured]


@dataclass(frozen=True)
class MetaDef:
    """A meta function generated from a rule: its signature and C++ body."""

    header: str
    decl: MetaDecl
    op: str  # the name run-time errors start with
    body: tuple[str, ...]
    result: str  # the aggregate initializer of the returned struct


@dataclass(frozen=True)
class MetaShard:
    defs: tuple[MetaDef, ...]


def meta_def(group: StructuredGroup) -> MetaDef:
    rule = group.out.rule
    assert rule is not None
    assert rule.ir is not None  # rules/model.py checks every rule once
    header = op_header(group)
    body = rules_cpp.meta_body(rule.ir)
    specs = [
        f"rules::specs(std::move({o.arg}_shape), {o.arg}_dtypes.result)"
        if o.is_list
        else f"TensorSpec{{std::move({o.arg}_shape), std::move({o.arg}_strides), {o.arg}_dtypes.result}}"
        for o in rule.outputs
    ]
    declared = group.out.precomputed.all_values if group.out.precomputed else ()
    pre = [f"std::move({a.name}_value)" for a in declared]  # in the struct's field order
    if group.out.pointwise is not None:
        body = list(body) + list(group.out.pointwise.lowered.checks)
    first = rule.outputs[0].arg
    result = ", ".join(specs + pre + [f"{first}_dtypes.compute", f"{first}_dtypes.common"])
    return MetaDef(
        names.group_header(group.name), header.meta, group.out.func.name.name.base, tuple(body), result
    )


def meta_shards(manifest: Manifest, shards: int) -> list[MetaShard]:
    buckets: list[list[MetaDef]] = [[] for _ in range(shards)]
    for group in manifest.groups:
        if group.out.rule is not None:
            buckets[shard_of(group.name, shards)].append(meta_def(group))
    return [MetaShard(tuple(b)) for b in buckets]


@dataclass(frozen=True)
class Hook:
    """A function hand-written code must define for an op (python -m structgen.codegen signature, and the
    link step's report of a missing one: codegen/link.py)."""

    what: str  # "CPU impl of sum.IntList_out", "meta function of gather, gather.out"
    declaration: str  # the C++ declaration, as the generated header has it
    symbol: str  # its qualified name: <cpp namespace>::impl::sum_out_cpu_rows
    where: str  # the manifest entry that declares it: native_functions.yaml:90


@dataclass(frozen=True)
class OpHooks:
    names: frozenset[str]  # what `signature` matches: the op's base name, overloads, structured name
    header: str  # what to include: <include prefix>/ops/<op>.h
    hooks: tuple[Hook, ...]  # empty: every kernel of the op is generated


def _group_hooks(project: Project, group: StructuredGroup) -> OpHooks:
    where = f"{group.out.loc.path}:{group.out.loc.line}"
    found: list[Hook] = []
    header = op_header(group)
    if header.meta is not None and not header.meta.from_rule:
        m = header.meta
        found.append(
            Hook(
                f"meta function (namespace {project.cpp_namespace}::meta) of {m.describes}",
                f"{m.struct} {m.function}({m.params});",
                f"{project.cpp_namespace}::meta::{m.function}",
                where,
            )
        )
    for k in header.kernels:
        if k.chooser or group.out.pointwise is not None or group.out.runtime_kernel is not None:
            continue  # generated
        impl = group.impl_name(DispatchKey(k.key))
        if k.variant is not None and impl is not None and k.name == names.variant_kernel(impl, k.variant):
            continue  # a generated variant (kernels: ... params)
        what = f"{k.key} impl" + (f" variant '{k.variant}'" if k.variant else "") + f" of {k.op}"
        found.append(
            Hook(
                f"{what} (namespace {project.cpp_namespace}::impl)",
                f"{k.returns} {k.name}({k.params});",
                f"{project.cpp_namespace}::impl::{k.name}",
                where,
            )
        )
    overloads = {str(f.func.name) for f in group.members}
    return OpHooks(
        frozenset({group.name, group.out.func.name.name.base, *overloads}),
        f"{project.include_prefix}/{names.group_header(group.name)}",
        tuple(found),
    )


def _unstructured_hooks(project: Project, fn: NativeFunction) -> OpHooks:
    where = f"{fn.loc.path}:{fn.loc.line}"
    found = tuple(
        Hook(
            f"{k.key} kernel of {k.op} (namespace {project.cpp_namespace}::impl)",
            f"{k.returns} {k.name}({k.params});",
            f"{project.cpp_namespace}::impl::{k.name}",
            where,
        )
        for k in unstructured_header(fn).kernels
    )
    return OpHooks(
        frozenset({fn.func.name.name.base, str(fn.func.name)}),
        f"{project.include_prefix}/{names.group_header(fn.func.name.unambiguous)}",
        found,
    )


def all_hooks(manifest: Manifest) -> list[OpHooks]:
    """The hand-written hooks of every op."""
    return [_group_hooks(manifest.project, g) for g in manifest.groups] + [
        _unstructured_hooks(manifest.project, f) for f in manifest.unstructured
    ]


def hooks(manifest: Manifest, name: str) -> list[OpHooks]:
    """The hand-written hooks of the op ``name`` (its base name, an overload, or the structured
    op's name), per op it names; generated impls (pointwise kernels, multi-kernel choosers) are
    not listed."""
    return [op for op in all_hooks(manifest) if name in op.names]
