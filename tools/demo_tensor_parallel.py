"""A tensor-parallel MLP from structops ops on DTensor, on 2 CPU processes (gloo), checked
against the same MLP on one process.

    .venv/bin/python tools/demo_tensor_parallel.py

    y = mm(relu(linear(x, w1, b1)), w2) + b2

The first layer is column-parallel: w1 and b1 are split by output feature (Shard(0)), x is
replicated, so each rank computes its half of the hidden features (Shard(1)) with no
communication. The second is row-parallel: w2 is split by input feature (Shard(0)), which is
mm's reduced dim k, so each rank's product is a partial sum (Partial("sum")); adding b2 needs
the sum, one all-reduce. structops.dtensor derived every placement from the ops' index spaces.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

WORLD = 2
BATCH, IN, HIDDEN, OUT = 8, 16, 32, 4


def rank_main() -> int:
    import torch
    import torch.distributed as dist
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor, init_device_mesh
    from torch.distributed.tensor.debug import CommDebugMode

    import structops

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    mesh = init_device_mesh("cpu", (WORLD,))
    torch.manual_seed(0)  # every rank draws the same parameters and input
    x = torch.randn(BATCH, IN)
    w1, b1 = torch.randn(HIDDEN, IN) / IN**0.5, torch.randn(HIDDEN)
    w2, b2 = torch.randn(HIDDEN, OUT) / HIDDEN**0.5, torch.randn(OUT)

    def mlp(x, w1, b1, w2, b2):
        return structops.add(structops.mm(structops.relu(structops.linear(x, w1, b1)), w2), b2)

    expected = mlp(x, w1, b1, w2, b2)

    dx = distribute_tensor(x, mesh, [Replicate()])
    dw1, db1 = distribute_tensor(w1, mesh, [Shard(0)]), distribute_tensor(b1, mesh, [Shard(0)])
    dw2, db2 = distribute_tensor(w2, mesh, [Shard(0)]), distribute_tensor(b2, mesh, [Replicate()])
    with CommDebugMode() as column_comms:
        h = structops.relu(structops.linear(dx, dw1, db1))
    with CommDebugMode() as row_comms:
        partial = structops.mm(h, dw2)
        y = structops.add(partial, db2)
    got = y.full_tensor()
    error = float((got - expected).abs().max())
    if rank == 0:
        print(
            f"column-parallel linear + relu: hidden {h.placements}, local {tuple(h.to_local().shape)}, "
            f"{column_comms.get_total_counts()} collectives"
        )
        print(
            f"row-parallel mm: {partial.placements}; + bias: {y.placements}, "
            f"{row_comms.get_total_counts()} collective ({', '.join(map(str, row_comms.get_comm_counts()))})"
        )
        print(f"{WORLD} processes vs one: max |difference| {error:.2e}")
    dist.barrier()  # every rank done before any tears gloo down (a rank torn down early aborts the other)
    dist.destroy_process_group()
    return 0 if torch.allclose(got, expected, rtol=1e-5, atol=1e-5) else 1


def main() -> int:
    if "RANK" in os.environ:
        # A rank leaves without the interpreter's teardown, where clearing modules that still hold
        # gloo's objects can end in std::terminate after the results were checked.
        code = rank_main()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, WORLD_SIZE=str(WORLD), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    procs = [
        subprocess.Popen([sys.executable, str(Path(__file__).resolve())], env=dict(env, RANK=str(r)))
        for r in range(WORLD)
    ]
    try:
        codes = [p.wait(timeout=300) for p in procs]
    finally:
        for p in procs:
            p.kill()
    if any(codes):
        print(f"FAILED: exit codes {codes}")
        return 1
    print("the tensor-parallel MLP equals the single-process one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
