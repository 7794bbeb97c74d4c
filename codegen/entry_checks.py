"""The checks of a parsed entry as a whole (codegen/entry.py parses its keys): its argument
names and types, its out= and inplace overloads' conventions, and where its kernels come from."""

from __future__ import annotations

import keyword

from structgen.codegen.api import boxed, cpp, python
from structgen.codegen.api.names import GENERATED_LOCALS, GENERATED_PREFIX, cpp_name, generated_names
from structgen.codegen.errors import SpecError
from structgen.codegen.load import LineDict
from structgen.codegen.model.native import DispatchKey, NativeFunction
from structgen.codegen.model.rule_tree import PDim, PGroup
from structgen.codegen.model.schema import BaseTy, BaseType, ListType, Return, SchemaKind, is_tensor_like


def key_error(
    path: str, entry: LineDict, key: str | None, op: str | None, problem: str, fix: str
) -> SpecError:
    """The error at ``key``'s line (the entry's, for None)."""
    line = entry.line_of(key) if key else entry.line
    return SpecError(path, line, op, problem, fix)


_err = key_error


# The out arguments a structured op's wrappers write (codegen/templates/wrappers.cpp.j2).
_STRUCTURED_OUTS = (BaseType(BaseTy.Tensor), ListType(BaseType(BaseTy.Tensor), None))

# Names the generated Python module (ops.py.j2) uses in its functions' bodies.
PYTHON_LOCALS = ("_ops", "_call")


def _check_names(path: str, entry: LineDict, fn: NativeFunction) -> None:
    """Argument names become Python and C++ names in the generated code: each must be one both
    languages accept there, and the defaults must be in an order Python (and torch) accept."""
    op = str(fn.func)
    args = fn.func.arguments
    base = str(fn.func.name.name)
    if keyword.iskeyword(base):
        raise _err(
            path,
            entry,
            "func",
            op,
            f"operator name '{base}' is a Python keyword",
            "rename the operator (<package>.<name> must be a Python name)",
        )
    outs = tuple(o.name for o in args.out)
    pre = fn.precomputed.all_values if fn.precomputed else ()
    dims = tuple(
        it.name
        for inp in (fn.rule.inputs if fn.rule else ())
        for it in inp.pattern.items
        if isinstance(it, PDim | PGroup)
    )
    derived = generated_names(outs, tuple(a.name for a in pre), dims, tuple(a.name for a in args.all))
    cpp_names: dict[str, str] = {}
    for a in args.all:
        if keyword.iskeyword(a.name):
            raise _err(
                path,
                entry,
                "func",
                op,
                f"argument name '{a.name}' is a Python keyword",
                "rename the argument (<package>.<op> takes it as a Python parameter)",
            )
        if cpp_name(a.name) in cpp_names:  # before the derived names: new_ is also new's saved copy
            clash = (
                f"'{a.name}' and '{cpp_names[cpp_name(a.name)]}' are both '{cpp_name(a.name)}' in C++ (a"
                " keyword gets a '_')"
            )
        else:
            clash = _generated_clash(a.name, derived) or (
                f"'{a.name}' is a name the generated Python uses"
                if a.name in PYTHON_LOCALS or (a.name == "out" and a.name not in outs)
                else None
            )
        if clash:
            raise _err(path, entry, "func", op, f"argument name {clash}", "rename the argument")
        cpp_names[cpp_name(a.name)] = a.name
    for a in pre:
        clash = _generated_clash(a.name, derived)
        if clash:
            raise _err(path, entry, "precomputed", op, f"precomputed name {clash}", "rename it")
    defaulted = None
    for a in args.positional:
        if a.default is not None:
            defaulted = defaulted or a
        elif defaulted is not None:
            raise _err(
                path,
                entry,
                "func",
                op,
                f"positional argument '{a.name}' has no default but follows '{defaulted.name}', which"
                " has one",
                f"give '{a.name}' a default, move it before '{defaulted.name}', or make it keyword-only "
                "(after '*')",
            )


