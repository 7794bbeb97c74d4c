"""Contexts for the generated Python module (<package>._ops) and its type stub.

Each Python function calls the dispatcher's OpOverload, so <package>.add(...) traces under
torch.compile exactly like torch.ops.<namespace>.add.Tensor(...).
"""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen import python_names
from structgen.codegen.api import python
from structgen.codegen.model.native import Manifest, NativeFunction
from structgen.codegen.model.schema import BaseTy, BaseType, ListType, SchemaKind, same_arguments


@dataclass(frozen=True)
class PyFunction:
    name: str
    params: str  # the def's parameter list
    stub_params: str  # with type hints, for the .pyi
    text_signature: str  # the C function's, what inspect.signature and IDEs show
    stub_return: str
    doc: str
    # Direct calls: the functional overload, and the out= overload (or None).
    call_args: str  # "self, other, alpha=alpha"
    op: str | None  # "add.Tensor"; None means "resolve among overloads" (packet call)
    out_op: str | None
    out_names: tuple[str, ...]
    op_writes_out: bool = False  # `op` itself is an out= overload (it can warn on resizing)
    # An op of several overloads: one typing.overload stub (parameters, return) per overload,
    # and what structgen._dispatch.pick resolves among (torch.ops path, writes out=, parameters).
    # A direct function's overloads are the ones its C entry binds (csrc/python/entry.cpp): the
    # functional one, and the out= one when it takes `out=` alone.
    stub_overloads: tuple[tuple[str, str], ...] = ()
    overloads: tuple[tuple[str, bool, str], ...] = ()
    number_self: bool = False  # a number may stand for the first Tensor (python.NUMBER_SELF)
    # `spellings:`: (argument, its position (-1: keyword-only), {text: value} as a Python literal).
    spellings: tuple[tuple[str, int, str], ...] = ()


def _spellings(source: NativeFunction | None) -> tuple[tuple[str, int, str], ...]:
    """The `spellings:` of ``source``, the one entry of the op's base name that declares them
    (codegen/spellings.py checks), each argument with the position it has in every overload."""
    if source is None:
        return ()
    positional = [a.name for a in source.func.arguments.positional]
    result = []
    for arg, table in source.spellings:
        literal = "{" + ", ".join(f"{text!r}: {value!r}" for text, value in table) + "}"
        result.append((arg, positional.index(arg) if arg in positional else -1, literal))
    return tuple(result)


def _doc(fns: list[NativeFunction], namespace: str) -> str:
    """The docstring's text, escaped for a triple-quoted literal: a backslash (``\\N{x}``, ``\\x``)
    or ``\"\"\"`` in a manifest doc or a string default would otherwise end or break it."""
    text = next((f.doc for f in fns if f.doc), "")
    schemas = "\n".join(f"    {f.func}" for f in fns)
    doc = (text + "\n\n" if text else "") + f"Overloads (torch.ops.{namespace}.*):\n" + schemas
    return doc.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _overload(fn: NativeFunction) -> str:
    """The torch.ops attribute path of fn's overload: an OpOverload, never the packet, whose call
    would resolve the overload again on every call (exp: 12 us instead of 4)."""
    return f"{fn.func.name.name}.{fn.func.name.overload_name or 'default'}"


def _signature(
    fn: NativeFunction,
    out: NativeFunction | None,
    with_hint: bool,
    number_self: bool = False,
    spelled: frozenset[str] = frozenset(),
) -> str:
    """The Python parameters of ``fn``, and ``out=`` when an out= overload takes its arguments;
    with ``number_self``, a Tensor ``self`` beside a Tensor ``other`` hinted as also taking a
    number (python.NUMBER_SELF: torch.add(2, x), never add(2, 3)); ``spelled`` arguments also
    take a str."""
    args = fn.func.arguments
    positional = [python.parameter(a, with_hint, a.name in spelled) for a in args.positional]
    tensor = BaseType(BaseTy.Tensor)
    if number_self and with_hint and [a.type for a in args.positional[:2]] == [tensor, tensor]:
        positional[0] = "self: Tensor | int | float | bool | complex"
    keyword = [python.parameter(a, with_hint, a.name in spelled) for a in args.kwarg_only]
    if out is not None:
        outs = out.func.arguments.out
        if with_hint:
            kind = "Tensor" if len(outs) == 1 else "tuple[" + ", ".join("Tensor" for _ in outs) + "]"
            if len(outs) == 1 and isinstance(outs[0].type, ListType):
                kind = "Sequence[Tensor]"
            keyword.append(f"out: {kind} | None = None")
        else:
            keyword.append("out=None")
    return ", ".join(positional + (["*"] + keyword if keyword else []))


def _direct(
    name: str,
    fn: NativeFunction,
    out: NativeFunction | None,
    fns: list[NativeFunction],
    spelled_by: NativeFunction | None,
    namespace: str,
) -> PyFunction:
    args = fn.func.arguments
    call = [a.name for a in args.positional] + [f"{a.name}={a.name}" for a in args.kwarg_only]

    spellings = _spellings(spelled_by)
    spelled = frozenset(arg for arg, _, _ in spellings)

    def sig(with_hint: bool) -> str:
        return _signature(fn, out, with_hint, spelled=spelled)

    out_names = tuple(o.name for o in out.func.arguments.out) if out else ()
    bound = [fn] + ([out] if out_names == ("out",) else [])  # out=(a, b): the Python function unpacks it
    return PyFunction(
        name=name,
        params=sig(False),
        stub_params=sig(True),
        text_signature=sig(False),
        stub_return=python.return_hint(fn.func.returns),
        doc=_doc(fns, namespace),
        call_args=", ".join(call),
        op=_overload(fn),
        out_op=_overload(out) if out else None,
        out_names=out_names,
        op_writes_out=fn.kind is SchemaKind.out,
        overloads=tuple((_overload(f), f.kind is SchemaKind.out, _parameters(f)) for f in bound),
        spellings=spellings,
    )


