"""structops.dtensor: the strategies read off the index space, and their registration with
DTensor (one process, a fake process group: placements only; values are checked on real
processes in tests/distributed)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from structgen.dtensor import Placement, strategies

import structops

needs_dist = pytest.mark.skipif(
    not torch.distributed.is_available(), reason="this torch has no torch.distributed"
)


def _by_dim(op, *args, **kwargs) -> dict[str | None, str]:
    return {s.dim: str(s) for s in strategies(structops.describe(op, *args, **kwargs))}


def test_a_parallel_dim_shards_every_tensor_that_carries_it():
    got = _by_dim("add", torch.ones(4, 3), torch.ones(3))
    assert got == {
        None: "replicate: (all Replicate) -> (Replicate())",
        "d0": "d0: (self: Shard(0)) -> (Shard(0))",  # other has no d0: Replicate
        "d1": "d1: (self: Shard(1), other: Shard(0)) -> (Shard(1))",
    }


def test_a_broadcast_axis_is_replicated():
    got = _by_dim("add", torch.ones(4, 3), torch.ones(1, 3))
    assert got["d0"] == "d0: (self: Shard(0)) -> (Shard(0))"


def test_a_reduced_dim_with_combine_add_gives_partial_sums():
    got = _by_dim("mm", torch.ones(4, 5), torch.ones(5, 3))
    assert got["k"] == 'k: (self: Shard(1), mat2: Shard(0)) -> (Partial("sum"))'
    assert got["n"] == "n: (self: Shard(0)) -> (Shard(0))"
    assert got["m"] == "m: (mat2: Shard(1)) -> (Shard(1))"
    assert set(_by_dim("sum", torch.ones(4, 5), [1])) == {None, "d0", "r1"}


def test_max_and_min_combines_give_partial_max_and_min_where_no_rank_part_is_empty():
    """amax of no elements raises: on a mesh where a rank's chunk of the reduced dim would be
    empty, that rank alone would raise (and the others hang in the next collective)."""
    desc = structops.describe("amax", torch.ones(4, 5), [1])
    assert {s.dim: str(s) for s in strategies(desc, (2, 2))}["r1"] == (
        'r1: (self: Shard(1)) -> (Partial("max"))'
    )  # chunks of 5: 3, 2, then 2, 1 and 1, 1
    assert "r1" not in {s.dim for s in strategies(desc, (4,))}  # 2, 2, 1, 0
    narrow = structops.describe("amin", torch.ones(4, 3), [1])
    assert str(strategies(narrow, (2,))[-1]) == 'r1: (self: Shard(1)) -> (Partial("min"))'
    assert "r1" not in {s.dim for s in strategies(narrow, (4,))}  # chunks of 3 over 4: 1, 1, 1, 0
    assert "r1" not in {s.dim for s in strategies(desc, (2, 4))}  # 3, 2 -> 1, 1, 1, 0, ...
    summed = structops.describe("sum", torch.ones(4, 3), [1])
    assert "r1" in {s.dim for s in strategies(summed, (4,))}  # an empty part sums to 0


def test_a_mean_is_partial_avg_only_over_equal_parts():
    """A mean of the ranks' means is the mean only when every rank holds as many elements."""
    desc = structops.describe("mean", torch.ones(4, 6), [1])
    assert str(strategies(desc, (2,))[-1]) == 'r1: (self: Shard(1)) -> (Partial("avg"))'
    assert "r1" in {s.dim for s in strategies(desc, (3,))}
    assert "r1" not in {s.dim for s in strategies(desc, (4,))}  # 2, 2, 2, 0
    assert "r1" not in {s.dim for s in strategies(structops.describe("mean", torch.ones(4, 5), [1]), (2,))}


def test_reductions_with_an_all_reduce_give_its_partial():
    def partial(op, *args):
        return str(strategies(structops.describe(op, *args), (2,))[-1]).split("-> ")[1]

    assert partial("prod", torch.ones(4, 6), [1]) == '(Partial("product"))'
    assert partial("all", torch.ones(4, 6), [1]) == '(Partial("min"))'  # uint8 parts stay 0/1
    assert partial("any", torch.ones(4, 6), [1]) == '(Partial("max"))'


def test_a_reduced_dim_without_an_all_reduce_is_never_split():
    """var's moments, logsumexp and argmax merge in ways no collective does (structops.sharding
    splits them)."""
    assert set(_by_dim("var", torch.ones(4, 5), [1])) == {None, "d0"}
    assert set(_by_dim("logsumexp", torch.ones(4, 5), [1])) == {None, "d0"}
    assert set(_by_dim("argmax", torch.ones(4, 5), 1)) == {None, "d0"}
    assert set(_by_dim("addmm", torch.ones(3), torch.ones(4, 5), torch.ones(5, 3))) == {None, "n", "m"}


