"""Contexts for autograd_<N>.cpp: the Autograd kernels of every op with derivatives.

For a functional overload: a backward Node (torch::autograd::Node) holding what the formulas
read, and a kernel that records it (as ATen's VariableType kernels do: compute_requires_grad,
collect_next_edges, set_history) around the call below autograd. An inplace overload runs the
functional's kernel and copies the result into self (copy_ checks a leaf that requires grad and
bumps self's version, so a saved self modified in place is caught); an out= overload refuses
inputs that require grad, as torch's.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from structgen.codegen.api import boxed, cpp, names
from structgen.codegen.autograd import cpp as formula_cpp
from structgen.codegen.model.autograd import AUTO_LINEAR, Apply, Autograd, Expr, Op, Ref, Select, Where
from structgen.codegen.model.native import Manifest, NativeFunction, StructuredGroup
from structgen.codegen.model.schema import Argument, BaseTy, BaseType, ListType, OptionalType

RT = names.RUNTIME.namespace


@dataclass(frozen=True)
class Member:
    ctype: str
    name: str
    init: str  # from the kernel's parameters (forward)


@dataclass(frozen=True)
class GradCode:
    """One formula: its inputs' first edges (a Tensor[] input: also the member holding its
    element count), and the C++ that computes their gradient (a vector of them for several)."""

    edges: tuple[tuple[str, str | None], ...]  # (edge index, count member or None)
    code: str
    several: bool  # the code gives a std::vector: one gradient per input (or per element)


@dataclass(frozen=True)
class OpHandle:
    variable: str
    op: str  # "mul": the template qualifies it with the project's namespace
    overload: str  # "Tensor", "" for default
    signature: str  # the kernel's C++ function type


@dataclass(frozen=True)
class Functional:
    node: str
    name: str  # what the node's name() gives after the namespace ("mul.Tensor backward")
    function: str
    kernel: boxed.BoxedKernel  # what is registered: the boxed adapter of ``function``
    overload: str  # "mul.Tensor"
    returns: str
    params: str
    args: str  # the parameters as call arguments
    handle: OpHandle
    tensors: str  # the tensor arguments, for compute_requires_grad / collect_next_edges
    members: tuple[Member, ...]  # saved at once
    outputs: tuple[tuple[int, bool, str | None], ...]  # (index, differentiable, member saving it)
    unpack: tuple[str, ...]  # apply()'s locals
    grads: tuple[str, ...]  # grad locals, one per output
    gradients: tuple[GradCode, ...]
    release: tuple[str, ...]  # SavedVariable members
    written: tuple[str, ...]  # arguments the functional writes (batch_norm's running statistics)
    list_output: bool = False  # the one output is a Tensor[]: a history per element
    handles: tuple[OpHandle, ...] = ()  # the generated backward ops apply() calls
    fused_locals: tuple[str, ...] = ()  # their results, where several inputs' gradients share one
    # Forward mode: the C++ of the output's tangent (None: forward AD is refused by name), the
    # tensor arguments whose primals (<name>_p) and tangents (<name>_t) it reads
    forward: str | None = None
    primals: tuple[str, ...] = ()
    tangents: tuple[tuple[str, str], ...] = ()  # (argument, tangent kind: tensor | tensor? | tensors)
    # The output that takes the tangent (std::get<i> of several; the elements of a Tensor[] one),
    # and the results a formula reads by name (result_<name>: the C++ of each)
    forward_output: str = "so_result"
    forward_results: tuple[tuple[str, str], ...] = (("result", "so_result"),)


@dataclass(frozen=True)
class Written:
    """An inplace or out= overload of a differentiable op."""

    kind: str  # inplace | out
    function: str
    kernel: boxed.BoxedKernel
    overload: str
    returns: str
    params: str
    args: str
    handle: OpHandle
    tensors: str  # the inputs (not the written tensors)
    functional: str  # inplace: the functional's kernel; out: the op's name for the error
    functional_args: str  # inplace: self cloned where the functional's backward reads it
    # inplace: the inplace overload run on meta copies first (its dtype and shape checks)
    meta_locals: tuple[str, ...]
    meta_args: str
    written: tuple[str, ...]


@dataclass(frozen=True)
class AutogradShard:
    functionals: tuple[Functional, ...]
    written: tuple[Written, ...]
    headers: tuple[str, ...]


def _tensor_kind(a: Argument) -> str | None:
    if a.type == BaseType(BaseTy.Tensor):
        return "tensor"
    if a.type == OptionalType(BaseType(BaseTy.Tensor)):
        return "tensor?"
    if isinstance(a.type, ListType) and a.type.elem == BaseType(BaseTy.Tensor):
        return "tensors"
    return None


def _nodes(e: Expr):
    """Every node of a formula, e first, its operands in order after it."""
    yield e
    if isinstance(e, Where):
        children = (e.cond, e.then, e.otherwise)
    elif isinstance(e, Select):
        children = (e.arg, *(x for _, x in e.cases))
    elif isinstance(e, Op | Apply):
        children = e.args
    else:
        children = ()
    for c in children:
        yield from _nodes(c)


def _refs(e: Expr) -> list[Ref]:
    return [n for n in _nodes(e) if isinstance(n, Ref)]


def _handle(fn: NativeFunction) -> OpHandle:
    ret, params = cpp.kernel_signature(fn.func)
    name = fn.func.name
    return OpHandle(
        f"{name.unambiguous}_op",
        str(name.name),
        name.overload_name or "",
        f"{ret}({', '.join(p.ctype for p in params)})",
    )


def _node_name(group: StructuredGroup) -> str:
    return f"{group.functional.func.name.unambiguous}_backward"


def functional(group: StructuredGroup, autograd: Autograd, fused: dict[str, OpHandle]) -> Functional:
    """``fused``: the handles of the generated backward ops, by name."""
    fn = group.functional
    args = fn.func.arguments.all
    params = cpp.kernel_signature(fn.func)[1]  # the bindings of args, cached
    by_name = {a.name: (a, b) for a, b in zip(args, params, strict=True)}
    refs = [r for g in autograd.gradients for r in _refs(g.expr)]
    values = {r.name for r in refs if r.kind != "like" and r.role == "arg"}
    values |= {n for g in autograd.gradients for n in g.fused_args if n in by_name}
    likes = {r.name for r in refs if r.kind in ("like", "likes")}
    results = {r.name for r in refs if r.role == "result"}
    members, unpack, release = _saved_arguments(args, by_name, values, likes)
    outputs, saved = _saved_results(autograd, results)
    edges, counts = _edges(args)
    # The outputs' SavedVariables are set after the call (no initializer); the counts at the Node's.
    members += [Member("torch::autograd::SavedVariable", s, "") for s in saved] + counts
    unpack += [f"const auto {s.removesuffix('_')} = {s}.unpack(getptr());" for s in saved]
    release += saved

    def edge(name: str) -> tuple[str, str | None]:
        many = _tensor_kind(by_name[name][0]) == "tensors"
        return edges[name], f"{names.cpp_name(name)}_count" if many else None

    uses = [g.fused for g in autograd.gradients if g.fused]
    shared = tuple(n for n in dict.fromkeys(uses) if uses.count(n) > 1)
    gradients = tuple(
        GradCode(tuple(edge(n) for n in g.inputs), _gradient_code(g, fused, shared), g.expr.kind == "tensors")
        for g in autograd.gradients
    )
    many = len(autograd.outputs) > 1
    tensors = ", ".join(names.cpp_name(a.name) for a in args if _tensor_kind(a))
    grads = () if autograd.list_output else tuple(f"grad_{n}" if many else "grad" for n in autograd.outputs)
    return Functional(
        node=_node_name(group),
        name=f"{fn.func.name} backward",
        function=f"{fn.func.name.unambiguous}_autograd",
        kernel=_boxed(fn),
        overload=str(fn.func.name),
        returns=cpp.return_type(fn.func.returns),
        params=", ".join(p.decl() for p in params),
        args=", ".join(p.name for p in params),
        handle=_handle(fn),
        tensors=tensors,
        members=tuple(members),
        outputs=tuple(outputs),
        unpack=tuple(unpack),
        grads=grads,
        gradients=gradients,
        release=tuple(release),
        written=tuple(names.cpp_name(a.name) for a in args if a.is_write),
        list_output=autograd.list_output,
        handles=tuple(fused[n] for n in dict.fromkeys(uses)),
        fused_locals=tuple(f"so_{n}" for n in shared),
        **_forward(fn, autograd, params),
    )


def _saved_arguments(args, by_name, values: set[str], likes: set[str]) -> tuple[list, list, list]:
    """What the Node keeps of the arguments the formulas read: tensors as SavedVariables (a
    written one as a copy), other values kept, ``like`` arguments as their TensorMetas only; and
    the statements that unpack them in apply(), and the saved variables released after it."""
    members, unpack, release = [], [], []
    for a in args:
        c = names.cpp_name(a.name)
        kind = _tensor_kind(a)
        if a.name in values and kind in ("tensor", "tensor?") and a.is_write:
            members.append(Member("std::optional<at::Tensor>", f"{c}_", f"{RT}::autograd::copy_of({c})"))
            unpack.append(f"const auto& {c} = {c}_;")
        elif a.name in values and kind in ("tensor", "tensor?"):
            value = c if kind == "tensor" else f"{c}.has_value() ? *{c} : at::Tensor()"
            members.append(
                Member(
                    "torch::autograd::SavedVariable",
                    f"{c}_",
                    f"torch::autograd::SavedVariable({value}, false)",
                )
            )
            release.append(f"{c}_")
            local = f"{c}_.unpack()" if kind == "tensor" else f"{RT}::autograd::optional({c}_.unpack())"
            unpack.append(f"const auto {c} = {local};")
        elif a.name in values and kind is None:
            ctype = by_name[a.name][1].ctype
            members.append(Member(f"{RT}::autograd::kept_t<{ctype}>", f"{c}_", f"{RT}::autograd::keep({c})"))
            unpack.append(f"const auto& {c} = {RT}::autograd::view({c}_);")
        if a.name in likes and kind == "tensors":
            members.append(
                Member(
                    f"std::vector<{RT}::autograd::TensorMeta>",
                    f"{c}_meta",
                    f"{RT}::autograd::metas({c})",
                )
            )
        elif a.name in likes:
            value = c if kind == "tensor" else f"{c}.has_value() ? *{c} : at::Tensor()"
            members.append(
                Member(
                    RT + "::autograd::TensorMeta",
                    f"{c}_meta",
                    f"{RT}::autograd::TensorMeta({value})",
                )
            )
    return members, unpack, release


def _saved_results(autograd: Autograd, results: set[str]) -> tuple[list, list[str]]:
    """Per output: (index, whether it carries a gradient, its SavedVariable where a formula reads
    it); and those SavedVariables' names, saved after the call."""
    many = len(autograd.outputs) > 1
    outputs: list[tuple[int, bool, str | None]] = []
    saved: list[str] = []
    for i, (name, carries) in enumerate(
        zip(autograd.outputs, autograd.output_differentiability, strict=True)
    ):
        local = f"result_{name}" if many else "result"
        kept = f"{local}_" if local in results else None
        saved += [kept] if kept else []
        outputs.append((i, carries, kept))
    return outputs, saved


