"""mm/addmm/linear on what the conformance samples do not reach: both CPU kernels of
csrc/ops/linalg/gemm.h (blocked GEMM and ATen, each pinned in a subprocess),
sizes crossing the KC/MC/NC blocks and the parallel threshold, every operand layout, the
B-in-place path for few rows, float16/bfloat16/integer paths, and beta/alpha edge values."""

import os
import subprocess
import sys

import pytest
import torch

import structops

SHAPES = [
    (1, 1, 1),
    (13, 37, 33),
    (47, 300, 70),
    (100, 513, 129),
    (257, 260, 500),
    (64, 64, 64),
    (5, 1000, 200),
]


def operand(rows, cols, transposed, dtype, gen):
    if transposed:
        return torch.randn(cols, rows, generator=gen).to(dtype).t()
    return torch.randn(rows, cols, generator=gen).to(dtype)


@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_mm_layouts_and_blocks(m, k, n, layout):
    gen = torch.Generator().manual_seed(m * 7 + k + n)
    a = operand(m, k, layout[0] == "t", torch.float32, gen)
    b = operand(k, n, layout[1] == "t", torch.float32, gen)
    torch.testing.assert_close(structops.mm(a, b), a @ b, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(structops.mm(a.double(), b.double()), a.double() @ b.double())


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.int8, torch.uint8]
)
def test_mm_reduced_and_integral(dtype):
    gen = torch.Generator().manual_seed(1)
    if dtype.is_floating_point:
        a, b = torch.randn(70, 300, generator=gen).to(dtype), torch.randn(300, 90, generator=gen).to(dtype)
        tol = {"atol": 3e-2, "rtol": 3e-2} if dtype == torch.bfloat16 else {"atol": 5e-3, "rtol": 5e-3}
        torch.testing.assert_close(structops.mm(a, b), torch.mm(a, b), **tol)
    else:
        a, b = (
            torch.randint(-9, 10, (70, 300), generator=gen).to(dtype),
            torch.randint(-9, 10, (300, 90), generator=gen).to(dtype),
        )
        assert torch.equal(structops.mm(a, b), torch.mm(a, b))  # exact, wrapping like torch


def test_mm_thread_count_independent():
    gen = torch.Generator().manual_seed(2)
    a, b = torch.randn(300, 400, generator=gen), torch.randn(400, 350, generator=gen)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = structops.mm(a, b)
    finally:
        torch.set_num_threads(threads)
    torch.testing.assert_close(structops.mm(a, b), one, atol=0, rtol=0)  # tasks own disjoint C tiles


def test_addmm_beta_zero_ignores_nan_and_alpha_zero_ignores_inf():
    self_ = torch.full((40, 50), float("nan"))
    a, b = torch.randn(40, 300), torch.randn(300, 50)
    torch.testing.assert_close(
        structops.addmm(self_, a, b, beta=0), torch.addmm(self_, a, b, beta=0), atol=1e-4, rtol=1e-4
    )
    c = torch.randn(40, 50)
    ai = torch.full((40, 300), float("inf"))
    torch.testing.assert_close(
        structops.addmm(c, ai, b, alpha=0, beta=2), torch.addmm(c, ai, b, alpha=0, beta=2)
    )


def test_addmm_inplace_and_strided_out():
    c, a, b = torch.randn(60, 70), torch.randn(60, 200), torch.randn(200, 70)
    expected = torch.addmm(c, a, b, beta=0.5, alpha=2)
    x = c.clone()
    assert structops.addmm_(x, a, b, beta=0.5, alpha=2) is x
    torch.testing.assert_close(x, expected, atol=1e-4, rtol=1e-4)
    out = torch.empty(70, 60).t()
    structops.addmm(c, a, b, beta=0.5, alpha=2, out=out)
    torch.testing.assert_close(out, expected, atol=1e-4, rtol=1e-4)