def _generated_clash(name: str, derived: dict[str, str]) -> str | None:
    """Why ``name`` would clash with a name of the generated C++ (None: it would not)."""
    if name.startswith(GENERATED_PREFIX):
        return f"'{name}' starts with '{GENERATED_PREFIX}', which the generated code's own names do"
    if name in GENERATED_LOCALS:
        return f"'{name}' is a name the generated C++ uses in the op's functions"
    if name in derived:
        return f"'{name}' is the name the generated C++ gives a value of '{derived[name]}'"
    return None


def _check_types(path: str, entry: LineDict, fn: NativeFunction) -> None:
    """Every argument, return and precomputed value maps to C++, and every default to Python:
    accepting the entry is a promise that its generated code builds."""
    op = str(fn.func)
    values = fn.precomputed.all_values if fn.precomputed else ()
    try:
        cpp.kernel_signature(fn.func)
        boxed.boxed_kernel(fn.func, "f", "boxed_f")
        cpp.arguments(values)
        for a in values:
            cpp.value_type(a.type)
    except cpp.UnsupportedType as e:
        raise _err(
            path, entry, None, op, str(e), "use a type the generator maps to C++ (see codegen/api/cpp.py)"
        ) from None
    for a in fn.func.arguments.all:
        if a.default is not None and python.default(a.default) is None:
            raise _err(
                path,
                entry,
                None,
                op,
                f"default '{a.default}' of '{a.name}' has no Python equivalent",
                "use a number, bool, None, string or list default",
            )


def check_entry(path: str, entry: LineDict, fn: NativeFunction) -> None:
    """The rules an entry's schema and keys must keep together, once it is parsed."""
    _check_names(path, entry, fn)
    _check_types(path, entry, fn)
    _check_out_overload(path, entry, fn)
    if fn.func.name.name.inplace:
        _check_inplace_overload(path, entry, fn)
    _check_kernels(path, entry, fn)


def _check_out_overload(path: str, entry: LineDict, fn: NativeFunction) -> None:
    """An out= overload (or a structured op) takes its outputs keyword-only and returns them."""
    op = str(fn.func)
    schema = fn.func
    kind = fn.kind
    looks_out = schema.name.overload_name == "out" or schema.name.overload_name.endswith("_out")
    if (looks_out or fn.structured) and kind is not SchemaKind.out:
        raise _err(
            path,
            entry,
            "func",
            op,
            "an out= overload must take its outputs as keyword-only 'Tensor(a!)' arguments",
            "end the arguments with ', *, Tensor(a!) out' and return 'Tensor(a!)'",
        )
    written = next((o for o in schema.arguments.out if o.type not in _STRUCTURED_OUTS), None)
    if fn.structured and written is not None:
        problem = (
            f"out argument '{written.name}' is a '{written.type}': the generated wrappers write a Tensor"
            " per out argument, or one Tensor[]"
        )
        raise _err(path, entry, "func", op, problem, f"write 'Tensor({written.annotation}) {written.name}'")
    if kind is SchemaKind.out and any(isinstance(o.type, ListType) for o in schema.arguments.out):
        outs = schema.arguments.out
        if len(outs) != 1:
            raise _err(
                path,
                entry,
                "func",
                op,
                f"a Tensor(a!)[] output must be the op's only output, got {len(outs)} outputs",
                "split the op, or return the other results in the list",
            )
        if schema.returns:
            raise _err(
                path,
                entry,
                "func",
                op,
                "an out= overload with a Tensor(a!)[] output returns nothing (PyTorch's convention)",
                "write '-> ()'",
            )
    elif kind is SchemaKind.out:
        outs = schema.arguments.out
        if len(schema.returns) != len(outs) or any(
            r.annotation != o.annotation or r.type != o.type or not r.is_write
            for r, o in zip(schema.returns, outs)
        ):
            want = ", ".join(str(Return(None, o.type, o.annotation)) for o in outs)
            raise _err(
                path,
                entry,
                "func",
                op,
                "an out= overload must return its out arguments",
                f"write '-> {want if len(outs) == 1 else '(' + want + ')'}'",
            )


