"""Composite overloads (``composite:``): an overload that is a call of another overload.

    - func: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
      composite: "sum.dim_IntList(self, None, False, dtype=dtype)"

is torch's sum(x) as a call of sum.dim_IntList. It is registered as CompositeImplicitAutograd,
as torch registers such overloads: the dispatcher runs the call, so meta tensors, autograd,
torch.compile, vmap and DTensor all see the target op, whose support is generated already.

The call is written in Python syntax and holds only the overload's own argument names, None,
True, False, int literals, lists of names and ints (``[dim]`` for an ``int[1]`` target),
``A if name else B`` of literals (var's ``unbiased`` as a correction), ``mT(name)`` (a Tensor
argument with its last two dims swapped, a view: linear's meta.vmap_as), and ``promoted(a, b)``
for a Tensor parameter: the Scalar ``a`` as a 0-dim CPU tensor of the dtype torch gives two
numbers ``a`` and ``b`` (where.Scalar: ``where(c, 1, 2.5)`` is float32). parse() reads it;
bind() checks it against the target's schema, filling omitted arguments with their defaults.

An overload whose optional arguments choose the call is a list of cases, the first whose
``given`` arguments are all given (not None) runs, and they pass as their inner type:

    - func: clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor
      composite:
      - {given: [min, max], call: "_clamp_tensors(self, min, max)"}
      - {given: [min], call: "clamp_min.Tensor(self, min)"}
      - {given: [max], call: "clamp_max.Tensor(self, max)"}

With none given, the call raises "clamp: at least one of 'min' or 'max' must not be None"
(missing_message). bind_cases() checks that a case leaves out only arguments an earlier case
takes whenever they are given, so no given argument is dropped.
"""

from __future__ import annotations

import ast
import dataclasses

from structgen.codegen.errors import Problem
from structgen.codegen.model.composite import (
    Composite,
    Cond,
    Const,
    IntList,
    Name,
    Promoted,
    Transposed,
    Value,
)
from structgen.codegen.model.schema import (
    Argument,
    BaseTy,
    BaseType,
    FunctionSchema,
    ListType,
    OperatorName,
    OptionalType,
    Type,
)


class CompositeError(Problem):
    """A composite call that does not check."""


_FIX = "write a call such as 'sum.dim_IntList(self, None, False, dtype=dtype)'"


def _const(node: ast.expr) -> Const:
    if isinstance(node, ast.Constant) and (node.value is None or type(node.value) in (bool, int)):
        return Const(node.value)
    negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    if negative and isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
        return Const(-node.operand.value)
    raise CompositeError(f"'{ast.unparse(node)}' is not None, True, False or an int", _FIX)


def _value(node: ast.expr) -> Value:
    if isinstance(node, ast.Name):
        return Name(node.id)
    if isinstance(node, ast.List):
        return IntList(tuple(Name(e.id) if isinstance(e, ast.Name) else _const(e) for e in node.elts))
    if isinstance(node, ast.Call) and ast.unparse(node.func) == "promoted":
        if len(node.args) != 2 or node.keywords or not all(isinstance(a, ast.Name) for a in node.args):
            raise CompositeError(
                f"'{ast.unparse(node)}' must name two Scalar arguments", "write promoted(self, other)"
            )
        return Promoted(node.args[0].id, node.args[1].id)
    if isinstance(node, ast.Call) and ast.unparse(node.func) == "mT":
        if len(node.args) != 1 or node.keywords or not isinstance(node.args[0], ast.Name):
            raise CompositeError(f"'{ast.unparse(node)}' must name one Tensor argument", "write mT(weight)")
        return Transposed(node.args[0].id)
    if isinstance(node, ast.IfExp):
        if not isinstance(node.test, ast.Name):
            raise CompositeError(f"the condition of '{ast.unparse(node)}' must be an argument name", _FIX)
        return Cond(node.test.id, _const(node.body), _const(node.orelse))
    return _const(node)


