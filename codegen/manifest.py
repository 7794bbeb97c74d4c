"""The whole manifest: its entries (entry.py) grouped into structured ops (an out= overload and
the functional and inplace variants that delegate to it), with the checks across entries."""

from __future__ import annotations

import dataclasses
import difflib
from pathlib import Path

from structgen.codegen import composite, python_names, scalar_of, spellings
from structgen.codegen import dtypes as dtype_table
from structgen.codegen.autograd import fused
from structgen.codegen.autograd.formulas import resolve
from structgen.codegen.entry import parse_entry
from structgen.codegen.errors import SpecError
from structgen.codegen.load import LineDict, read_manifest_entries
from structgen.codegen.model.autograd import Autograd
from structgen.codegen.model.composite import Const, Name, Transposed
from structgen.codegen.model.native import Manifest, NativeFunction, StructuredGroup
from structgen.codegen.model.project import DEFAULT_PROJECT, Project
from structgen.codegen.model.schema import (
    Argument,
    BaseTy,
    BaseType,
    ListType,
    Return,
    SchemaKind,
    same_arguments,
)
from structgen.codegen.pointwise.syntax import parse_formula
from structgen.codegen.project import is_header, parse_project

# ---------------------------------------------------------------------------------------------
# The whole manifest


def build_manifest(path: str, entries: list[LineDict]) -> Manifest:
    project, entries = _project(path, entries)
    functions, by_name = _functions(path, entries)
    functions = [_bound(path, fn, by_name) if fn.composite else fn for fn in functions]
    spellings.check(path, functions)
    python_names.check(path, functions)
    delegates, unstructured = _delegates(path, functions, by_name)
    groups = _groups(path, functions, delegates)
    groups = [_bind_vmap_as(path, g, groups) for g in groups]
    for fn in functions:
        if fn.derivatives is not None and fn.kind not in (SchemaKind.functional, SchemaKind.mutable):
            raise SpecError(
                path,
                fn.derivatives.line,
                str(fn.func),
                "derivatives: only a functional overload has derivatives (its inplace and out= overloads "
                "follow it)",
                "move 'derivatives' to the functional overload",
            )
    groups = [dataclasses.replace(g, autograd=_autograd(path, g)) for g in groups]
    groups = _with_fused_backward(path, groups, functions)  # appends their entries to functions
    return Manifest(path, tuple(functions), tuple(groups), tuple(unstructured), project)


def _project(path: str, entries: list[LineDict]) -> tuple[Project, list[LineDict]]:
    """The project header (the first entry, or the defaults) and the entries after it."""
    project = DEFAULT_PROJECT
    if entries and is_header(entries[0]):
        project, entries = parse_project(path, entries[0]), entries[1:]
    for entry in entries:
        if is_header(entry):
            raise SpecError(
                path,
                entry.line_of("project"),
                "project",
                "the project header is not the manifest's first entry",
                "move '- project: ...' to the top of the manifest, once",
            )
    return project, entries


def _functions(path: str, entries: list[LineDict]) -> tuple[list[NativeFunction], dict[str, NativeFunction]]:
    """Every entry parsed (a Scalar overload's keys written in from its target), by name once."""
    functions: list[NativeFunction] = []
    by_name: dict[str, NativeFunction] = {}
    for entry in scalar_of.expand(path, entries):
        fn = parse_entry(path, entry)
        name = str(fn.func.name)
        if name in by_name:
            raise SpecError(
                path,
                fn.loc.line,
                str(fn.func),
                f"operator '{name}' is declared twice (first on line {by_name[name].loc.line})",
                "give the overloads distinct names or remove one",
            )
        by_name[name] = fn
        functions.append(fn)
    return functions, by_name


def _delegates(
    path: str, functions: list[NativeFunction], by_name: dict[str, NativeFunction]
) -> tuple[dict[str, dict[SchemaKind, NativeFunction]], list[NativeFunction]]:
    """Each structured out= overload's functional and inplace variants, and the unstructured
    functions (neither structured, delegating nor composite)."""
    delegates: dict[str, dict[SchemaKind, NativeFunction]] = {}
    unstructured: list[NativeFunction] = []
    for fn in functions:
        if fn.structured_delegate is None:
            if not fn.structured and fn.composite is None:
                unstructured.append(fn)
            continue
        target = by_name.get(str(fn.structured_delegate))
        kind = _delegate_kind(path, fn, target, by_name)
        assert target is not None
        slot = delegates.setdefault(str(target.func.name), {})
        if kind in slot:
            raise SpecError(
                path,
                fn.loc.line,
                str(fn.func),
                f"'{target.func.name}' already has a {kind.value} variant ('{slot[kind].func.name}', line"
                f" {slot[kind].loc.line})",
                "keep one functional and one inplace variant per structured op",
            )
        slot[kind] = fn
    return delegates, unstructured


