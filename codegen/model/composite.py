"""An op's ``composite:`` key as the model holds it: a call of another overload, its values
(arguments, constants, int lists, a choice by a bool) and, once bound, the target's arguments each
with its value. Data only: composite.py parses and binds it; dest/composites.py prints the call.
"""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen.model.schema import Argument, OperatorName


@dataclass(frozen=True)
class Name:
    name: str


@dataclass(frozen=True)
class Const:
    value: None | bool | int


@dataclass(frozen=True)
class IntList:
    items: tuple[Name | Const, ...]


@dataclass(frozen=True)
class Cond:
    test: str  # a bool argument
    then: Const
    otherwise: Const


@dataclass(frozen=True)
class Promoted:
    number: str  # a Scalar argument, as a tensor of the dtype torch gives it and `other`
    other: str  # a Scalar argument


@dataclass(frozen=True)
class Transposed:
    name: str  # a Tensor argument, its last two dims swapped (mT(name)): a view


Value = Name | Const | IntList | Cond | Promoted | Transposed


@dataclass(frozen=True)
class Composite:
    target: OperatorName
    positional: tuple[Value, ...]
    keywords: tuple[tuple[str, Value], ...]
    # After bind(): the target's arguments, in its schema order, each with its value.
    bound: tuple[tuple[Argument, Value], ...] = ()
    # The optional arguments this call needs given (not None); they pass as their inner type.
    given: tuple[str, ...] = ()