def _edges(args) -> tuple[dict[str, str], list[Member]]:
    """Each tensor argument's first edge (C++: a Tensor[] takes one per element, counted at the
    call, so later offsets add its count); and the members that keep those counts."""
    edges, counts, offset = {}, [], "0"
    for a in args:
        kind = _tensor_kind(a)
        if kind is None:
            continue
        edges[a.name] = offset
        c = names.cpp_name(a.name)
        if kind == "tensors":
            counts.append(Member("size_t", f"{c}_count", f"{c}.size()"))
            offset = f"({offset} + {c}_count)" if offset != "0" else f"{c}_count"
        else:
            offset = str(int(offset) + 1) if offset.isdigit() else f"({offset} + 1)"
    return edges, counts


def _gradient_code(g, fused: dict[str, OpHandle], shared: tuple[str, ...]) -> str:
    """The gradient's C++: with a fused backward op, that op's one pass where backward needs no
    graph of its own, the ATen formula where it does (create_graph=True)."""
    composite = formula_cpp.code(g.expr)
    if g.fused is None:
        return composite
    call = f"{fused[g.fused].variable}.call({', '.join(names.cpp_name(a) for a in g.fused_args)})"
    if g.fused in shared:  # computed once for the inputs that share it (bias_gelu's)
        local = f"so_{g.fused}"
        call = f"({local}.defined() ? {local} : ({local} = {call}))"
    if g.kernel_scale is not None:
        call = f"{RT}::autograd::scaled({call}, {formula_cpp.code(g.kernel_scale)})"
    if g.kernel_sum_to:
        call = f"{RT}::autograd::sum_to({call}, {names.cpp_name(g.inputs[0])}_meta)"
    return f"(at::GradMode::is_enabled() ? {composite} : {call})"