def _parameters(fn: NativeFunction) -> str:
    """fn's parameters as the runtime's _dispatch.pick reads them: a Python tuple literal of
    (name, kind, optional, has default, keyword-only)."""
    args = fn.func.arguments
    items = []
    for a in args.all:
        kind, optional = python.parser_kind(a.type)
        items.append(f"({a.name!r}, {kind!r}, {optional}, {a.default is not None}, {a in args.kwarg_only})")
    return "(" + "".join(f"{i}, " for i in items) + ")"


def _packet(
    name: str, fns: list[NativeFunction], spelled_by: NativeFunction | None, namespace: str
) -> PyFunction:
    """Several overloads: the call resolves among them as torch's Python layer does (the
    functional and inplace overloads first, in manifest order, then the out= ones); the stub
    lists each."""
    non_out = [f for f in fns if f.kind is not SchemaKind.out]
    outs = [f for f in fns if f.kind is SchemaKind.out]
    number_self = name in python.NUMBER_SELF
    spellings = _spellings(spelled_by)
    spelled = frozenset(arg for arg, _, _ in spellings)
    overloads = []
    for fn in non_out:
        out = next((o for o in outs if same_arguments(fn.func.arguments.all, o.func.arguments.non_out)), None)
        signature = _signature(fn, out, True, number_self, spelled)
        overloads.append((signature, python.return_hint(fn.func.returns)))
    ordered = non_out + outs
    # Narrower stubs first: mypy reports a stub an earlier, broader one already matches (prod(x)
    # before prod(x, dim: int) before prod(x, dim: int | Sequence[int] | None)).
    overloads.sort(key=lambda o: (o[0].count(":"), o[0].count("|")))
    return PyFunction(
        name=name,
        params="*args, **kwargs",
        stub_params="*args: Any, **kwargs: Any",
        text_signature=_merged_signature(ordered),
        stub_return=python.return_hint(fns[0].func.returns),
        doc=_doc(fns, namespace),
        call_args="*args, **kwargs",
        op=None,
        out_op=None,
        out_names=(),
        stub_overloads=tuple(overloads),
        overloads=tuple((_overload(f), f.kind is SchemaKind.out, _parameters(f)) for f in ordered),
        number_self=number_self,
        spellings=spellings,
    )


def _merged_signature(fns: list[NativeFunction]) -> str:
    """One signature over several overloads: each parameter once, positional where some overload
    takes it by position, with the default every overload that has it gives it, else None where
    an overload lacks it (or the defaults differ). Where the overloads' positional parameters are
    not all prefixes of one list (var(self, unbiased) beside var(self, dim, ...)), no one
    signature says them: ``*args, **kwargs``."""
    lists = [[a.name for a in f.func.arguments.positional] for f in fns]
    longest = max(lists, key=len)
    if any(names != longest[: len(names)] for names in lists):
        return "*args, **kwargs"
    keyword = [
        n
        for n in dict.fromkeys(
            a.name for f in fns for a in f.func.arguments.kwarg_only + f.func.arguments.out
        )
        if n not in longest
    ]
    params = []
    for name in longest + keyword:
        found = [a for f in fns for a in f.func.arguments.all if a.name == name]
        # Each overload's default as Python ("" where it has none; an unprintable one as None).
        defaults = {"" if a.default is None else python.default(a.default) or "None" for a in found}
        if len(defaults) == 1 and "" not in defaults:
            value = defaults.pop()
        elif defaults == {""} and len(found) == len(fns):
            value = ""  # required by every overload
        else:
            value = "None"
        if not value and params and "=" in params[-1] and name in longest:
            value = "None"  # after a parameter with a default, every positional one has one
        params.append(f"{name}={value}" if value else name)
    return ", ".join(params[: len(longest)] + (["*"] + params[len(longest) :] if keyword else []))


def python_functions(manifest: Manifest) -> list[PyFunction]:
    by_name: dict[str, list[NativeFunction]] = {}
    renamed = python_names.table(manifest.functions)
    for fn in manifest.functions:
        if "generated" in fn.tags:  # fused backward ops: torch.ops.<namespace> only, for autograd
            continue
        by_name.setdefault(python_names.of(fn, renamed), []).append(fn)
    # spellings: apply to every Python function of the base name (norm and norm_ alike)
    spelled_by = {f.func.name.name.base: f for f in manifest.functions if f.spellings}
    ns = manifest.project.name
    result = []
    for name, fns in by_name.items():
        non_out = [f for f in fns if f.kind is not SchemaKind.out]
        outs = [f for f in fns if f.kind is SchemaKind.out]
        if len(non_out) == 1 and len(outs) <= 1:
            fn, out = non_out[0], (outs[0] if outs else None)
            if out is None or same_arguments(fn.func.arguments.all, out.func.arguments.non_out):
                result.append(_direct(name, fn, out, fns, spelled_by.get(fn.func.name.name.base), ns))
                continue
        if len(non_out) == 0 and len(outs) == 1:
            result.append(_direct(name, outs[0], None, fns, spelled_by.get(outs[0].func.name.name.base), ns))
            continue
        result.append(_packet(name, fns, spelled_by.get(fns[0].func.name.name.base), ns))
    return result
