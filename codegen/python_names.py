"""`python_name:`: the name of an op's function in its package's Python layer, where the package
writes the function of the schema's name itself (layer_norm's three outputs generated as
native_layer_norm, torch's name for them, beside the package's layer_norm that returns
torch.layer_norm's one). It applies to every overload of the base name (an inplace one keeps its
underscore); the manifest check keeps one per base name, naming no other op's function."""

from __future__ import annotations

import keyword

from structgen.codegen.errors import SpecError
from structgen.codegen.load import LineDict
from structgen.codegen.model.native import NativeFunction


def parse(path: str, entry: LineDict, op: str) -> str | None:
    name = entry.get("python_name")
    if name is None:
        return None
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise SpecError(
            path,
            entry.line_of("python_name"),
            op,
            f"python_name {name!r} is not a Python name",
            "write e.g. python_name: native_layer_norm",
        )
    return name


def table(functions: list[NativeFunction]) -> dict[str, str]:
    """Each renamed base name's `python_name:`."""
    return {str(f.func.name.name.base): f.python_name for f in functions if f.python_name}


def of(fn: NativeFunction, renamed: dict[str, str]) -> str:
    """The name of fn's function in the package's Python layer."""
    name = fn.func.name.name
    if name.base not in renamed:
        return str(name)
    return renamed[name.base] + ("_" if name.inplace else "")


def check(path: str, functions: list[NativeFunction]) -> None:
    """One `python_name:` per base name, naming no other op's function."""
    first: dict[str, NativeFunction] = {}
    for fn in functions:
        if fn.python_name is None:
            continue
        base = str(fn.func.name.name.base)
        seen = first.setdefault(base, fn)
        if seen.python_name != fn.python_name:
            raise SpecError(
                path,
                fn.loc.line,
                str(fn.func),
                f"python_name '{fn.python_name}' differs from '{seen.python_name}' (line {seen.loc.line}), "
                f"and {base}'s overloads share one Python function",
                "give the python_name once, or the same on each overload",
            )
    renamed = table(functions)
    taken = {str(f.func.name.name.base): f for f in functions if str(f.func.name.name.base) not in renamed}
    for base, fn in first.items():
        other = taken.get(renamed[base])
        if other is not None:
            raise SpecError(
                path,
                fn.loc.line,
                str(fn.func),
                f"python_name '{renamed[base]}' is the Python name of '{other.func.name}' "
                f"(line {other.loc.line})",
                "choose a name no op of the manifest has",
            )
