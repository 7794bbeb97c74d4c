"""torch.compile as a user runs it: the default backend (Inductor), whole models, export and
AOTInductor. Per-op compile checks (every overload, static and dynamic) are in the generated suite.
"""

import subprocess
import sys
import textwrap

import pytest
import torch
import torch._dynamo
from structgen import lowering
from torch._inductor.utils import run_and_get_code

import structops


class Block(torch.nn.Module):
    """A transformer-ish block made of structops ops only."""

    def __init__(self, dim: int = 16, hidden: int = 32):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w1 = torch.nn.Parameter(torch.randn(hidden, dim, generator=g) / dim**0.5)
        self.b1 = torch.nn.Parameter(torch.randn(hidden, generator=g))
        self.w2 = torch.nn.Parameter(torch.randn(dim, hidden, generator=g) / hidden**0.5)
        self.gamma = torch.nn.Parameter(torch.rand(dim, generator=g) + 0.5)
        self.beta = torch.nn.Parameter(torch.randn(dim, generator=g))

    def forward(self, x):
        h = structops.gelu(structops.linear(x, self.w1, self.b1), approximate="tanh")
        h = structops.add(structops.mm(h, self.w2.t()), x, alpha=0.5)
        h = structops.native_layer_norm(h, [h.shape[-1]], self.gamma, self.beta)[0]
        p = structops.softmax(h, -1)
        return structops.mul(p, structops.sum(h, [0], keepdim=True))


def _model_inputs(n: int) -> torch.Tensor:
    return torch.randn(n, 16, generator=torch.Generator().manual_seed(n))


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_whole_model_compiles_to_one_graph_with_inductor(dynamic):
    model = Block().eval()
    torch._dynamo.reset()
    explained = torch._dynamo.explain(model)(_model_inputs(8))
    assert explained.graph_count == 1 and explained.graph_break_count == 0, explained.break_reasons
    traced = [str(n.target) for g in explained.graphs for n in g.graph.nodes if n.op == "call_function"]
    assert sum("structops" in t for t in traced) == 8, traced  # every op of forward()

    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, dynamic=dynamic)
    with torch.no_grad():
        for n in (8, 5, 13):
            x = _model_inputs(n)
            torch.testing.assert_close(compiled(x), model(x))


def test_out_and_inplace_overloads_compile_with_inductor():
    def f(x, y):
        z = structops.add(x, y, alpha=2)
        structops.mul_(z, y)
        out = torch.empty_like(z)  # Dynamo cannot trace an out= resize (same for aten ops)
        structops.neg(z, out=out)
        picked = torch.empty(x.shape[0], 2)
        torch.ops.structops.index_select.out(out, 1, torch.tensor([0, 2]), out=picked)
        return structops.sum(out, [0], keepdim=True), picked

    for dynamic in (False, True):
        torch._dynamo.reset()
        compiled = torch.compile(f, fullgraph=True, dynamic=dynamic)
        for n in (3, 5, 8):
            x, y = torch.randn(n, 4), torch.randn(4)
            torch.testing.assert_close(compiled(x, y), f(x, y))