def _forward(fn: NativeFunction, autograd: Autograd, params) -> dict:
    """The forward-mode C++ of a functional kernel (see Functional)."""
    if autograd.forward is None:
        return {}
    kinds = {a.name: _tensor_kind(a) for a in fn.func.arguments.all}
    many = len(autograd.outputs) > 1
    located = {
        "forward_output": "so_result",
        "forward_results": () if autograd.list_output else (("result", "so_result"),),
    }
    if many:
        carrying = autograd.output_differentiability.index(True)
        located = {
            "forward_output": f"std::get<{carrying}>(so_result)",
            "forward_results": tuple(
                (f"result_{name}", f"std::get<{i}>(so_result)") for i, name in enumerate(autograd.outputs)
            ),
        }
    if autograd.forward == AUTO_LINEAR:  # the op applied to the tangents (zeros where none)
        tangents = tuple((n, kinds[n]) for n in autograd.tangents)
        call = ", ".join(
            f"{names.cpp_name(a.name)}_t" if a.name in autograd.tangents else names.cpp_name(a.name)
            for a in fn.func.arguments.all
        )
        applied = f"{_handle(fn).variable}.call({call})"
        if many:
            applied = f"std::get<{carrying}>({applied})"
        return {
            "forward": applied,
            "tangents": tuple((names.cpp_name(n), k) for n, k in tangents),
            **located,
        }
    expr = autograd.forward
    primals = sorted({r.name for r in _refs(expr) if r.role == "arg" and r.kind in ("tensor", "tensor?")})
    return {
        "forward": formula_cpp.forward_code(expr),
        "primals": tuple(names.cpp_name(n) for n in primals),
        "tangents": tuple((names.cpp_name(n), kinds[n]) for n in autograd.tangents),
        **located,
    }


