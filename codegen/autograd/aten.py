"""ATen's operators as functions a derivative formula may call, as derivatives.yaml calls them:
a name the table of codegen/autograd/functions.py lacks is looked up in the native_functions.yaml
that torch's wheel carries (torchgen/packaged), and its overloads, typed from their schemas,
become rows of that table's kind. The call prints as ``at::<name>(...)``, so C++ picks the
overload by its arguments' types; the schemas here check the kinds and the count of arguments
when the code is generated, so a wrong call is a manifest error, not a compile error."""

from __future__ import annotations

import difflib
import functools
import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from structgen.codegen.model.autograd import Function
from structgen.codegen.model.schema import (
    BaseTy,
    BaseType,
    FunctionSchema,
    ListType,
    OptionalType,
    SchemaSyntaxError,
)


@dataclass(frozen=True)
class Overload:
    schema: str  # as native_functions.yaml writes it
    function: Function  # its params: the kinds of its C++ arguments, in order
    required: int  # how many of them have no default


def _yaml_path() -> Path | None:
    spec = importlib.util.find_spec("torchgen")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
    return path if path.is_file() else None


@functools.cache
def _schemas() -> dict[str, tuple[str, ...]]:
    """Every operator's schemas by base name, in the file's order (read once per process)."""
    path = _yaml_path()
    if path is None:
        return {}
    found: dict[str, list[str]] = {}
    for entry in path.read_text().split("\n- func: ")[1:]:
        schema = entry.split("\n", 1)[0].strip()
        variants = re.search(r"^  variants: *(.*)$", entry, re.MULTILINE)
        if variants is not None and "function" not in variants.group(1):
            continue  # a method only (type_as): no at:: function to call
        found.setdefault(re.match(r"[A-Za-z0-9_]+", schema).group(0), []).append(schema)
    return {name: tuple(schemas) for name, schemas in found.items()}


def _takes_symint(schema: FunctionSchema) -> bool:
    """Whether to call the overload's ``_symint`` C++ form: it takes a SymInt (which a backward
    Node keeps as c10::SymInt, and an int64_t converts to) and no SymInt[] (a one-dim list is an
    IntArrayRef, which no SymIntArrayRef is made from)."""
    types = [a.type for a in schema.arguments.all]
    return BaseType(BaseTy.SymInt) in types and not any(
        isinstance(t, ListType) and t.elem == BaseType(BaseTy.SymInt) for t in types
    )


def available() -> bool:
    return _yaml_path() is not None


def _param(t) -> str | None:
    """A schema type as a formula kind (formulas.arg_kind's kinds); None: no formula value fits."""
    if t == BaseType(BaseTy.Tensor):
        return "tensor"
    if t == OptionalType(BaseType(BaseTy.Tensor)):
        return "tensor?"
    if t == BaseType(BaseTy.int):
        return "int"  # printed through as_int: a SymInt of the op's may stand where it goes
    if isinstance(t, BaseType) and t.name in (BaseTy.Scalar, BaseTy.float, BaseTy.SymInt):
        return "scalar"
    if t == BaseType(BaseTy.bool):
        return "bool"
    if isinstance(t, OptionalType) and t.elem in (BaseType(BaseTy.Scalar), BaseType(BaseTy.float)):
        return "scalar?"
    if isinstance(t, ListType) and t.elem in (BaseType(BaseTy.int), BaseType(BaseTy.SymInt)):
        return "int[]"
    if isinstance(t, OptionalType) and t.elem in (BaseType(BaseTy.int), BaseType(BaseTy.SymInt)):
        return "ints"  # int? dim
    return None


@functools.cache
def overloads(name: str) -> tuple[Overload, ...]:
    """The overloads of ATen's ``name`` a formula can call: functional (no out=, not in place),
    one Tensor returned, every argument without a default of a kind a formula has."""
    found = []
    for text in _schemas().get(name, ()):
        try:
            schema = FunctionSchema.parse(text)
        except (SchemaSyntaxError, ValueError):
            continue  # a type this generator's schema parser does not know: not callable here
        if schema.arguments.out or schema.name.name.inplace or len(schema.returns) != 1:
            continue
        if schema.returns[0].type != BaseType(BaseTy.Tensor) or schema.returns[0].is_write:
            continue
        params, required = [], 0
        for a in schema.arguments.all:
            kind = _param(a.type)
            if kind is None:
                break  # a call passes the arguments before it; those after keep their defaults
            params.append(kind)
            required += a.default is None
        if any(a.default is None for a in schema.arguments.all[len(params) :]):
            continue  # an argument no formula value fits, which a call must pass
        doc = f"ATen's {text}"
        cpp = f"at::{name}_symint" if _takes_symint(schema) else f"at::{name}"
        found.append(
            Overload(
                text, Function(name, tuple(params), "tensor", cpp, doc, header=f"ATen/ops/{name}.h"), required
            )
        )
    return tuple(found)


def resolve(name: str, kinds: list[str], fits: Callable[[str, str], bool], table: list[str]) -> Function:
    """The first overload of ATen's ``name`` whose parameters arguments of these kinds fit, in
    native_functions.yaml's order (C++ then picks the same one by type). Raises CallError."""
    candidates = overloads(name)
    if not candidates:
        close = difflib.get_close_matches(name, table, n=3)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        where = "nor ATen's operators" if available() else "and ATen's schemas are not at hand (torchgen)"
        raise CallError(
            f"unknown function {name}(): not in the table of docs/autograd.md, {where}",
            f"{hint}call a function of that table or an ATen operator (torch.ops.aten)",
        )
    for o in candidates:
        params = o.function.params
        if o.required <= len(kinds) <= len(params) and all(fits(k, p) for k, p in zip(kinds, params)):
            return o.function
    raise CallError(
        f"ATen's {name}() has no overload for arguments ({', '.join(kinds)})",
        "pass what one of these takes: " + "; ".join(o.schema for o in candidates),
    )


class CallError(ValueError):
    def __init__(self, problem: str, fix: str):
        super().__init__(problem)
        self.problem, self.fix = problem, fix