def test_float16_and_transposed_kernels_under_inductor():
    """The CPU loops a float16 model or a transposed operand reaches (vector widening with a
    broadcast operand, staged softmax columns, narrow column reductions, bands of rows), called
    from Inductor's generated code with its own buffers: the eager results, bit for bit, and
    torch's within float16 rounding."""

    def f(x, b, t):
        h = structops.gelu(structops.add(x, b, alpha=0.5))  # float16, b broadcast
        s = structops.softmax(h, 0)  # over dim 0: the staged column blocks
        n = structops.sum(structops.mul(h, h).view(8, 16, 17), [1])  # 17 columns: narrow
        return s, n, structops.mul_add(x.float(), t, t)  # t transposed: bands of rows

    g = torch.Generator().manual_seed(0)
    x = torch.randn(128, 17, generator=g).half()
    b = torch.randn(17, generator=g).half()
    t = torch.randn(17, 128, generator=g).t()
    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True)
    with lowering.as_extern_kernels():  # the ops' own loops, not Inductor's code from their formulas
        got = compiled(x, b, t)
    eager = f(x, b, t)
    for c, e in zip(got, eager, strict=True):
        assert torch.equal(c, e)
    h = torch.nn.functional.gelu(x.float() + 0.5 * b.float()).half()
    torch.testing.assert_close(got[0], torch.softmax(h.float(), 0).half(), atol=1e-3, rtol=1e-3)
    torch.testing.assert_close(got[1], (h * h).float().view(8, 16, 17).sum(1).half(), atol=1e-2, rtol=2e-3)
    torch.testing.assert_close(got[2], x.float() * t + t)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_row_reductions_under_inductor(dtype):
    """Rows of 256 (cpu/reduce.h: 32 lanes, then the merge tree of fixed-size halves) for sum and
    amax, with a NaN in one row, called from Inductor's generated code: the eager results bit for
    bit, and torch's."""

    def f(x):
        return structops.sum(x, [1]), structops.amax(x, [1])

    x = torch.randn(64, 256, generator=torch.Generator().manual_seed(0)).to(dtype)
    x[5, 77] = float("nan")
    torch._dynamo.reset()
    got, eager = torch.compile(f, fullgraph=True)(x), f(x)
    for c, e in zip(got, eager, strict=True):
        torch.testing.assert_close(c, e, rtol=0, atol=0, equal_nan=True)  # the same bits, NaN as NaN
    torch.testing.assert_close(got[0], x.sum(1), equal_nan=True, atol=1e-2, rtol=1e-2)
    assert torch.equal(got[1].isnan(), x.amax(1).isnan()) and got[1][5].isnan()
    torch.testing.assert_close(got[1], x.amax(1), equal_nan=True)


def test_copy_tile_cascade_and_loss_paths_under_inductor():
    """Paths taken only past a size, called from Inductor's generated code: a 37.8 MB cat (streamed
    row copies into an output whose pages are mapped first), a float64 transposed plus sliced add
    (8 x 8 tiles), amax over rows of 8200 (cascade blocks), cross_entropy with a +inf logit (NaN,
    as torch) and binary_cross_entropy over 3 parallel chunks: eager's bits, and torch's."""

    def f(halves, a, b, rows, logits, target, p, t):
        return (
            structops.cat(halves, 1),
            structops.add(a, b),
            structops.amax(rows, [1]),
            structops.cross_entropy_loss(logits, target, None, 0),
            structops.binary_cross_entropy(p, t, None, 1),
        )

    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 256, (4200, 9000), dtype=torch.uint8, generator=g)
    halves = list(torch.split_with_sizes_copy(x, [1001, 7999], 1))
    a = torch.randn(300, 200, dtype=torch.float64, generator=g).t()
    b = torch.randn(200, 600, dtype=torch.float64, generator=g)[:, ::2]
    rows = torch.randn(16, 8200, generator=g)
    logits = torch.randn(5, 40, generator=g)
    logits[2, 7] = float("inf")
    target = torch.tensor([0, 1, 2, 3, 4])
    p, t = torch.rand(40001, generator=g) * 0.98 + 0.01, torch.rand(40001, generator=g)
    args = (halves, a, b, rows, logits, target, p, t)
    torch._dynamo.reset()
    got, eager = torch.compile(f, fullgraph=True)(*args), f(*args)
    for c, e in zip(got, eager, strict=True):
        torch.testing.assert_close(c, e, rtol=0, atol=0, equal_nan=True)
    assert torch.equal(got[0], x)
    torch.testing.assert_close(got[1], a + b)
    torch.testing.assert_close(got[2], rows.amax(1))
    want = torch.ops.aten.cross_entropy_loss(logits, target, None, 0)
    assert got[3][2].isnan() and want[2].isnan()
    torch.testing.assert_close(got[3], want, equal_nan=True)
    torch.testing.assert_close(got[4], torch.ops.aten.binary_cross_entropy(p, t, None, 1))