def parse(text: str) -> Composite:
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise CompositeError(f"'{text}' is not a call: {e.msg}", _FIX) from None
    if not isinstance(tree, ast.Call):
        raise CompositeError(f"'{text}' is not a call", _FIX)
    func = ast.unparse(tree.func)
    try:
        target = OperatorName.parse(func)
    except ValueError:
        raise CompositeError(
            f"'{func}' is not an operator name", "name an overload, e.g. sum.dim_IntList"
        ) from None
    keywords = []
    for k in tree.keywords:
        if k.arg is None:
            raise CompositeError("'**' is not supported in a composite call", _FIX)
        keywords.append((k.arg, _value(k.value)))
    return Composite(target, tuple(_value(a) for a in tree.args), tuple(keywords))


def _names(v: Value) -> list[str]:
    if isinstance(v, Name):
        return [v.name]
    if isinstance(v, IntList):
        return [i.name for i in v.items if isinstance(i, Name)]
    if isinstance(v, Cond):
        return [v.test]
    if isinstance(v, Promoted):
        return [v.number, v.other]
    if isinstance(v, Transposed):
        return [v.name]
    return []


def _default(a: Argument) -> Value:
    text = a.default
    if text is None:
        raise CompositeError(f"the call does not pass '{a.name}', which has no default", f"pass '{a.name}'")
    try:
        return _value(ast.parse(text, mode="eval").body)
    except (CompositeError, SyntaxError):
        raise CompositeError(
            f"'{a.name}' has the default '{text}', which a composite cannot spell", f"pass '{a.name}'"
        ) from None


def parse_cases(raw: object) -> tuple[Composite, ...]:
    """The `composite:` value: a call, or a list of {given: [names], call: text} cases."""
    if isinstance(raw, str):
        return (parse(raw),)
    fix = "write a call, or cases such as [{given: [min], call: 'clamp_min.Tensor(self, min)'}]"
    if not isinstance(raw, list) or not raw:
        raise CompositeError("'composite' must be a call or a list of cases", fix)
    cases = []
    for case in raw:
        if not isinstance(case, dict) or set(case) - {"given", "call"} or type(case.get("call")) is not str:
            raise CompositeError(f"the case '{case}' is not {{given: [names], call: text}}", fix)
        given = case.get("given", [])
        if not isinstance(given, list) or not all(isinstance(g, str) for g in given):
            raise CompositeError(f"the case '{case['call']}' must give 'given' as a list of names", fix)
        cases.append(dataclasses.replace(parse(case["call"]), given=tuple(given)))
    return tuple(cases)


def _fits(v: Value, source: dict[str, Argument], t: Type) -> bool:
    inner = t.elem if isinstance(t, OptionalType) else t
    if isinstance(v, Name):
        s = source[v.name].type
        return s == t or s == inner
    if isinstance(v, Const):
        if v.value is None:
            return isinstance(t, OptionalType)
        if isinstance(v.value, bool):
            return inner == BaseType(BaseTy.bool)
        return inner in (BaseType(BaseTy.int), BaseType(BaseTy.Scalar), BaseType(BaseTy.SymInt))
    if isinstance(v, IntList):
        int_ = BaseType(BaseTy.int)
        return (
            isinstance(inner, ListType)
            and inner.elem == int_
            and all(isinstance(i, Const) or source[i.name].type == int_ for i in v.items)
        )
    if isinstance(v, Transposed):  # of a Tensor (an optional one only where the case gives it)
        tensor = BaseType(BaseTy.Tensor)
        return inner == tensor and source[v.name].type == tensor
    if isinstance(v, Promoted):
        scalar = BaseType(BaseTy.Scalar)
        return inner == BaseType(BaseTy.Tensor) and source[v.number].type == source[v.other].type == scalar
    return (
        source[v.test].type == BaseType(BaseTy.bool)
        and _fits(v.then, source, t)
        and _fits(v.otherwise, source, t)
    )