def _delegate_kind(
    path: str, fn: NativeFunction, target: NativeFunction | None, by_name: dict[str, NativeFunction]
) -> SchemaKind:
    """The slot a delegating overload takes (functional or inplace), once it is checked against
    the structured out= overload it names."""
    line = fn.loc.line
    op = str(fn.func)
    if target is None or target.kind is not SchemaKind.out:
        outs = sorted(n for n, f in by_name.items() if f.kind is SchemaKind.out)
        raise SpecError(
            path,
            line,
            op,
            f"structured_delegate '{fn.structured_delegate}' names no out= overload",
            f"name one of: {', '.join(outs) or '(none declared)'}",
        )
    if not target.structured:
        raise SpecError(
            path,
            line,
            op,
            f"structured_delegate '{fn.structured_delegate}' is not structured",
            f"add 'structured: True' to {fn.structured_delegate}",
        )
    if fn.func.name.name.base != target.func.name.name.base:
        raise SpecError(
            path,
            line,
            op,
            f"'{fn.func.name}' cannot delegate to '{target.func.name}': base names differ",
            f"delegate to a '{fn.func.name.name.base}.out' overload",
        )
    if fn.kind not in (SchemaKind.functional, SchemaKind.inplace, SchemaKind.mutable):
        raise SpecError(
            path,
            line,
            op,
            "only functional and inplace overloads can delegate",
            "remove 'structured_delegate' or make the schema functional/inplace",
        )
    # A "mutable" functional (batch_norm updating running_mean in place) takes the functional's
    # slot: it allocates its outputs like one; its Tensor(a!) arguments pass through to the impl.
    kind = SchemaKind.functional if fn.kind is SchemaKind.mutable else fn.kind
    if not same_arguments(fn.func.arguments.all, target.func.arguments.non_out):
        expected = ", ".join(str(a) for a in target.func.arguments.non_out)
        raise SpecError(
            path,
            line,
            op,
            f"arguments differ from the delegate's ({expected})",
            "use the out= overload's arguments without the out arguments",
        )
    _check_delegate_arguments(path, fn, target, kind)
    _check_delegate_returns(path, fn, target, kind)
    return kind


def _groups(
    path: str, functions: list[NativeFunction], delegates: dict[str, dict[SchemaKind, NativeFunction]]
) -> list[StructuredGroup]:
    """One StructuredGroup per structured out= overload, with its variants, checked as a whole."""
    groups = []
    for fn in functions:
        if fn.structured:
            slot = delegates.get(str(fn.func.name), {})
            groups.append(StructuredGroup(fn, slot.get(SchemaKind.functional), slot.get(SchemaKind.inplace)))
    names: dict[str, StructuredGroup] = {}
    for g in groups:
        with_tests = [f for f in g.members if f.tests is not None]
        if len(with_tests) > 1:
            raise SpecError(
                path,
                with_tests[1].loc.line,
                str(with_tests[1].func),
                f"'tests' is given twice for one structured op (also on line {with_tests[0].loc.line})",
                "keep one 'tests' key per structured op",
            )
        if g.name in names:
            raise SpecError(
                path,
                g.out.loc.line,
                str(g.out.func),
                f"structured ops '{g.out.func.name}' and '{names[g.name].out.func.name}' both get the meta"
                f" name '{g.name}'",
                "rename one overload",
            )
        names[g.name] = g
        _check_dynamic_output_shape(path, g)
        _check_reduction(path, g)
    return groups