def test_inductor_calls_the_functional_overload():
    """Inductor (torch >= 2.13) lowers a custom functional op to its Tag.out overload when it finds
    one, with arguments it reorders and duplicates (`add.out(x, y, 2, alpha=2, out=buf)`): structops
    tags none, so the generated code calls the functional overload with its own arguments."""

    def f(x, y, i):
        return structops.index_select(structops.add(x, y, alpha=2), 1, i), structops.cat([x, y], 0)

    x, y, i = torch.randn(3, 4), torch.randn(3, 4), torch.tensor([3, 0])
    torch._dynamo.reset()
    with lowering.as_extern_kernels(torch.ops.structops.add.Tensor):  # else compiled as its formula
        result, (code,) = run_and_get_code(torch.compile(f, fullgraph=True), x, y, i)
    torch.testing.assert_close(result, f(x, y, i))
    assert "torch.ops.structops.add.Tensor(" in code and "structops.add.out" not in code
    if hasattr(torch._library, "_out_variant"):  # torch >= 2.13
        from torch._library._out_variant import to_out_variant

        assert to_out_variant(torch.ops.structops.add.Tensor) is None


def test_as_extern_kernels_is_not_undone_by_a_cached_graph():
    """The same function compiled with the formula, then inside as_extern_kernels: Inductor's
    caches key compiled graphs by the traced graph, so they must be off there, or the formula's
    code would come back."""

    def f(x, y):
        return structops.add(x, y, alpha=2)

    x, y = torch.randn(8), torch.randn(8)
    with torch._inductor.config.patch(fx_graph_cache=True):  # tests/conftest.py turns it off
        _, lowered = run_and_get_code(torch.compile(f, fullgraph=True), x, y)
        with lowering.as_extern_kernels(torch.ops.structops.add.Tensor):
            result, extern = run_and_get_code(torch.compile(f, fullgraph=True), x, y)
    torch.testing.assert_close(result, f(x, y))
    assert len(lowered) == 1 and "structops.add.Tensor(" not in lowered[0]
    assert len(extern) == 1 and "structops.add.Tensor(" in extern[0]


def _kernels(code: str) -> int:
    """The kernels Inductor generated in a module's code (one cpp_fused_* function each on the CPU)."""
    return code.count("async_compile.cpp_pybinding(")


@pytest.mark.parametrize("dynamic", [False, True])
def test_a_chain_of_formula_ops_compiles_to_one_kernel(dynamic):
    """Inductor compiles formula ops as their formulas (structgen/lowering.py): a chain of them,
    a broadcast operand, a Scalar and a str argument, becomes one generated kernel with no call
    of a structops op. float32 gives eager's values; float16 computes the chain in float and
    rounds once, so it is at least as close to float64 as eager (which rounds after each op)."""

    def f(x, b):
        h = structops.gelu(structops.add(structops.mul(x, x), b, alpha=0.5), approximate="tanh")
        return structops.where(structops.gt(x, 0.1), structops.exp(h), structops.neg(h))

    g = torch.Generator().manual_seed(0)
    for dtype in (torch.float32, torch.float16):
        x, b = torch.randn(64, 33, generator=g).to(dtype), torch.randn(33, generator=g).to(dtype)
        torch._dynamo.reset()
        got, (code,) = run_and_get_code(torch.compile(f, fullgraph=True, dynamic=dynamic), x, b)
        assert "torch.ops.structops" not in code
        assert _kernels(code) == 1, code
        if dtype == torch.float32:
            torch.testing.assert_close(got, f(x, b))
            continue
        exact = f(x.double(), b.double())
        assert (got.double() - exact).abs().max() <= (f(x, b).double() - exact).abs().max()
        torch.testing.assert_close(got.double(), exact, atol=2e-3, rtol=2e-3)