def _written(group: StructuredGroup, fn: NativeFunction, kind: str) -> Written:
    args = fn.func.arguments.all
    params = cpp.kernel_signature(fn.func)[1]
    inputs = [a for a in args if _tensor_kind(a) and not (kind == "out" and a.is_write)]
    # The functional's node may save self; copy_ then writes it, which backward would refuse as a
    # saved tensor modified in place: it gets a copy (torch's mul_ saves a clone too).
    read = {r.name for g in group.autograd.gradients for r in _refs(g.expr) if r.kind != "like"}
    functional_args = ", ".join(
        f"{names.cpp_name(a.name)}.clone()" if a.name == "self" and "self" in read else names.cpp_name(a.name)
        for a in group.functional.func.arguments.all
    )
    meta_locals = tuple(
        f"auto so_meta_{names.cpp_name(a.name)} = {RT}::autograd::on_meta({names.cpp_name(a.name)});"
        for a in args
        if _tensor_kind(a)
    )
    meta_args = ", ".join(
        f"so_meta_{names.cpp_name(a.name)}" if _tensor_kind(a) else names.cpp_name(a.name) for a in args
    )
    return Written(
        kind=kind,
        function=f"{fn.func.name.unambiguous}_autograd",
        kernel=_boxed(fn),
        overload=str(fn.func.name),
        returns=cpp.return_type(fn.func.returns),
        params=", ".join(p.decl() for p in params),
        args=", ".join(p.name for p in params),
        handle=_handle(fn),
        tensors=", ".join(names.cpp_name(a.name) for a in inputs),
        functional=f"{group.functional.func.name.unambiguous}_autograd"
        if kind == "inplace"
        else str(fn.func.name.name),
        functional_args=functional_args,
        meta_locals=meta_locals,
        meta_args=meta_args,
        written=tuple(names.cpp_name(a.name) for a in args if a.is_write),
    )


def _boxed(fn: NativeFunction) -> boxed.BoxedKernel:
    function = f"{fn.func.name.unambiguous}_autograd"
    return boxed.boxed_kernel(fn.func, function, f"boxed_{function}", keys=True)


def differentiable_groups(manifest: Manifest) -> list[StructuredGroup]:
    return [g for g in manifest.groups if g.functional is not None and g.autograd is not None]


def autograd_shards(manifest: Manifest, shards: int) -> list[AutogradShard]:
    """Every differentiable op's kernels, spread over ``shards`` files by a stable hash of its
    name (adding an op rebuilds one shard)."""
    buckets: list[list[StructuredGroup]] = [[] for _ in range(shards)]
    for g in differentiable_groups(manifest):
        buckets[zlib.crc32(g.name.encode()) % shards].append(g)
    fused = {
        str(g.functional.func.name.name): _handle(g.functional) for g in manifest.groups if g.backward_of
    }
    out = []
    for groups in buckets:
        functionals = tuple(functional(g, g.autograd, fused) for g in groups)
        written = tuple(
            _written(g, fn, kind)
            for g in groups
            for fn, kind in ((g.inplace, "inplace"), (g.out, "out"))
            if fn is not None and not (kind == "out" and _list_out(g))
        )
        out.append(AutogradShard(functionals, written, _aten_headers(groups)))
    return out


def _aten_headers(groups: list[StructuredGroup]) -> tuple[str, ...]:
    """The ATen operators the groups' formulas call by name (codegen/autograd/aten.py): their
    <ATen/ops/...> headers, which the glue's headers do not all bring."""
    exprs = [
        e
        for g in groups
        if g.autograd is not None
        for e in (*(gradient.expr for gradient in g.autograd.gradients), g.autograd.forward)
        if e is not None and not isinstance(e, str)  # forward: None, or AUTO_LINEAR
    ]
    return tuple(
        sorted({n.fn.header for e in exprs for n in _nodes(e) if isinstance(n, Apply) and n.fn.header})
    )


def _list_out(group: StructuredGroup) -> bool:
    return any(isinstance(o.type, ListType) for o in group.out.func.arguments.out)
