"""What samples are made of: a call's arguments (Sample), random values of a domain, memory
layouts, and arguments placed as the functional takes them."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

from structgen.codegen.dest.conformance_suite import SuiteSpec

# A random op's calls (tags: [nondeterministic_seeded]) are compared from one generator state:
# while seeded_calls() is on, Sample.call seeds torch's generators before each call, so the op,
# its other overloads and its reference draw the same bits (torch's OpInfo tests wrap such ops in
# a seed setter alike).
_SEEDED = contextvars.ContextVar("seeded", default=False)
CALL_SEED = 20261207


@contextlib.contextmanager
def seeded_calls(on: bool = True) -> Iterator[None]:
    token = _SEEDED.set(on)
    try:
        yield
    finally:
        _SEEDED.reset(token)


def seed_call() -> None:
    """Seeds torch's generators where the calls of the op under test are seeded."""
    if _SEEDED.get():
        torch.manual_seed(CALL_SEED)


@dataclass
class Sample:
    args: list[Any]
    kwargs: dict[str, Any]
    desc: str

    def map_tensors(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> Sample:
        def f(x):
            if isinstance(x, list | tuple) and x and all(isinstance(e, torch.Tensor) for e in x):
                return [fn(e) for e in x]  # a Tensor[] argument
            return fn(x) if isinstance(x, torch.Tensor) else x

        return Sample([f(a) for a in self.args], {k: f(v) for k, v in self.kwargs.items()}, self.desc)

    def on_meta(self) -> Sample:
        """The same call on meta tensors, strides kept (to("meta") copies an expanded tensor contiguous)."""
        return self.map_tensors(
            lambda t: torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta")
        )

    def clone(self) -> Sample:
        return self.map_tensors(lambda t: t.clone())

    def call(self, fn, **extra):
        seed_call()
        return fn(*self.args, **self.kwargs, **extra)

    @property
    def first_tensor(self) -> torch.Tensor:
        """The first tensor argument (the first element of a leading Tensor[] argument; a
        leading number, as pow(2, x)'s, is not one)."""
        first = next(a for a in self.args if isinstance(a, torch.Tensor | list | tuple))
        return first[0] if isinstance(first, list | tuple) else first

    def __repr__(self) -> str:
        def show(x):
            if isinstance(x, torch.Tensor):
                return f"Tensor(shape={tuple(x.shape)}, stride={x.stride()}, dtype={x.dtype})"
            return repr(x)

        args = ", ".join([show(a) for a in self.args] + [f"{k}={show(v)}" for k, v in self.kwargs.items()])
        return f"[{self.desc}] ({args})"


def dtype_of(name: str) -> torch.dtype:
    return getattr(torch, name)


def is_integral(dtype: torch.dtype) -> bool:
    return not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool)


def values(shape, dtype, device, domain, gen) -> torch.Tensor:
    """Random values of ``domain`` (any, positive, nonzero, unit)."""
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool().to(device)
    if dtype.is_floating_point or dtype.is_complex:
        lo, hi = {"any": (-5, 5), "positive": (0.1, 5), "nonzero": (0.5, 5), "unit": (-1, 1)}[domain]
        real_dtype = torch.float64
        x = torch.rand(shape, generator=gen, dtype=real_dtype) * (hi - lo) + lo
        if domain == "nonzero":
            x = x * (torch.randint(0, 2, shape, generator=gen) * 2 - 1)
        if dtype.is_complex:
            x = torch.complex(x, torch.rand(shape, generator=gen, dtype=real_dtype) * (hi - lo) + lo)
        return x.to(dtype).to(device)
    info = torch.iinfo(dtype)
    lo, hi = {"any": (-9, 10), "positive": (1, 10), "nonzero": (1, 10), "unit": (-1, 2)}[domain]
    lo, hi = max(lo, info.min), min(hi, info.max)
    x = torch.randint(lo, hi, shape, generator=gen, dtype=torch.int64)
    if domain == "nonzero" and info.min < 0:
        x = x * (torch.randint(0, 2, shape, generator=gen) * 2 - 1)
    return x.to(dtype).to(device)


def laid_out(x: torch.Tensor, layout: str) -> torch.Tensor:
    """The same values in another memory layout."""
    if layout == "contiguous" or x.dim() == 0:
        return x
    if layout == "transposed":
        return x.permute(*reversed(range(x.dim()))).contiguous().permute(*reversed(range(x.dim())))
    if layout == "strided":  # every other element of a buffer twice as long in the last dim
        buf = torch.empty((*x.shape[:-1], x.shape[-1] * 2), dtype=x.dtype, device=x.device)
        view = buf[..., ::2]
        view.copy_(x)
        return view
    if layout == "expanded":  # size-1 first dim broadcast
        return x[:1].expand(x.shape) if x.shape[0] > 0 else x
    if layout == "channels_last":
        return x.contiguous(memory_format=torch.channels_last)
    raise ValueError(layout)


def call_args(spec: SuiteSpec, named: dict[str, Any], desc: str) -> Sample:
    """A sample from argument values by name, positional and keyword-only as the functional takes them."""
    args = [named[n] for n in spec.positional if n in named]
    kwargs = {n: named[n] for n in spec.kwarg_only if n in named}
    return Sample(args, kwargs, desc)