def _bound(path: str, fn: NativeFunction, by_name: dict[str, NativeFunction]) -> NativeFunction:
    """A composite overload with its call checked against the target's schema."""
    assert fn.composite is not None
    line = fn.loc.line
    targets = []
    for case in fn.composite:
        target = by_name.get(str(case.target))
        if target is None or target.composite is not None:
            problem = "is itself a composite" if target else "is not declared"
            raise SpecError(
                path,
                line,
                str(fn.func),
                f"composite: '{case.target}' {problem}",
                "call a declared overload",
            )
        targets.append(target.func)
    try:
        return dataclasses.replace(fn, composite=composite.bind_cases(fn.composite, fn.func, tuple(targets)))
    except composite.CompositeError as e:
        raise SpecError(path, line, str(fn.func), f"composite: {e.problem}", e.fix) from None


def _with_fused_backward(path: str, groups: list[StructuredGroup], functions: list) -> list[StructuredGroup]:
    """Every pointwise op's gradients that are pointwise formulas get generated backward ops
    (codegen/autograd/fused.py), checked as any entry; their groups follow the op's."""
    out = []
    for g in groups:
        kernels = [
            (grad.inputs[0], grad.kernel)
            for grad in (g.autograd.gradients if g.autograd else ())
            if grad.kernel
        ]
        if not kernels:
            out.append(g)
            continue
        allowed = dict(g.out.rule.allowed)
        bool_tensors = {a for a, dts in allowed.items() if a is not None and tuple(dts) == ("bool",)}
        taken = {d for a, dts in allowed.items() if a not in bool_tensors for d in dts}  # expanded
        # Complex unless every value argument's dtypes are restricted to real ones.
        free = None not in allowed and any(
            a.name not in allowed for a in g.out.func.arguments.non_out if a.type in (_TENSOR, _SCALAR)
        )
        groups_ = ["floating"] + (["complex"] if not allowed or free or taken & _COMPLEX else [])
        ops = fused.backward_entries(
            g.name,
            g.functional.func,
            kernels,
            bool_tensors,
            groups_,
            g.tests,
            g.functional.loc.line,
        )
        made = []
        for _, _, entries in ops:
            out_fn, functional = (parse_entry(path, e) for e in entries)
            functions += [out_fn, functional]
            made.append(StructuredGroup(out_fn, functional, None, backward_of=g.name))
        shared, args = fused.shared(kernels, g.name), {name: a for name, a, _ in ops}
        gradients = tuple(
            dataclasses.replace(grad, fused=shared[grad.inputs[0]], fused_args=args[shared[grad.inputs[0]]])
            if grad.kernel
            else grad
            for grad in g.autograd.gradients
        )
        out.append(dataclasses.replace(g, autograd=dataclasses.replace(g.autograd, gradients=gradients)))
        out.extend(made)
    return out


_TENSOR, _SCALAR = BaseType(BaseTy.Tensor), BaseType(BaseTy.Scalar)
_FLOATING = {d.name for d in dtype_table.DTYPES if d.group in ("floating", "complex")}
_COMPLEX = set(dtype_table.GROUPS["complex"])


def _autograd(path: str, g: StructuredGroup) -> Autograd | None:
    """The op's derivatives: its functional's `derivatives:` and, for a pointwise op, those
    derived from its formula (an op whose result is bool has none)."""
    fn = g.functional
    if fn is None or fn.kind not in (SchemaKind.functional, SchemaKind.mutable):
        return None
    pointwise = g.out.pointwise
    if pointwise is not None and pointwise.bool_result:
        return None
    allowed = dict(g.out.rule.allowed) if g.out.rule is not None else {}
    everything = allowed.get(None)
    differentiable = tuple(
        a.name
        for a in fn.func.arguments.all
        if _is_tensor_like(a) and (set(allowed.get(a.name, everything) or _FLOATING) & _FLOATING)
    )
    if not differentiable:
        return None
    if fn.derivatives is None and pointwise is None:
        raise SpecError(
            path,
            fn.loc.line,
            str(fn.func),
            f"derivatives: the op takes floating tensors ({', '.join(differentiable)}) but says nothing of "
            "their gradients",
            "give each a formula (derivatives: {"
            + differentiable[0]
            + ': "..."}, docs/autograd.md) or write '
            "'derivatives: not_differentiable'",
        )
    outputs = tuple(o.name for o in g.out.func.arguments.out)
    list_output = any(isinstance(o.type, ListType) for o in g.out.func.arguments.out)
    return resolve(
        path,
        str(fn.func),
        fn.func,
        outputs,
        (True,) * len(outputs),
        fn.derivatives,
        parse_formula(pointwise.formula) if pointwise is not None else None,
        differentiable,
        list_output,
    )