def _check_inplace_overload(path: str, entry: LineDict, fn: NativeFunction) -> None:
    """An inplace overload takes self first, written to, and returns it."""
    op = str(fn.func)
    schema = fn.func
    self_arg = schema.arguments.self_arg
    if self_arg is None or not self_arg.is_write or not is_tensor_like(self_arg.type):
        raise _err(
            path,
            entry,
            "func",
            op,
            f"inplace overload '{schema.name.name}' must take 'Tensor(a!) self'",
            "annotate self as written-to: 'Tensor(a!) self'",
        )
    if schema.arguments.positional[0] is not self_arg:  # torch's convention, which vmap's rule reads
        problem = f"inplace overload '{schema.name.name}' must take self first, the tensor it writes"
        fix = "move 'self' to the front of the arguments (in the out= overload too)"
        raise _err(path, entry, "func", op, problem, fix)
    if fn.structured_delegate is not None and self_arg.type != BaseType(BaseTy.Tensor):
        problem = (
            f"inplace overload '{schema.name.name}' writes the structured op's output into self, which"
            f" must be a Tensor, not a '{self_arg.type}'"
        )
        raise _err(path, entry, "func", op, problem, "make self a Tensor, or remove the inplace overload")
    returned = schema.returns[0] if len(schema.returns) == 1 else None
    if returned is None or (returned.type, returned.annotation) != (self_arg.type, self_arg.annotation):
        want = Return(None, self_arg.type, self_arg.annotation)
        raise _err(path, entry, "func", op, "an inplace overload must return self", f"write '-> {want}'")


def _check_kernels(path: str, entry: LineDict, fn: NativeFunction) -> None:
    """Where the entry's kernels come from: structured (a meta function and an impl), a
    delegate, dispatch or a composite, one of them."""
    op = str(fn.func)
    if fn.structured and fn.structured_delegate is not None:
        raise _err(
            path,
            entry,
            "structured_delegate",
            op,
            "an entry is either structured or delegates to one, not both",
            "keep 'structured: True' on the out= overload and 'structured_delegate' on the others",
        )
    if fn.structured:
        keys = dict(fn.dispatch)
        if DispatchKey.Meta in keys:
            raise _err(
                path,
                entry,
                "dispatch",
                op,
                "the Meta kernel of a structured op is generated from its meta function",
                "remove 'Meta' from dispatch",
            )
        if not (DispatchKey.CPU in keys or DispatchKey.CUDA in keys):
            raise _err(
                path,
                entry,
                "structured",
                op,
                "a structured op needs an impl for CPU or CUDA",
                f"add e.g. 'dispatch: [CPU]' and define the impl 'structgen signature "
                f"{fn.func.name.name}' prints in csrc/ops/<family>/cpu.cpp",
            )
        if fn.rule is None and not fn.meta_custom:
            raise _err(
                path,
                entry,
                None,
                op,
                "a structured op needs a meta rule",
                "add 'meta: {shape: {out: ...}}' (see docs/rules.md) or 'meta: custom' and define "
                "the meta function in csrc/ops/<family>/meta.cpp",
            )
    elif fn.precomputed is not None:
        raise _err(
            path,
            entry,
            "precomputed",
            op,
            "'precomputed' needs 'structured: True'",
            "move it to the structured out= overload",
        )
    if fn.structured_delegate is not None and fn.dispatch:
        raise _err(
            path,
            entry,
            "dispatch",
            op,
            "an entry with 'structured_delegate' gets its kernels from the delegate",
            "remove 'dispatch' here",
        )
    if not fn.structured and fn.structured_delegate is None and not fn.dispatch and fn.composite is None:
        raise _err(
            path,
            entry,
            None,
            op,
            "entry has no kernel",
            "add 'structured: True' + 'dispatch', 'structured_delegate: <op>.out', 'dispatch', or"
            " 'composite: <call>'",
        )