def test_linear_batched_with_bias():
    x, w, bias = torch.randn(4, 33, 128), torch.randn(96, 128), torch.randn(96)
    torch.testing.assert_close(
        structops.linear(x, w, bias), torch.nn.functional.linear(x, w, bias), atol=1e-4, rtol=1e-4
    )
    torch.testing.assert_close(
        structops.linear(x[:, ::2], w), torch.nn.functional.linear(x[:, ::2], w), atol=1e-4, rtol=1e-4
    )


def test_mm_opcheck_and_meta():
    a, b = torch.randn(50, 300), torch.randn(300, 60)
    torch.library.opcheck(torch.ops.structops.mm.default, (a, b))
    m = structops.mm(a.to("meta"), b.to("meta"))
    assert m.shape == (50, 60) and m.device.type == "meta"


def run_pinned(code: str, kernel: str, ops: tuple[str, ...]) -> None:
    """Runs `code` in a fresh process with `kernel` pinned for `ops` (the pin is read at load)."""
    env = {**os.environ, "STRUCTOPS_AUTOTUNE_PIN": ",".join(f"{op}={kernel}" for op in ops)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


@pytest.mark.parametrize("kernel", ["blocked", "aten"])
def test_both_kernels_pinned(kernel):
    """Each kernel on its own: mm's and addmm's variants pinned (structops.autotune reads its pins
    once per process: a subprocess)."""
    code = (
        "import torch, structops\ng = torch.Generator().manual_seed(0)\nfor m, k, n in [(3, 5, 4), (1, 700,"
        " 1), (130, 300, 70), (40, 40, 500)]:\n    a, b, c = torch.randn(m, k, generator=g), torch.randn(k,"
        " n, generator=g), torch.randn(m, n, generator=g)\n    torch.testing.assert_close(structops.mm(a, b),"
        " a @ b, atol=1e-4, rtol=1e-4)\n    torch.testing.assert_close(structops.addmm(c, a, b, beta=0.5,"
        " alpha=3), torch.addmm(c, a, b, beta=0.5, alpha=3), atol=1e-3, rtol=1e-4)\n   "
        " torch.testing.assert_close(structops.mm(a.bfloat16(), b.bfloat16()), (a.bfloat16() @ b.bfloat16()),"
        " atol=5e-2, rtol=3e-2)\n"
    )
    run_pinned(code, kernel, ("mm.out", "addmm.out"))


def test_bad_kernel_pin_is_an_error():
    # cdist's mm form (compute_mode 1) runs on cpu::mm, whose kernel STRUCTOPS_MM_KERNEL pins.
    code = "import torch, structops\nstructops.cdist(torch.ones(4, 3), torch.ones(5, 3), 2.0, 1)\n"
    r = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        env={**os.environ, "STRUCTOPS_MM_KERNEL": "fast"},
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0 and "STRUCTOPS_MM_KERNEL must be 'blocked' or 'aten', got 'fast'" in r.stderr


# --- cdist -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, float("inf")])
@pytest.mark.parametrize("mode", [None, 1, 2])
def test_cdist_large_and_modes(p, mode):
    g = torch.Generator().manual_seed(5)
    x1, x2 = torch.randn(3, 70, 33, generator=g), torch.randn(1, 90, 33, generator=g)
    expected = torch.ops.aten._cdist_forward(x1, x2, p, mode)
    torch.testing.assert_close(structops.cdist(x1, x2, p, mode), expected, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("p", [1.0, 2.0])
def test_cdist_bfloat16_against_float64(p):
    # torch's CPU cdist has no bfloat16 kernel outside its mm form: compare with float64 instead.
    g = torch.Generator().manual_seed(6)
    x1, x2 = torch.randn(10, 8, generator=g).bfloat16(), torch.randn(12, 8, generator=g).bfloat16()
    got = structops.cdist(x1, x2, p)
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got.double(), torch.cdist(x1.double(), x2.double(), p), atol=5e-2, rtol=2e-2)


def test_cdist_rejects_negative_p_and_bad_mode():
    with pytest.raises(RuntimeError, match=r"cdist: rule 'p >= 0' does not hold p=-1"):
        structops.cdist(torch.ones(2, 3), torch.ones(2, 3), -1.0)
    with pytest.raises(RuntimeError, match=r"cdist: rule 'p >= 0' does not hold p=nan"):  # as torch's
        structops.cdist(torch.ones(2, 3), torch.ones(2, 3), float("nan"))
    with pytest.raises(RuntimeError, match=r"cdist: compute_mode must be None, 0, 1 or 2, got 3"):
        structops.cdist(torch.ones(2, 3), torch.ones(2, 3), 2.0, 3)


@pytest.mark.parametrize("kernel", ["blocked", "aten"])
def test_empty_inner_dim_gives_zeros_as_torch(kernel):
    """k == 0: every product is an empty sum, 0 (plus the bias), with and without batch dims; the
    out= tensor starts as NaN so a kernel that skips the write is seen. Both GEMMs, pinned."""
    code = (
        "import torch, structops\ncases = [\n    (structops.matmul, torch.matmul, (torch.ones(2, 3, 0),"
        " torch.ones(0, 4))),\n    (structops.matmul, torch.matmul, (torch.ones(3, 0), torch.ones(2, 0,"
        " 4))),\n    (structops.matmul, torch.matmul, (torch.ones(2, 3, 0), torch.ones(2, 0, 4))),\n   "
        " (structops.matmul, torch.matmul, (torch.ones(0), torch.ones(0, 4))),\n    (structops.mm, torch.mm,"
        " (torch.ones(3, 0), torch.ones(0, 4))),\n    (structops.bmm, torch.bmm, (torch.ones(2, 3, 0),"
        " torch.ones(2, 0, 4))),\n    (structops.linear, torch.nn.functional.linear, (torch.ones(2, 3, 0),"
        " torch.ones(5, 0))),\n    (structops.linear, torch.nn.functional.linear, (torch.ones(2, 3, 0),"
        " torch.ones(5, 0), torch.arange(5.0))),\n    (structops.addmm, torch.addmm, (torch.arange(4.0),"
        " torch.ones(3, 0), torch.ones(0, 4))),\n]\nfor ours, theirs, args in cases:\n    expected ="
        " theirs(*args)\n    torch.testing.assert_close(ours(*args), expected)\n    out ="
        " torch.full(expected.shape, float('nan'))\n    ours(*args, out=out)\n   "
        " torch.testing.assert_close(out, expected)\n"
    )
    run_pinned(code, kernel, ("mm.out", "addmm.out", "linear.out"))


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((300,), (300,)),  # dot
        ((40, 300), (300,)),  # mv
        ((300,), (300, 40)),
        ((3, 5, 300), (300,)),  # a batch folded into the rows of one mv / mm
        ((3, 5, 30), (30, 7)),
        ((2, 3, 5, 30), (30, 7)),
        ((2, 0, 30), (30,)),
        ((2, 3, 0), (0, 7)),
        ((4, 5, 30), (4, 30, 7)),  # bmm
    ],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_matmul_of_vectors_and_batches_matches_torch(a_shape, b_shape, dtype):
    """matmul's 1-D and folded-batch cases (ops/linalg/common.h): torch's values, shapes and dtype,
    functional and out=, also for a transposed (non-contiguous) batch."""
    g = torch.Generator().manual_seed(0)
    a = (torch.randn(a_shape, generator=g) * 4).to(dtype)
    b = (torch.randn(b_shape, generator=g) * 4).to(dtype)
    tol = {"rtol": 2e-2, "atol": 1e-1} if dtype == torch.bfloat16 else {}
    expected = torch.matmul(a, b)
    torch.testing.assert_close(structops.matmul(a, b), expected, **tol)
    out = torch.empty(0, dtype=dtype)
    structops.matmul(a, b, out=out)
    torch.testing.assert_close(out, expected, **tol)
    if a.dim() >= 3:
        t = a.transpose(0, 1).contiguous().transpose(0, 1)  # same values, batch dims not contiguous
        torch.testing.assert_close(structops.matmul(t, b), expected, **tol)
