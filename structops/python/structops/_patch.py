"""structops.patch(): an unmodified model's torch calls run on structops' kernels.

One table, ROUTES, says which torch function each structops function stands for: the
torch.nn.functional functions structops.nn.functional mirrors, and the torch functions and
Tensor methods whose names the generated layer shares (their parity with torch is what
tests/runtime/test_parity.py holds). A TorchFunctionMode sends each such call there, so modules,
methods and operators (x @ w, x + 1) are routed without editing the model, eagerly and under
torch.compile (Dynamo traces the mode). A call the route cannot take (a tensor that is not a
strided CPU or CUDA one) stays torch's.
"""

from __future__ import annotations

import contextlib
import functools
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves

import structops
from structops.nn import functional

# Generated functions that are torch's under the same name, with torch's signature and results
# (torch.<name>, and the Tensor method of that name where there is one). Not torch.embedding,
# whose padding_idx, scale_grad_by_freq and sparse only structops.nn.functional.embedding takes.
TORCH_NAMES = (
    "abs", "add", "addcmul", "addmm", "all", "amax", "amin", "any", "argmax", "argmin", "baddbmm",
    "batch_norm", "bitwise_and", "bmm", "cat", "cdist", "clamp", "clamp_max", "clamp_min", "cos",
    "cumsum", "div", "eq", "erf", "exp", "gather", "ge", "gt", "index_select",
    "layer_norm", "le", "lerp", "log", "log1p", "log_softmax", "logaddexp", "logical_and", "logical_not",
    "logical_or", "logsumexp", "lt", "masked_select", "matmul", "maximum", "mean", "minimum", "mm",
    "mul", "ne", "neg", "pow", "prod", "relu", "rms_norm", "rsqrt", "sigmoid", "sin", "softmax",
    "split_with_sizes_copy", "sqrt", "std", "sub", "sum", "take", "tanh", "var", "where",
)  # fmt: skip


def _reversed(op: Callable) -> Callable:
    """A reflected operator (1 - x: Tensor.__rsub__(x, 1)): the op with its operands swapped."""
    return lambda self, other: op(other, self)


@functools.cache
def routes() -> dict[Callable, tuple[str, Callable]]:
    """Each torch callable that structops stands for: (the name a report gives it, structops')."""
    table: dict[Callable, tuple[str, Callable]] = {}
    for name in functional.__all__:
        table[getattr(torch.nn.functional, name)] = (f"F.{name}", getattr(functional, name))
    for name in TORCH_NAMES:
        ours = getattr(structops, name)
        if hasattr(torch, name):
            table[getattr(torch, name)] = (f"torch.{name}", ours)
        for method in (name, name + "_") if name not in _NOT_METHODS else ():
            if hasattr(torch.Tensor, method) and hasattr(structops, method):
                table[getattr(torch.Tensor, method)] = (f"Tensor.{method}", getattr(structops, method))
    table[torch.Tensor.__rsub__] = ("Tensor.__rsub__", _reversed(structops.sub))
    table[torch.Tensor.__rtruediv__] = ("Tensor.__rtruediv__", _reversed(structops.div))
    table[torch.Tensor.__rpow__] = ("Tensor.__rpow__", _reversed(structops.pow))
    for dunder, name in _COMPARISONS.items():
        table[getattr(torch.Tensor, dunder)] = (f"Tensor.{dunder}", getattr(structops, name))
    return table


# x.where(condition, y) is where(condition, x, y): its self is not the function's first argument
_NOT_METHODS = {"where"}
# x == 0 and the like: Tensor's comparison operators (their other operand a tensor or a number;
# x == None stays torch's, which answers False)
_COMPARISONS = {
    "__eq__": "eq",
    "__ne__": "ne",
    "__lt__": "lt",
    "__le__": "le",
    "__gt__": "gt",
    "__ge__": "ge",
}
_COMPARISON_METHODS = frozenset(getattr(torch.Tensor, dunder) for dunder in _COMPARISONS)
_NUMBER = (bool, int, float, complex, torch.Tensor)


@dataclass
class Routed:
    """What a patched run called: each torch function by name, as run by structops or by torch
    (a compiled function's calls are counted once, when Dynamo traces it, and only those that
    structops ran: what stays torch's is counted in eager calls)."""

    structops: Counter[str] = field(default_factory=Counter)
    torch: Counter[str] = field(default_factory=Counter)

    @property
    def share(self) -> float:
        """The share of the calls that structops ran."""
        ours, total = sum(self.structops.values()), sum(self.structops.values()) + sum(self.torch.values())
        return ours / total if total else 0.0


def _takes(func: Callable, args: tuple, kwargs: dict) -> bool:
    """Whether structops' kernels take these arguments: every tensor a strided CPU or CUDA one
    (a comparison's other operand a tensor or a number; where's three arguments)."""
    if func in _COMPARISON_METHODS and not (len(args) == 2 and isinstance(args[1], _NUMBER)):
        return False
    if func is torch.where and len(args) + len(kwargs) != 3:  # where(condition): its nonzero indices
        return False
    return all(
        t.layout == torch.strided and t.device.type in ("cpu", "cuda")
        for t in tree_leaves((args, kwargs))
        if isinstance(t, torch.Tensor)
    )


class _Router(TorchFunctionMode):
    def __init__(self, routed: Routed) -> None:
        super().__init__()
        self.routed, self.routes = routed, routes()  # a dict Dynamo reads, not a cached call

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        route = self.routes.get(func)
        if route is not None and _takes(func, args, kwargs):
            self.routed.structops[route[0]] += 1
            return route[1](*args, **kwargs)
        # Not while Dynamo traces: a method's __name__ as a dict key is a graph break in every call
        # that stays torch's (a compiled Llama step fell back to eager, 2 s instead of 2 ms).
        if not torch.compiler.is_compiling():
            self.routed.torch[getattr(func, "__name__", repr(func))] += 1
        return func(*args, **kwargs)


@contextlib.contextmanager
def patch() -> Iterator[Routed]:
    """Within the block, every torch call structops mirrors runs on structops' kernels::

    with structops.patch() as routed:
        loss = model(x).sum()  # an unmodified torch model
        loss.backward()
    print(routed.share, routed.torch.most_common(5))
    """
    routed = Routed()
    with _Router(routed):
        yield routed