def _is_tensor_like(a: Argument) -> bool:
    t = a.type
    while not isinstance(t, BaseType):
        t = t.elem
    return t.name is BaseTy.Tensor


def _bind_vmap_as(path: str, g: StructuredGroup, groups: list[StructuredGroup]) -> StructuredGroup:
    """meta.vmap_as: a call of another structured op's functional (with a rule), or cases of them
    chosen by the optional arguments given (as `composite:`), passing each of this op's arguments
    on by name, transposed (mT) or as a constant: vmap runs it with every tensor batched."""
    rule = g.out.rule
    if rule is None or rule.vmap_as is None:
        return g
    raw, line = rule.vmap_as
    op = str(g.out.func)  # the entry meta.vmap_as is written on
    if g.functional is None:
        problem = "meta.vmap_as: the op has no functional variant to vmap"
        raise SpecError(path, line, op, problem, "remove vmap_as")
    try:
        cases = composite.parse_cases(raw)
    except composite.CompositeError as e:
        raise SpecError(
            path, line, op, f"meta.vmap_as: {e.problem}", "write a call such as 'bmm(self, mat2)' on mm"
        ) from None
    siblings = []
    for call in cases:
        named = [s for s in groups if s.functional is not None and s.functional.func.name == call.target]
        if not named or named[0].out.rule is None or named[0] is g:
            others = [s for s in groups if s.functional and s.out.rule and s is not g]
            known = sorted(str(s.functional.func.name) for s in others)
            close = difflib.get_close_matches(str(call.target), known, n=1)
            raise SpecError(
                path,
                line,
                op,
                f"meta.vmap_as: '{call.target}' is not the functional overload of another structured op with"
                " a meta rule",
                f"call one declared in this manifest{f' (did you mean {close[0]!r}?)' if close else ''}",
            )
        siblings.append(named[0].functional.func)
    try:
        bound = composite.bind_cases(cases, g.functional.func, tuple(siblings))
    except composite.CompositeError as e:
        raise SpecError(path, line, op, f"meta.vmap_as: {e.problem}", e.fix) from None
    for case in bound:
        for param, value in case.bound:
            if not isinstance(value, Name | Const | Transposed):
                raise SpecError(
                    path,
                    line,
                    op,
                    f"meta.vmap_as: the value for '{param.name}' is neither an argument, mT(argument) nor a"
                    " constant",
                    "pass this op's arguments on (vmap batches the tensors among them)",
                )
    return dataclasses.replace(g, vmap_as=bound)


def _check_reduction(path: str, g: StructuredGroup) -> None:
    """The 'reduction' tag promises one input that is reduced (the conformance suite samples it)."""
    tensors = [a for a in g.out.func.arguments.non_out if a.type == BaseType(BaseTy.Tensor)]
    if "reduction" in g.out.tags and "pointwise" not in g.out.tags and len(tensors) != 1:
        fn = g.functional or g.out
        raise SpecError(
            path,
            fn.loc.line,
            str(fn.func),
            "a 'reduction' op must take exactly one tensor",
            "drop the 'reduction' tag, or give the op one Tensor argument",
        )


def _check_delegate_arguments(
    path: str, fn: NativeFunction, target: NativeFunction, kind: SchemaKind
) -> None:
    """Beyond names, types and defaults (same_arguments), a variant and its out= overload must
    agree on which arguments are keyword-only (the Python function and the dispatcher call pass
    them by keyword) and on which are written: a missing (a!) hides a write from torch."""
    op = str(fn.func)
    keyword_only = {a.name for a in target.func.arguments.kwarg_only} - {
        o.name for o in target.func.arguments.out
    }
    for a, b in zip(fn.func.arguments.all, target.func.arguments.non_out):
        if (a.name in keyword_only) != (a in fn.func.arguments.kwarg_only):
            here, there = (
                ("keyword-only", "positional")
                if a.name not in keyword_only
                else ("positional", "keyword-only")
            )
            raise SpecError(
                path,
                fn.loc.line,
                op,
                f"'{a.name}' is {here} here but {there} in '{target.func.name}'",
                "put the '*' at the same place in both schemas",
            )
        if a.is_write != b.is_write and not (kind is SchemaKind.inplace and a.name == "self"):
            written, unwritten = (fn, target) if a.is_write else (target, fn)
            raise SpecError(
                path,
                (unwritten.loc.line),
                str(unwritten.func),
                f"'{a.name}' is written (Tensor(a!)) in '{written.func.name}' but not here",
                f"annotate '{a.name}' as written in every variant of the op",
            )
        if not a.is_write and not b.is_write and a.annotation != b.annotation:  # a view's alias set
            raise SpecError(
                path,
                fn.loc.line,
                op,
                f"argument '{a}' is '{b}' in '{target.func.name}'",
                f"write '{b}' (a structured op's variants return new tensors, not views)",
            )


