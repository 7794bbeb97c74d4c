"""``precise``: a formula printed as Python (a generated backward op's reference) run in double
precision, with the ``pw`` functions of structgen/formula.py."""

from __future__ import annotations

import functools

import torch

from structgen.formula import pw  # noqa: F401 - the references' pw.<name>


def _layout(tensors: list[torch.Tensor]) -> torch.Tensor:
    """A meta tensor of the shape and strides a pointwise kernel over ``tensors`` (in argument
    order) gives its output: torch's ops of as many inputs decide them the same way."""
    metas = [torch.empty_strided(t.shape, t.stride(), dtype=torch.float32, device="meta") for t in tensors]
    return {1: torch.neg, 2: torch.add, 3: torch.addcmul}[len(metas)](*metas)


_OPMATH = {torch.float16: torch.float32, torch.bfloat16: torch.float32}


def precise(fn, floating: tuple[str, ...], *, in_opmath: bool = False):
    """``fn`` (a formula over named arguments) as the reference of a kernel that computes it in
    one pass, as a TensorIterator kernel does: the inputs in ``floating`` cast to their promoted
    dtype (the op's dtype rule), then the formula in float64 (complex128), rounded once into an
    output of the shape and strides of all its tensors broadcast. Like the generated op, it
    refuses a tensor in ``floating`` that is not floating or complex. Its ``in_opmath`` twin
    computes in the promoted dtype's opmath type instead (float for float16 and bfloat16), as
    torch would: what the formula itself gives in that precision, which the hostile check
    allows a kernel to be as far off as (``1 - r * r`` near r = 1 loses digits in any float)."""
    names = fn.__code__.co_varnames[: fn.__code__.co_argcount]

    def reference(*args, **kwargs):
        named = dict(zip(names, args, strict=False)) | kwargs
        for name in floating:
            x = named[name]
            if not (x.is_floating_point() or x.is_complex()):
                raise RuntimeError(f"'{name}' has dtype {x.dtype}: the kernel takes floating or complex")
        dtype = functools.reduce(torch.add, [named[n].to("meta") for n in floating]).dtype
        if in_opmath:
            wide = _OPMATH.get(dtype, dtype)
        else:
            wide = torch.complex128 if dtype.is_complex else torch.float64
        values = fn(**{k: v.to(dtype).to(wide) if k in floating else v for k, v in named.items()})
        layout = _layout([named[n] for n in names if isinstance(named[n], torch.Tensor)])
        out = torch.empty_strided(
            layout.shape, layout.stride(), dtype=dtype, device=named[floating[0]].device
        )
        return out.copy_(values)

    if not in_opmath:
        reference.in_opmath = precise(fn, floating, in_opmath=True)
    return reference