def bind(
    composite: Composite,
    schema: FunctionSchema,
    target: FunctionSchema,
    unused_ok: frozenset[str] = frozenset(),
) -> Composite:
    """The call checked against ``target``: every value fits its parameter, every name is an
    argument of ``schema``, written arguments map to written ones, every argument is passed on
    but the ``unused_ok`` ones (None whenever this case runs)."""
    source = {a.name: a for a in schema.arguments.all}
    for name in composite.given:
        a = source.get(name)
        if a is None or not isinstance(a.type, OptionalType):
            raise CompositeError(
                f"given: '{name}' is not an optional argument of '{schema.name}'",
                "name optional arguments the call needs given",
            )
        source[name] = dataclasses.replace(a, type=a.type.elem)
    params = target.arguments.all
    if len(composite.positional) > len(target.arguments.positional):
        raise CompositeError(
            f"'{target.name}' takes {len(target.arguments.positional)} positional arguments, the call passes"
            f" {len(composite.positional)}",
            f"match '{target}'",
        )
    given: dict[str, Value] = dict(zip((a.name for a in params), composite.positional))
    for name, v in composite.keywords:
        if name not in {a.name for a in params}:
            raise CompositeError(f"'{target.name}' has no argument '{name}'", f"match '{target}'")
        if name in given:
            raise CompositeError(f"'{name}' is passed twice", "pass it once")
        given[name] = v
    bound = []
    for a in params:
        v = given[a.name] if a.name in given else _default(a)
        for n in _names(v):
            if n not in source:
                raise CompositeError(
                    f"'{n}' is not an argument of '{schema.name}'", f"use one of: {', '.join(source)}"
                )
        if not _fits(v, source, a.type):
            raise CompositeError(f"the value for '{a.name}' ({a.type}) does not fit it", f"match '{target}'")
        if a.is_write != (isinstance(v, Name) and source[v.name].is_write):
            raise CompositeError(
                f"'{a.name}' is {'' if a.is_write else 'not '}written by '{target.name}'",
                "pass written arguments to written arguments",
            )
        bound.append((a, v))
    unused = [
        a.name
        for a in schema.arguments.all
        if a.name not in unused_ok and not any(a.name in _names(v) for _, v in bound)
    ]
    if unused and composite.given and isinstance(source[unused[0]].type, OptionalType):
        needed = ", ".join((*composite.given, unused[0]))
        raise CompositeError(
            f"the case '{composite.target}' does not use '{unused[0]}', which may be given when it runs",
            f"put a case with given: [{needed}] before it",
        )
    if unused:
        raise CompositeError(f"the call does not use '{unused[0]}'", "pass every argument of the overload on")
    if len(schema.returns) != len(target.returns):
        raise CompositeError(
            f"'{target.name}' returns {len(target.returns)} values", "return what the target returns"
        )
    return dataclasses.replace(composite, bound=tuple(bound))


def bind_cases(
    cases: tuple[Composite, ...], schema: FunctionSchema, targets: tuple[FunctionSchema, ...]
) -> tuple[Composite, ...]:
    """Each case bound to its target. A case may leave out an optional argument only where an
    earlier case runs whenever that argument is given too (clamp_min.Tensor(self, min) after
    the case of min and max), and only the last case may need nothing given."""
    bound = []
    for i, (case, target) in enumerate(zip(cases, targets)):
        if not case.given and i != len(cases) - 1:
            raise CompositeError(
                f"the case '{case.target}' needs nothing given, so the cases after it never run",
                "make it the last case",
            )
        optional = {a.name for a in schema.arguments.all if isinstance(a.type, OptionalType)}
        covered = frozenset(
            name
            for name in optional - set(case.given)
            if any(set(earlier.given) <= set(case.given) | {name} for earlier in cases[:i])
        )
        bound.append(bind(case, schema, target, covered))
    return tuple(bound)


def missing_message(name: str, cases: tuple[Composite, ...]) -> str | None:
    """What a call none of whose cases applies raises (None: the last case always applies)."""
    if not cases[-1].given:
        return None
    needs = [c.given for c in cases]
    minimal = [
        n for i, n in enumerate(needs) if n not in needs[:i] and not any(set(o) < set(n) for o in needs)
    ]
    if all(len(m) == 1 for m in minimal) and len(minimal) > 1:
        return f"{name}: at least one of {' or '.join(repr(m[0]) for m in minimal)} must not be None"
    return f"{name}: " + " or ".join(" and ".join(repr(g) for g in m) for m in minimal) + " must be given"
