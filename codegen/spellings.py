"""The manifest's `spellings:` key: texts torch's Python layer takes in place of a number
argument (torch.cdist's compute_mode="use_mm_for_euclid_dist" is 1, torch.norm's "fro" is 2).

    - func: cdist(Tensor x1, Tensor x2, float p=2, int? compute_mode=None) -> Tensor
      spellings:
        compute_mode: {use_mm_for_euclid_dist_if_necessary: null, use_mm_for_euclid_dist: 1}

<package>.<name> turns such a text into the schema's value before it picks an overload
(codegen/dest/python_api.py); torch.ops.<name> keeps the schema. parse() checks one entry's
key, check() that a name declares its spellings once, with the argument at one position.
"""

from __future__ import annotations

from structgen.codegen.errors import SpecError
from structgen.codegen.load import LineDict
from structgen.codegen.model.native import NativeFunction, Spellings
from structgen.codegen.model.schema import BaseTy, BaseType, FunctionSchema, OptionalType


def _err(path: str, entry: LineDict, op: str, problem: str, fix: str) -> SpecError:
    return SpecError(path, entry.line_of("spellings"), op, problem, fix)


# The argument types that take spelled values, and the Python types of the values they stand for.
_SPELLED_TYPES = {
    BaseType(BaseTy.int): (int,),
    BaseType(BaseTy.float): (int, float),
    BaseType(BaseTy.Scalar): (int, float),
}


def parse(path: str, entry: LineDict, op: str, schema: FunctionSchema) -> Spellings:
    """One entry's `spellings: {argument: {text: value}}`, each value one of its argument's."""
    raw = entry.get("spellings")
    if raw is None:
        return ()
    fix = "write {argument: {text: value}}, e.g. {compute_mode: {use_mm_for_euclid_dist: 1}}"
    if not isinstance(raw, dict) or not raw:
        raise _err(path, entry, op, "'spellings' must be a non-empty mapping", fix)
    arguments = {a.name: a for a in schema.arguments.non_out}
    result = []
    for name, table in raw.items():
        a = arguments.get(name)
        if a is None:
            raise _err(
                path,
                entry,
                op,
                f"spellings: '{name}' is not an argument",
                f"use one of: {', '.join(arguments)}",
            )
        optional = isinstance(a.type, OptionalType)
        inner = a.type.elem if optional else a.type
        if inner not in _SPELLED_TYPES:
            raise _err(
                path,
                entry,
                op,
                f"spellings: '{name}' is {a.type}; only int, float and Scalar arguments take spelled values",
                f"remove '{name}'",
            )
        if not isinstance(table, dict) or not table:
            raise _err(path, entry, op, f"spellings: '{name}' needs a mapping of texts", fix)
        for text, value in table.items():
            fits = (value is None and optional) or type(value) in _SPELLED_TYPES[inner]
            if not isinstance(text, str) or not fits:
                raise _err(
                    path,
                    entry,
                    op,
                    f"spellings: '{text}' stands for {value!r}, which is not a text and a value of '{name}'"
                    f" ({a.type})",
                    "map a text to a number of the argument's type (null where the argument is optional)",
                )
        result.append((str(name), tuple((k, v) for k, v in table.items())))
    return tuple(result)


def check(path: str, functions: list[NativeFunction]) -> None:
    """<package>.<name> spells for all of a name's overloads: one entry declares the texts, and a
    spelled argument sits at one position in every overload that has it."""
    declared: dict[str, NativeFunction] = {}
    for fn in functions:
        if fn.spellings:
            name = fn.func.name.name.base
            if name in declared:
                raise SpecError(
                    path,
                    fn.loc.line,
                    str(fn.func),
                    f"'{name}' has spellings on line {declared[name].loc.line} already",
                    "declare a name's spellings once; they apply to all its overloads",
                )
            declared[name] = fn
    for fn in functions:
        source = declared.get(fn.func.name.name.base)
        if source is None:
            continue
        for arg, _ in source.spellings:
            where = [a.name for a in fn.func.arguments.positional]
            there = [a.name for a in source.func.arguments.positional]
            if arg in where and (arg not in there or where.index(arg) != there.index(arg)):
                raise SpecError(
                    path,
                    fn.loc.line,
                    str(fn.func),
                    f"'{arg}' has spellings (line {source.loc.line}) but is not argument"
                    f" {there.index(arg) + 1 if arg in there else '(keyword)'} here as there",
                    f"give '{arg}' one position in every overload of {fn.func.name.name.base}",
                )
