"""The CPU row loops of pointwise kernels (csrc/include/structgen/cpu/rows.h) against torch over
the layouts that pick each loop (broadcast rows and columns, transposed operands walked in bands
of rows; 1 and 2 threads), and the same bits wherever the output lies or an input starts."""

import functools

import pytest
import torch

import structops
from tests.runtime.test_ops import make


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "broadcast_row", "broadcast_col", "sliced"])
def test_large_pointwise_layouts_match_torch(threads, layout):
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        x = torch.randn(300, 400)
        y = {
            "contiguous": torch.randn(300, 400),
            "transposed": torch.randn(400, 300).t(),
            "broadcast_row": torch.randn(400),
            "broadcast_col": torch.randn(300, 1),
            "sliced": torch.randn(300, 800)[:, ::2],
        }[layout]
        torch.testing.assert_close(structops.add(x, y, alpha=0.5), torch.add(x, y, alpha=0.5))
        torch.testing.assert_close(structops.bias_gelu(x, y), torch.nn.functional.gelu(x + y))
        out = torch.empty(300, 400)
        structops.mul_add(x, y, x, out=out)
        torch.testing.assert_close(out, x * y + x)
    finally:
        torch.set_num_threads(old)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(100, 1000), (37, 130), (16, 64), (3, 5000), (2000, 17), (40, 2100)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64])
def test_transposed_operands_in_bands_of_rows_match_torch(threads, shape, dtype):
    """Rows with an operand whose rows interleave in memory (transposed input or output) are walked
    in bands of 16 rows, the operands one or two elements apart from row to row through tiles
    transposed 16 x 16, 8 x 8 for 8-byte elements (cpu/rows.h band_of_rows, cpu/tiles.h): every
    element once, whatever the band's, pass's and block's remainders, for 2-, 4- and 8-byte
    elements; functional, out= transposed, inplace, and a transposed bool condition (1-byte tiles)."""
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        g = torch.Generator().manual_seed(0)
        rows, n = shape
        x = torch.randn(n, rows, generator=g).to(dtype).t()  # row to row: 1 element
        y = torch.randn(rows, 2 * n, generator=g).to(dtype)[:, ::2]
        w = torch.randn(n, 2 * rows, generator=g).to(dtype).t()[::2]  # row to row: 2 elements
        assert torch.equal(structops.add(x, y, alpha=2), torch.add(x, y, alpha=2))
        assert torch.equal(structops.sub(w, x), w - x)
        expected = (y.double() * x.double() + x.double()).to(dtype)
        torch.testing.assert_close(structops.mul_add(y, x, x), expected, rtol=1e-3, atol=1e-3)
        out = torch.empty(n, rows, dtype=dtype).t()
        structops.sub(y, x, out=out)
        assert torch.equal(out, y - x)
        z = x.clone()  # transposed, as x
        structops.mul_(z, w)
        assert torch.equal(z, x * w)
        condition = torch.randn(n, rows, generator=g).t() > 0
        assert torch.equal(structops.where(condition, y, w), torch.where(condition, y, w))
    finally:
        torch.set_num_threads(old)


def _placed(numel: int, dtype, base: torch.Tensor, offset: int) -> torch.Tensor:
    """``numel`` elements of ``dtype`` starting ``offset`` bytes past ``base``'s data modulo 4 KiB."""
    size = torch.empty((), dtype=dtype).element_size()
    buffer = torch.empty(numel + 4096 // size, dtype=dtype)
    start = (base.data_ptr() + offset - buffer.data_ptr()) % 4096 // size
    return buffer[start : start + numel]


def _values(shape, dtype, seed: int) -> torch.Tensor:
    """test_ops.make's values, complex ones from two float32 tensors."""
    if dtype.is_complex:
        return torch.complex(
            make(shape, torch.float32, seed=seed), make(shape, torch.float32, seed=seed + 10)
        )
    return make(shape, dtype, seed=seed)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(64, 1000), (5, 37), (1, 70001)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.complex64])
def test_results_do_not_depend_on_where_the_output_lies(threads, shape, dtype):
    """The bits of a result are the same wherever the output lies relative to the inputs modulo
    4 KiB (an output just past an input is where 4 KiB aliasing tempts a kernel to walk another
    way: a backward loop rounded sin and tanh differently, and gradcheck's reentrancy check,
    two backward passes compared bitwise, failed). Each also matches torch, across threads' chunks."""
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        a, b, row = (_values(s, dtype, seed) for s, seed in ((shape, 1), (shape, 2), (shape[-1:], 3)))
        calls = [functools.partial(structops.add, a, other, alpha=2) for other in (b, row)]
        expected = [torch.add(a, b, alpha=2), torch.add(a, row, alpha=2)]
        if dtype.is_floating_point or dtype.is_complex:
            for name in ("sin", "tanh", "sigmoid", "exp", "rsqrt"):
                calls.append(functools.partial(getattr(structops, name), a))
                expected.append(getattr(torch, name)(a))
        for call, want in zip(calls, expected):
            first = None
            for offset in (2048, 8, 16, 64, 128, 256, 264, 4032):
                out = _placed(a.numel(), dtype, a, offset).view(shape)
                assert (out.data_ptr() - a.data_ptr()) % 4096 == offset
                call(out=out)
                if first is None:
                    torch.testing.assert_close(out, want, equal_nan=True)
                    first = out.clone()
                else:
                    assert torch.equal(out.isnan(), first.isnan()), offset
                    assert torch.equal(out.nan_to_num(), first.nan_to_num()), offset
        # an output just past `a` and just before `c`: in reach of both inputs' loads
        c = _placed(a.numel(), dtype, a, 128).view(shape).copy_(b)
        out = _placed(a.numel(), dtype, a, 64).view(shape)
        structops.mul_add(a, c, a, out=out)
        torch.testing.assert_close(out, a * c + a)
        assert torch.equal(out, structops.mul_add(a, c, a.clone()))  # the same fused rounding
    finally:
        torch.set_num_threads(old)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
def test_results_do_not_depend_on_where_an_input_starts(dtype):
    """An input starting 1 to 16 elements past an aligned address (a slice) gives the same bits
    as its aligned copy: no loop peels elements to align and rounds those few differently."""
    base = _values((4099,), dtype, seed=4)
    for name in ("sin", "tanh", "sigmoid", "exp", "rsqrt"):
        op = getattr(structops, name)
        for n in (37, 1000, 4099 - 16):
            aligned = op(base[:n].clone())
            for shift in range(1, 17):
                x = torch.empty(n + shift, dtype=dtype)[shift:].copy_(base[:n])
                assert torch.equal(op(x).nan_to_num(), aligned.nan_to_num()), (name, n, shift)