def test_formula_ops_fuse_around_a_matmul_forward_and_backward():
    """linear -> bias gelu -> residual add, forward and backward compiled: the formula ops and
    their generated backward ops fuse into Inductor's kernels; only the matmuls stay calls."""

    def f(x, w, b):
        return structops.add(structops.gelu(structops.add(structops.mm(x, w), b)), x)

    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 16, generator=g, requires_grad=True)
    w = torch.randn(16, 16, generator=g, requires_grad=True)
    b = torch.randn(16, generator=g, requires_grad=True)

    def step(fn):
        out = fn(x, w, b)
        return (out, *torch.autograd.grad(out.square().sum(), (x, w, b)))

    torch._dynamo.reset()
    got, code = run_and_get_code(step, torch.compile(f, fullgraph=True))
    calls = [line for c in code for line in c.splitlines() if "torch.ops.structops." in line]
    assert all("mm" in line for line in calls), calls
    for c, e in zip(got, step(f), strict=True):
        torch.testing.assert_close(c, e)


def test_an_integer_division_stays_a_call_and_raises():
    """An integer floor division is not lowered (the kernel raises on a zero divisor; Inductor's
    code would divide by zero): compiled, it calls the op and raises as eager does."""

    def f(x, y):
        return structops.div(x, y, rounding_mode="floor")

    x, y = torch.tensor([7, -7, 3]), torch.tensor([2, 2, 0])
    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):  # torch's own error for this division
        compiled(x, y)
    (code,) = run_and_get_code(compiled, x, torch.tensor([2, 2, 1]))[1]
    assert "torch.ops.structops.div.Tensor_mode(" in code
    torch.testing.assert_close(compiled(x.float(), y.float()), f(x.float(), y.float()))


def test_formula_ops_stay_calls_where_inductor_changed(monkeypatch):
    """Where Inductor's tables are not what structgen.lowering expects (a torch newer than the
    supported ones), the ops are withdrawn from them with a warning: compiled code still calls
    their kernels, correct and unfused, instead of failing Inductor's import or compile."""
    import torch._inductor.lowering as inductor_lowering
    from torch._inductor import decomposition

    op = torch.ops.structops.relu.default
    function = lowering._LOWERINGS[op]

    def moved(*args, **kwargs):
        raise TypeError("make_fallback() got an unexpected keyword argument 'override_decomp'")

    monkeypatch.setattr(inductor_lowering, "make_fallback", moved)
    try:
        with pytest.warns(UserWarning, match="formula ops stay extern kernels"):
            lowering.register(lambda: {op: function})
        assert op not in decomposition.decompositions and op not in decomposition.select_decomp_table()
        torch._dynamo.reset()
        x = torch.randn(5)
        with torch._inductor.config.patch(fx_graph_cache=False):  # a cached graph would hold the formula
            got, (code,) = run_and_get_code(torch.compile(structops.relu, fullgraph=True), x)
        assert "torch.ops.structops.relu.default(" in code
        torch.testing.assert_close(got, torch.relu(x))
    finally:
        monkeypatch.undo()
        lowering.register(lambda: {op: function})
    assert op in decomposition.select_decomp_table()


def test_out_dtype_rules_hold_under_compile():
    """`out_dtype: dtype_argument`: sum into an int32 out sums the elements as int32 (torch.sum's
    rule), also when traced as the functional call; `exact`: mm rejects an out of another dtype."""

    def sum_into(x, out):
        return structops.sum(x, [1], out=out)

    x = torch.full((4, 6), 0.75)
    expected = torch.sum(x, 1, out=torch.empty(4, dtype=torch.int32))
    assert expected.tolist() == [0] * 4  # each 0.75 is 0 as int32 (a float sum cast would be 4)
    torch._dynamo.reset()
    for f in (sum_into, torch.compile(sum_into, fullgraph=True)):
        out = torch.empty(4, dtype=torch.int32)
        f(x, out)
        torch.testing.assert_close(out, expected)

    def mm_into(x, out):
        return structops.mm(x, x.T, out=out)

    with pytest.raises(RuntimeError, match="expected 'out' to have the result dtype Float, but got Double"):
        mm_into(x, torch.empty(4, 4, dtype=torch.float64))
    torch._dynamo.reset()
    with pytest.raises(Exception, match="expected 'out' to have the result dtype Float, but got Double"):
        torch.compile(mm_into, fullgraph=True)(x, torch.empty(4, 4, dtype=torch.float64))


