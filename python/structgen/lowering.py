"""Inductor compiles a formula op as its formula, so it fuses with its neighbours (docs/compile.md).

A pointwise op's formula is known symbolically, so a generated ``_lowerings`` module writes each
functional formula overload (and each generated backward op) as the formula over torch ops:
the promoted tensors brought to torch's elementwise compute dtype (opmath: float for float16),
the formula, the result cast to the op's dtype once, as the op's kernel does. Those functions go
into Inductor's decomposition table when Inductor is imported, so ``torch.compile`` traces the
torch ops in their place and generates one kernel for a chain; an op not in the table (a
reduction, an index op) stays a call of the op (an extern kernel). Eager calls never see them.

A function returns ``NotImplemented`` (the op stays a call: an extern kernel registered for
each op) where Inductor's code would differ from the kernel: an integer division, which the
kernel checks for zero and Inductor's code does not.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Callable

import torch
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

from structgen import formula
from structgen._after_import import when_imported

_KINDS = {
    "DEFAULT": ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT,
    "NO_OPMATH": ELEMENTWISE_TYPE_PROMOTION_KIND.NO_OPMATH,
    "INT_TO_FLOAT": ELEMENTWISE_TYPE_PROMOTION_KIND.INT_TO_FLOAT,
    "ALWAYS_BOOL": ELEMENTWISE_TYPE_PROMOTION_KIND.ALWAYS_BOOL,
    "BOOL_TO_LONG": ELEMENTWISE_TYPE_PROMOTION_KIND.BOOL_TO_LONG,
}
# Every package's functions, by OpOverload: what register() puts into Inductor's table.
_LOWERINGS: dict = {}


def dtypes(kind: str, *promoted) -> tuple[torch.dtype, torch.dtype]:
    """(compute, result): what a TensorIterator kernel over ``promoted`` computes in and writes,
    by torch's elementwise promotion of ``kind``."""
    return elementwise_dtypes(*promoted, type_promotion_kind=_KINDS[kind])


def functions(compute: torch.dtype, device) -> object:
    """The formula's ``pw`` functions, its numbers in ``compute``'s precision on ``device``."""
    return formula.namespace(compute.to_real() if compute.is_complex else compute, device)


def integral(dtype: torch.dtype) -> bool:
    return not (dtype.is_floating_point or dtype.is_complex)


def register(table_of: Callable[[], dict]) -> None:
    """The table ``table_of()`` makes (OpOverload -> function) into Inductor's decomposition
    tables, once Inductor is imported: importing it here would cost seconds, and even resolving
    the OpOverloads would add to every import of the package."""
    lowerings = functools.cache(table_of)

    def add() -> None:
        _LOWERINGS.update(lowerings())
        try:
            for table in _tables():
                table.update(lowerings())
        except (AttributeError, ImportError, TypeError) as e:  # Inductor moved (torch > 2.13): calls
            _withdraw(lowerings(), e)

    def fall_back() -> None:
        """Each op's call (an extern kernel) where its function returns NotImplemented: Inductor
        makes an op without a lowering such a call itself, but refuses to for an op that has a
        decomposition ("both a fallback and a decomp for same op")."""
        try:
            from torch._inductor import lowering

            for op in lowerings():
                lowering.make_fallback(op, warn=False, override_decomp=True)
        except (AttributeError, ImportError, TypeError, AssertionError) as e:
            _withdraw(lowerings(), e)

    when_imported("torch._inductor.decomposition", add)
    when_imported("torch._inductor.lowering", fall_back)


def _withdraw(lowerings: dict, error: Exception) -> None:
    """The ops back to calls of their kernels, with a warning, where Inductor's tables are not
    what this module expects: compiled code stays correct, only unfused."""
    warnings.warn(f"structgen: formula ops stay extern kernels under Inductor ({error!r})", stacklevel=2)
    with contextlib.suppress(AttributeError, ImportError, TypeError):
        for table in _tables():
            for op in lowerings:
                table.pop(op, None)


@contextlib.contextmanager
def as_extern_kernels(*ops):
    """Inside: Inductor calls ``ops`` (every lowered op when none is named) as extern kernels,
    the op's own kernel, instead of generating code from their formulas; the caches of compiled
    graphs are off."""
    import torch._functorch.config
    import torch._inductor.config

    tables = _tables()
    taken = [{op: t.pop(op) for op in (ops or tuple(_LOWERINGS)) if op in t} for t in tables]
    try:
        # Those caches key a compiled graph by the traced graph, not by the decomposition table: a
        # graph compiled with the formulas before would come back from them. (Not
        # force_disable_caches: it also turns off Dynamo's profile-guided shapes, with a warning.)
        with (
            torch._functorch.config.patch(enable_autograd_cache=False),
            torch._inductor.config.patch(fx_graph_cache=False),
        ):
            yield
    finally:
        for table, ours in zip(tables, taken, strict=True):
            table.update(ours)


def _tables() -> list[dict]:
    """Inductor's decomposition tables: its own, and the copy it compiles with (a cached copy
    with its random ops' decompositions, made on the first call)."""
    from torch._inductor import decomposition

    tables = [decomposition.decompositions, decomposition.select_decomp_table()]
    return [t for i, t in enumerate(tables) if all(t is not u for u in tables[:i])]