def test_whole_scanned_windowed_and_offset_dims_are_never_split():
    assert set(_by_dim("softmax", torch.ones(4, 5), 1)) == {None, "d0"}
    assert set(_by_dim("cumsum", torch.ones(4, 5), 0)) == {None, "d1"}
    assert set(_by_dim("layer_norm", torch.ones(2, 4, 5), [4, 5])) == {None, "d0"}
    assert set(_by_dim("cat", [torch.ones(2, 3), torch.ones(4, 3)], 0)) == {None, "d1"}  # offsets
    assert set(_by_dim("stack", [torch.ones(2, 3), torch.ones(2, 3)], 0)) == {None, "d1", "d2"}  # selector
    pooled = _by_dim("avg_pool2d", torch.ones(2, 3, 8, 8), [2, 2])
    assert set(pooled) == {None, "d0", "c"}  # windows


def test_a_dim_no_input_carries_is_not_split():
    """keepdim's size-1 axis: sharding it would need a rank to hold none of a replicated result."""
    got = _by_dim("norm", torch.ones(7), 1, [], True)
    assert set(got) == {None}


def test_every_output_follows_the_dim():
    got = _by_dim("layer_norm", torch.ones(4, 5), [5])
    assert got["d0"] == "d0: (input: Shard(0)) -> (Shard(0), Shard(0), Shard(0))"


def test_placement_names():
    assert [str(p) for p in (Placement("shard", 2), Placement("replicate"), Placement("partial"))] == [
        "Shard(2)",
        "Replicate()",
        'Partial("sum")',
    ]


@pytest.fixture(scope="module")
def mesh():
    import torch.distributed as dist
    from torch.distributed.tensor import init_device_mesh
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=4)
    yield init_device_mesh("cpu", (4,))
    dist.destroy_process_group()


@needs_dist
def test_the_cache_key_holds_every_argument(mesh):
    """register_sharding would key sum's strategy on the tensor alone: sum(x, [1]) would then
    reuse the strategy of sum(x, [0])."""
    from torch.distributed.tensor import Partial, Shard, distribute_tensor

    x = distribute_tensor(torch.ones(8, 8), mesh, [Shard(0)])
    assert structops.sum(x, [0]).placements == (Partial("sum"),)
    assert structops.sum(x, [1]).placements == (Shard(0),)
    assert structops.sum(x, [1], keepdim=True).placements == (Shard(0),)


@needs_dist
def test_out_and_inplace_keep_the_written_tensor_where_it_lies(mesh):
    from torch.distributed.tensor import Shard, distribute_tensor

    x = distribute_tensor(torch.ones(8, 8), mesh, [Shard(0)])
    out = distribute_tensor(torch.empty(8, 8), mesh, [Shard(0)])
    assert structops.softmax(x, 1, out=out) is out and out.placements == (Shard(0),)
    wrong = distribute_tensor(torch.empty(8, 8), mesh, [Shard(1)])
    with pytest.raises(
        RuntimeError, match=r"structops.softmax: no sharding of this call writes out \(placed"
    ):
        structops.softmax(x, 1, out=wrong)
    y = distribute_tensor(torch.ones(8, 8), mesh, [Shard(0)])
    assert torch.ops.structops.cumsum_(y, 1) is y and y.placements == (Shard(0),)
    # torch >= 2.13 refuses it itself ("in-place operations that require placement changes")
    with pytest.raises(RuntimeError, match="in-place operations|no sharding of this call writes self"):
        torch.ops.structops.cumsum_(y, 0)


@needs_dist
def test_an_op_without_an_index_space_runs_replicated(mesh):
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor

    x = distribute_tensor(torch.randn(8, 4), mesh, [Shard(0)])
    target = distribute_tensor(torch.zeros(8, dtype=torch.long), mesh, [Shard(0)])
    assert structops.cross_entropy_loss(x, target, None, 0).placements == (Replicate(),)


@needs_dist
def test_gather_shards_along_the_index_but_reads_the_gathered_dim_whole(mesh):
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor

    x = distribute_tensor(torch.randn(8, 4), mesh, [Shard(0)])
    index = distribute_tensor(torch.zeros(8, 4, dtype=torch.long), mesh, [Shard(0)])
    assert structops.gather(x, 1, index).placements == (Shard(0),)
    assert set(_by_dim("gather", torch.randn(8, 4), 0, torch.zeros(8, 4, dtype=torch.long))) == {
        None,
        "d0",
        "d1",
    }
    got = _by_dim("gather", torch.randn(8, 4), 0, torch.zeros(8, 4, dtype=torch.long))["d0"]
    assert got == "d0: (index: Shard(0)) -> (Shard(0))"  # self's dim 0 is read through the data
    assert structops.gather(x, 0, index).placements in ((Shard(0),), (Replicate(),))


@pytest.mark.parametrize("order", ["structops first", "dtensor first"])
@needs_dist
def test_registration_needs_no_call(order):
    """Importing structops registers the strategies once torch.distributed.tensor is imported,
    whichever comes first."""
    imports = ["import structops", "import torch.distributed.tensor"]
    if order == "dtensor first":
        imports.reverse()
    code = "; ".join(
        imports
        + [
            "import torch",
            "from torch.distributed.tensor import DTensor",
            "p = DTensor._op_dispatcher.sharding_propagator",
            "assert torch.ops.structops.add.Tensor in p.op_strategy_funcs",
            "assert torch.ops.structops.add.out in p.op_strategy_funcs",
        ]
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