def _check_delegate_returns(path: str, fn: NativeFunction, target: NativeFunction, kind: SchemaKind) -> None:
    """What the wrappers return (codegen/templates/wrappers.cpp.j2): a functional variant, the new
    tensor it allocates for each out argument (one Tensor[] for a Tensor(a!)[] output); an inplace
    variant, self, into which it writes the op's one output."""
    line, op, outs = fn.loc.line, str(fn.func), target.func.arguments.out
    list_out = any(isinstance(o.type, ListType) for o in outs)
    if not list_out and any(isinstance(r.type, ListType) for r in fn.func.returns):
        raise SpecError(
            path,
            line,
            op,
            f"returns a Tensor[] but '{target.func.name}' writes single tensors",
            "return one Tensor per out argument, or give the out= overload one 'Tensor(a!)[] out'",
        )
    if list_out and (
        kind is not SchemaKind.functional
        or [(r.type, r.annotation) for r in fn.func.returns] != [(ListType(_TENSOR, None), None)]
    ):
        raise SpecError(
            path,
            line,
            op,
            f"'{target.func.name}' writes a Tensor(a!)[] output, so its variant must be functional "
            "and return 'Tensor[]'",
            f"write '{fn.func.name}({fn.func.arguments}) -> Tensor[]' (no inplace variant)",
        )
    if kind is SchemaKind.functional and len(fn.func.returns) != len(outs):
        raise SpecError(
            path,
            line,
            op,
            f"returns {len(fn.func.returns)} tensors but the delegate writes {len(outs)}",
            "return one Tensor per out argument",
        )
    for r, o in zip(fn.func.returns, outs) if kind is SchemaKind.functional and not list_out else ():
        if (r.type, r.annotation) != (_TENSOR, None):
            fresh = ", ".join(str(Return(r.name, _TENSOR, None)) for r in fn.func.returns)
            raise SpecError(
                path,
                line,
                op,
                f"returns '{r}' where '{target.func.name}' writes '{o}': a functional variant returns the "
                "new Tensor it allocates for each out argument",
                f"write '-> {fresh if len(outs) == 1 else '(' + fresh + ')'}'",
            )
    if kind is SchemaKind.inplace and len(outs) != 1:
        raise SpecError(
            path,
            line,
            op,
            f"an inplace variant writes the op's output into self, but '{target.func.name}' writes"
            f" {len(outs)} ({', '.join(o.name for o in outs)})",
            "remove the inplace variant",
        )


def _check_dynamic_output_shape(path: str, g: StructuredGroup) -> None:
    """A data-dependent output size is no rule's to compute, and FakeTensorMode reads the tag of
    the overload it runs, so every variant must carry it."""
    tagged = [f for f in g.members if "dynamic_output_shape" in f.tags]
    if not tagged:
        return
    if g.out.rule is not None:
        raise SpecError(
            path,
            g.out.loc.line,
            str(g.out.func),
            "a 'dynamic_output_shape' op's output size depends on data, which a meta rule cannot compute",
            "write 'meta: custom' (the hand-written meta function may read the data) and give the "
            "functional a fake impl (torch.library.register_fake) in the package's Python",
        )
    for f in g.members:
        if f not in tagged:
            raise SpecError(
                path,
                f.loc.line,
                str(f.func),
                f"'{tagged[0].func.name}' is tagged dynamic_output_shape but this variant is not",
                "add 'tags: [dynamic_output_shape]' to every variant of the op",
            )


def load_manifest(path: Path, display_path: str | None = None) -> Manifest:
    shown = display_path or path.name
    return build_manifest(shown, read_manifest_entries(path, shown))