def test_written_overloads_check_their_arguments_under_compile():
    """The functional call a written overload is traced as would accept what the overload must
    reject: the trace runs the overload on meta tensors first, so compile raises as eager does."""

    def out_int(x):
        return structops.add(x, x, out=torch.empty(x.shape, dtype=torch.int64))

    def inplace_broadcast(x):
        return structops.add_(x.clone(), torch.ones(2, *x.shape))

    x = torch.randn(3, 4)
    for f, match in ((out_int, "can't be cast"), (inplace_broadcast, "doesn't match the broadcast shape")):
        with pytest.raises(RuntimeError, match=match):
            f(x)
        torch._dynamo.reset()
        with pytest.raises(Exception, match=match):
            torch.compile(f, fullgraph=True)(x)


def _export_package(model, example, dynamic_batch: bool, path):
    dynamic_shapes = {"x": {0: torch.export.Dim("batch", min=2, max=1024)}} if dynamic_batch else None
    with torch.no_grad():
        exported = torch.export.export(model, (example,), dynamic_shapes=dynamic_shapes)
        return torch._inductor.aoti_compile_and_package(exported, package_path=str(path))


@pytest.mark.parametrize("dynamic_batch", [False, True], ids=["static", "dynamic"])
def test_aot_inductor_package_runs_in_a_fresh_process(tmp_path, dynamic_batch):
    """The package calls structops ops through torch's dispatcher, so the process that runs it
    must have loaded structops' operator library: `import structops`, or, with no structops
    Python package at all, torch.ops.load_library(structops.ops_library) (what a C++ program
    does with dlopen)."""
    model = Block().eval()
    package = _export_package(model, _model_inputs(8), dynamic_batch, tmp_path / "block.pt2")
    sizes = (8, 3, 20) if dynamic_batch else (8,)
    torch.save({n: (_model_inputs(n), model(_model_inputs(n)).detach()) for n in sizes}, tmp_path / "io.pt")
    run = textwrap.dedent(f"""
        import torch
        {{load}}
        runner = torch._inductor.aoti_load_package({str(package)!r})
        for x, expected in torch.load({str(tmp_path / "io.pt")!r}).values():
            torch.testing.assert_close(runner(x), expected)
        print("ok")
    """)
    for load in ("import structops", f"torch.ops.load_library({structops.ops_library!r})"):
        done = subprocess.run(
            [sys.executable, "-c", run.format(load=load)], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]

    # Without the library the package cannot resolve the ops: it fails, naming one.
    done = subprocess.run(
        [sys.executable, "-c", run.format(load="")], capture_output=True, text=True, check=False
    )
    assert done.returncode != 0 and "structops" in done.stderr


class CausalScores(torch.nn.Module):
    """Attention scores with a causal mask filled with -inf (a row's future), as models write them."""

    def forward(self, x):
        t = x.shape[-1]
        future = structops.gt(structops.sub(torch.arange(t)[None, :], torch.arange(t)[:, None]), 0)
        return structops.softmax(structops.where(future, float("-inf"), x), -1)


def test_aot_inductor_package_of_an_infinite_fill_loads(tmp_path):
    """torch's export serializer writes -inf as the string "-Infinity" and AOTInductor's proxy
    executor reads a custom op's float argument as a JSON number: the package would not load.
    Exported, structops passes such a number as a 0-dim tensor (where.self), which promotes alike."""
    x = torch.randn(2, 6, 6)
    with torch.no_grad():
        exported = torch.export.export(CausalScores(), (x,))
        targets = {str(n.target) for n in exported.graph.nodes if n.op == "call_function"}
        assert "structops.where.self" in targets and "structops.where.ScalarSelf" not in targets
        package = torch._inductor.aoti_compile_and_package(
            exported, package_path=str(tmp_path / "scores.pt2")
        )
    runner = torch._inductor.aoti_load_package(package)
    expected = CausalScores()(x)
    torch.testing.assert_close(runner(x), expected)
    causal = torch.ones(6, 6).triu(1).bool()
    torch.testing.assert_close(expected, torch.softmax(x.masked_fill(causal, float("-inf")), -1))
