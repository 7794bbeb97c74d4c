"""Kernels with planted bugs, registered from Python under torch.ops.structops_mutants.

Each op is torch.add (flip, log_softmax, mul) with exactly one defect; `good` (`flip_good`,
`log_softmax_good`, `mul_good`) has none and must pass every check.
"""

import torch

NAMESPACE = "structops_mutants"
_lib = None


def _add(self, other, alpha):
    return torch.add(self, other, alpha=alpha)


def _off_by_one(self, other, alpha):
    result = torch.add(self, other, alpha=alpha)
    if result.numel():
        result.view(-1)[-1] += 1 if result.dtype != torch.bool else 0  # planted
    return result


def _bad_broadcast_meta(self, other, alpha):
    # Planted: ignores broadcasting, the result takes self's shape.
    dtype = torch.result_type(self, other)
    return torch.empty(self.shape, dtype=dtype, device="meta")


def _out_kernel(functional, resize=True):
    def out_kernel(self, other, *, alpha=1, out):
        if not resize and out.shape != torch.broadcast_shapes(self.shape, other.shape):
            return out  # planted: ignores resize (and writes nothing)
        # torch's own out= handling: resize (with its warning), dtype, overlap, layout.
        torch.add(self, other, alpha=alpha, out=out)
        if functional is _off_by_one and out.numel() and out.dtype != torch.bool:
            out.view(-1)[-1] += 1
        return out

    return out_kernel


def _inplace_kernel(functional, check_dtype=True):
    def inplace_kernel(self, other, *, alpha=1):
        if check_dtype:
            return self.add_(other, alpha=alpha)
        result = functional(self, other, alpha)
        if result.shape != self.shape:
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(result.shape)}"
            )
        return self.copy_(result)  # planted: no castability check, silently truncates

    return inplace_kernel


def _flip(self):
    return torch.flip(self, [-1])


def _flip_floats_only(self):
    if not self.dtype.is_floating_point:  # planted: a dtype the kernel forgot
        raise NotImplementedError(f"flip_dtype_gap: no kernel for {self.dtype}")
    return _flip(self)


def _flip_wrong_at_rank4(self):
    return torch.flip(self, [0 if self.dim() >= 4 else -1])  # planted: a bug only rank >= 4 shows


def _flip_out(kernel):
    def out_kernel(self, *, out):
        result = kernel(self)
        if out.shape != result.shape:  # resized to the meta layout, as structops' out= wrappers do
            out.resize_(result.shape).as_strided_(result.shape, result.stride())
        return out.copy_(result)

    return out_kernel


FLIPS = {"flip_good": _flip, "flip_dtype_gap": _flip_floats_only, "flip_rank4": _flip_wrong_at_rank4}


# Right on benign samples, wrong on the values models produce (the hostile check's), each with a
# correct twin.
def _log_softmax_unshifted(self, dim):
    # planted: x - (max + log(sum exp(x - max))): a max of 1e8 (or a masked row's -1e9) swallows
    # the log term, where (x - max) - log(sum) keeps it
    top = self.amax(dim, keepdim=True)
    return (self - (top + torch.log(torch.exp(self - top).sum(dim, keepdim=True)))).contiguous()


def _mul_rounded(self, other):
    # planted: a 0-dim operand (a Python number's wrapped tensor) rounded to self's half precision
    # before the product: 1e5 is inf in float16, 1e-8 is 0
    if other.dim() == 0 and self.dtype in (torch.float16, torch.bfloat16):
        other = other.to(self.dtype)
    return torch.mul(self, other)


def _mul_meta(self, other):
    shape = torch.broadcast_shapes(self.shape, other.shape)
    return torch.empty(shape, dtype=torch.result_type(self, other), device="meta")


HOSTILE = {  # name -> (arguments, kernel, meta function)
    "log_softmax_good": ("Tensor self, int dim", torch.log_softmax, torch.log_softmax),
    "log_softmax_unshifted": ("Tensor self, int dim", _log_softmax_unshifted, torch.log_softmax),
    "mul_good": ("Tensor self, Tensor other", torch.mul, _mul_meta),
    "mul_rounded": ("Tensor self, Tensor other", _mul_rounded, _mul_meta),
}


def _into_out(kernel):
    def out_kernel(*args, out):
        result = kernel(*args)
        return out.resize_(result.shape).copy_(result)

    return out_kernel


def register() -> None:
    global _lib
    if _lib is not None:
        return
    _lib = torch.library.Library(NAMESPACE, "DEF")
    ops = {
        "good": (_add, None, _out_kernel(_add), _inplace_kernel(_add)),
        "bad_broadcast": (_add, _bad_broadcast_meta, _out_kernel(_add), None),
        "off_by_one": (_off_by_one, None, _out_kernel(_off_by_one), None),
        "no_dtype_check": (_add, None, _out_kernel(_add), _inplace_kernel(_add, check_dtype=False)),
        "no_resize": (_add, None, _out_kernel(_add, resize=False), None),
    }
    for name, (functional, meta, out_kernel, inplace_kernel) in ops.items():
        _lib.define(f"{name}.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
        _lib.define(f"{name}.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
        _lib.impl(f"{name}.Tensor", lambda s, o, *, alpha=1, f=functional: f(s, o, alpha), "CPU")
        _lib.impl(f"{name}.Tensor", lambda s, o, *, alpha=1, f=meta or _add: f(s, o, alpha), "Meta")
        _lib.impl(f"{name}.out", out_kernel, "CPU")
        _lib.impl(f"{name}.out", lambda s, o, *, alpha=1, out: torch.add(s, o, alpha=alpha, out=out), "Meta")
        if inplace_kernel is not None:
            _lib.define(f"{name}_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
            _lib.impl(f"{name}_.Tensor", inplace_kernel, "CPU")
    for name, kernel in FLIPS.items():
        _lib.define(f"{name}(Tensor self) -> Tensor")
        _lib.define(f"{name}.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
        _lib.impl(name, kernel, "CPU")
        _lib.impl(name, _flip, "Meta")
        _lib.impl(f"{name}.out", _flip_out(kernel), "CPU")
    for name, (arguments, kernel, meta) in HOSTILE.items():
        _lib.define(f"{name}({arguments}) -> Tensor")
        _lib.define(f"{name}.out({arguments}, *, Tensor(a!) out) -> Tensor(a!)")
        _lib.impl(name, kernel, "CPU")
        _lib.impl(name, meta, "Meta")
        _lib.impl(f"{name}.out", _into_out(kernel), "CPU")
