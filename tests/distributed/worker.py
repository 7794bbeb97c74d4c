"""One rank of the DTensor check (tests/distributed/test_dtensor.py): every structured op, called
on DTensors with random placements on a 1-D or 2-D mesh over gloo, must give the full result the
op gives on whole tensors; on a 1-D mesh every sharded strategy structops.dtensor derives must
also run with no communication and give the placements it promises.

    python -m tests.distributed.worker RESULT.json MESH [--ops a,b] [--plant-parallel]
    (with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set)

Every rank runs the same calls in the same order with the same random draws (collectives must
pair up); each writes the failures it saw to RESULT.json.rank<N>.
"""

from __future__ import annotations

import argparse
import datetime
import faulthandler
import functools
import json
import os
import random
import signal
import sys
import traceback
import warnings
import zlib

import torch
import torch.distributed as dist
from structgen.conformance.checks import _merged_tolerance, _outputs, _tolerance
from structgen.conformance.samples import samples
from structgen.conformance.spec import compiled, functional, load_specs, overload
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor, init_device_mesh
from torch.distributed.tensor.debug import CommDebugMode

import structops
from tests.under_test import use_structops

TRIALS = 3  # random placements per sample


DTYPE: str | None = None  # --dtype: the ops' samples in this dtype instead


def _dtype(spec) -> str:
    if DTYPE is not None:
        return DTYPE
    return "float64" if "float64" in spec.dtypes else spec.dtypes[0]


def spread(found: list, want: int = 8) -> list:
    """``want`` of the samples, evenly apart: the suite lists them by growing rank (the first
    ones of a reduction are all 0-d)."""
    return found[:: max(1, len(found) // want)][:want]


def _distributed(sample, mesh, placements_of):
    """The sample with each tensor a DTensor placed as placements_of(argument, element, tensor)."""

    def place(key, element, t):
        return distribute_tensor(t, mesh, placements_of(key, element, t))

    args = []
    for i, v in enumerate(sample.args):
        if isinstance(v, torch.Tensor):
            args.append(place(i, None, v))
        elif isinstance(v, list | tuple) and v and all(isinstance(t, torch.Tensor) for t in v):
            args.append([place(i, j, t) for j, t in enumerate(v)])
        else:
            args.append(v)
    kwargs = {k: place(k, None, v) if isinstance(v, torch.Tensor) else v for k, v in sample.kwargs.items()}
    return args, kwargs


def _random_placements(rng: random.Random, mesh, t: torch.Tensor):
    options = [Replicate()] + [Shard(a) for a in range(t.dim())]
    return [rng.choice(options) for _ in range(mesh.ndim)]


def _full(result) -> list[torch.Tensor]:
    return [r.full_tensor() if isinstance(r, DTensor) else r for r in _outputs(result)]


def _compare(spec, got: list[torch.Tensor], expected, what: str) -> None:
    """got against expected: the outputs, or for a random op a function of got (its own draw)."""
    for g, e in zip(got, expected(got) if callable(expected) else expected, strict=True):
        tol = _merged_tolerance(e, 16) if e.is_floating_point() else _tolerance(spec, e.dtype)
        torch.testing.assert_close(g, e, equal_nan=True, msg=lambda m: f"{what}: {m}", **tol)


def _attempt(op, /, *args, **kwargs):
    """(what op returns, None), or (None, the exception it raised). From one seed on every rank, so
    a random op (dropout) draws the same bits in each call and on each rank."""
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            return op(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - every rank records it and goes on in step
        return None, e


def _trace(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))


def _everyone(ok: bool) -> bool:
    """Whether ok holds on every rank. The ranks agree after each call before the next collective:
    one that went on to a collective its peers skipped would pair gloo's messages wrongly, and gloo
    aborts the process (the test then sees a SIGABRT instead of the failure behind it)."""
    flag = torch.tensor([int(ok)])
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    return bool(flag.item())


def _matches(failures: list[str], ctx: str, spec, got: list[torch.Tensor], expected) -> int:
    """1 if got equals expected, else 0 with the difference recorded. Local to each rank: the
    full tensors were gathered before, so a rank whose result differs runs no collective less."""
    try:
        _compare(spec, got, expected, ctx)
        return 1
    except Exception:  # noqa: BLE001 - a mismatch is recorded; the ranks go on in step
        failures.append(f"{ctx}:\n{traceback.format_exc()}")
        return 0


def _own_draw(bits, sample, got: list[torch.Tensor]) -> tuple:
    """What a random op's outputs should be from the mask it drew (tests.bits_reference)."""
    return _outputs(sample.call(lambda *args, **kwargs: bits(tuple(got), *args, **kwargs)))


def _inplace_expected(spec, sample) -> torch.Tensor | None:
    """What the inplace overload leaves in self on whole tensors; None where it refuses the
    sample (self not of the result's shape, or of a dtype that cannot hold it)."""
    self_ = sample.args[0].clone()
    try:
        overload(spec, spec.inplace)(self_, *sample.args[1:], **sample.kwargs)
    except (RuntimeError, TypeError, ValueError):
        return None
    return self_


def _written(spec) -> set[str]:
    """The functional's arguments it writes (batch_norm's running statistics)."""
    return {
        a.name
        for a in functional(spec)._schema.arguments
        if a.alias_info is not None and a.alias_info.is_write
    }


def _chosen(rng: random.Random, options, sizes: dict[str, int], mesh) -> list:
    """A strategy per mesh dim, each splitting its index dim into no more parts than it has
    elements (DTensor shards no dim shorter than its shard count); [] for an op without any."""
    chosen = [rng.choice(options) for _ in range(mesh.ndim)] if options else []
    for i, s in enumerate(chosen):
        parts = 1
        for k, other in enumerate(chosen):
            parts *= mesh.size(k) if other.dim == s.dim else 1
        if s.dim is not None and sizes[s.dim] < parts:
            chosen[i] = options[0]
    return chosen


def check_op(spec, mesh, rng: random.Random, failures: list[str], strategy_checks: bool) -> int:
    """Run one op's samples; returns how many calls ran on DTensors."""
    calls = 0
    dtype = _dtype(spec)
    names = list(spec.positional)
    written = _written(spec)
    for n, sample in enumerate(spread(samples(spec, "cpu", dtype))):
        what = f"{spec.name} sample {n} ({sample!r})"
        expected, error = _attempt(sample.call, functional(spec))  # from the seed every call takes
        if error is not None:
            raise error
        expected = _outputs(expected)
        if spec.seeded:  # its bits follow the local tensors' layouts (torch's empty_like): its own draw
            bits = compiled(spec).bits_reference
            expected = functools.partial(_own_draw, bits, sample)
        desc = structops.describe(spec.functional, *sample.args, **sample.kwargs) if spec.described else None
        options = structops.dtensor.strategies(desc, tuple(mesh.shape)) if desc is not None else []
        sizes = {d.name: d.size for d in desc.index_space} if spec.described else {}
        for trial in range(TRIALS):
            placed = {}
            # A tensor the op writes stays where it lies (DTensor cannot redistribute it back):
            # place those as one of the op's strategies does, per mesh dim; the rest at random.
            chosen = _chosen(rng, options, sizes, mesh)

            def placements_of(key, element, t, placed=placed, chosen=chosen):
                name = names[key] if isinstance(key, int) else key
                if name in written and chosen:
                    placed[(key, element)] = [_placement(s.input(name, element)) for s in chosen]
                else:
                    placed[(key, element)] = _random_placements(rng, mesh, t)
                return placed[(key, element)]

            args, kwargs = _distributed(sample, mesh, placements_of)
            ctx = f"{what}, placements {placed}"
            result, error = _attempt(functional(spec), *args, **kwargs)
            if not _everyone(error is None):
                # DTensor sizes outputs on fake tensors first: data-dependent sizes are refused.
                refused = spec.dynamic_output_shape and spec.name.split("_")[0] in str(error)
                if error is not None and not refused:
                    failures.append(f"{ctx}:\n{_trace(error)}")
                continue
            calls += _matches(failures, ctx, spec, _full(result), expected)
            if spec.out and not spec.list_out and trial == 0:
                given = {
                    name: torch.empty_like(r) for name, r in zip(spec.outs, _outputs(result), strict=True)
                }
                out_ctx = f"{ctx}, out="
                _, error = _attempt(overload(spec, spec.out), *args, **kwargs, **given)
                if _everyone(error is None):
                    calls += _matches(failures, out_ctx, spec, _full(tuple(given.values())), expected)
                elif error is not None:
                    failures.append(f"{out_ctx}:\n{_trace(error)}")
            inplace = _inplace_expected(spec, sample) if spec.inplace and trial == 0 else None
            first = _outputs(result)[0]
            if inplace is not None and not any(p.is_partial() for p in first.placements):
                args[0] = distribute_tensor(sample.args[0].clone(), mesh, first.placements)
                in_ctx = f"{ctx}, inplace"
                _, error = _attempt(overload(spec, spec.inplace), *args, **kwargs)
                if _everyone(error is None):
                    calls += _matches(failures, in_ctx, spec, [args[0].full_tensor()], (inplace,))
                elif error is not None:
                    failures.append(f"{in_ctx}:\n{_trace(error)}")
        if strategy_checks:
            calls += _check_strategies(spec, sample, options, mesh, expected, what, failures)
    return calls


def _placement(p):
    return Shard(p.axis) if p.kind == "shard" else Partial(p.reduce) if p.kind == "partial" else Replicate()


def _check_strategies(spec, sample, options, mesh, expected, what: str, failures: list[str]) -> int:
    """Each sharded strategy of the call: inputs placed as it says, the op runs with no
    collective and returns the placements it promises (no silent replicate)."""
    calls = 0
    names = list(spec.positional)
    sizes = {}
    if options:
        desc = structops.describe(spec.functional, *sample.args, **sample.kwargs)
        sizes = {d.name: d.size for d in desc.index_space}
    for s in options[1:]:
        if sizes[s.dim] < mesh.size(0):
            continue  # DTensor shards no dim shorter than the mesh (is_tensor_shardable)

        def placements_of(key, element, t, s=s):
            name = names[key] if isinstance(key, int) else key
            return [_placement(s.input(name, element))]

        args, kwargs = _distributed(sample, mesh, placements_of)
        ctx = f"{what}, strategy {s}"
        with CommDebugMode() as comms:
            result, error = _attempt(functional(spec), *args, **kwargs)
        if not _everyone(error is None):
            if error is not None:
                failures.append(f"{ctx}:\n{_trace(error)}")
            continue
        promised = [_placement(p) for p in s.outputs]
        got = [r.placements[0] for r in _outputs(result)]
        if comms.get_total_counts() or got != promised:
            failures.append(
                f"{ctx}: {comms.get_total_counts()} collectives, outputs placed {got} (want {promised})"
            )
        calls += _matches(failures, ctx, spec, _full(result), expected)
    return calls


def _plant_parallel() -> None:
    """A wrong IPF for the mutation test: every whole and scanned dim declared parallel."""
    import dataclasses

    derive = structops.dtensor.strategies

    def planted(desc, mesh=()):
        space = tuple(
            dataclasses.replace(d, kind="parallel") if d.kind in ("whole", "scanned") else d
            for d in desc.index_space
        )
        return derive(dataclasses.replace(desc, index_space=space), mesh)

    structops.dtensor.strategies = planted


def main() -> None:
    # The test's watchdog sends SIGUSR1 to a rank that stopped printing: where each thread is.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    use_structops()
    parser = argparse.ArgumentParser()
    parser.add_argument("result")
    parser.add_argument("mesh", help="the mesh shape: 4, or 2x2")
    parser.add_argument("--ops", help="only these ops (SuiteSpec names, comma-separated)")
    parser.add_argument("--plant-parallel", action="store_true", help="plant a wrong strategy")
    parser.add_argument("--dtype", help="samples in this dtype (ops that lack it are left out)")
    options = parser.parse_args()
    global DTYPE
    DTYPE = options.dtype
    if options.plant_parallel:
        _plant_parallel()
    shape = tuple(int(s) for s in options.mesh.split("x"))
    warnings.simplefilter("ignore")  # the samples' own warnings (var's dof), once per rank
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
    rank = dist.get_rank()
    mesh = init_device_mesh("cpu", shape)
    failures: list[str] = []
    report = {}
    only = set(options.ops.split(",")) if options.ops else None
    for spec in load_specs():
        if (only is not None and spec.name not in only) or (DTYPE is not None and DTYPE not in spec.dtypes):
            continue
        rng = random.Random(zlib.crc32(f"{spec.name}/{options.mesh}".encode()))
        torch.manual_seed(0)
        print(f"rank {rank}: {spec.name}", file=sys.stderr, flush=True)
        report[spec.name] = check_op(spec, mesh, rng, failures, strategy_checks=len(shape) == 1)
    with open(f"{options.result}.rank{rank}", "w") as f:
        json.dump({"failures": failures, "calls": report}, f)
    # Every rank done before any tears gloo down: a rank that destroys its group while another
    # still talks to it can abort the other ("terminate called without an active exception").
    dist.barrier()
    dist.destroy_process_group()
    # Then leave without the interpreter's teardown, where clearing modules that still hold gloo's
    # objects can end in std::terminate (torch's own gloo tests saw it in _PyModule_ClearDict).
    # The report is written and closed; nothing after this line is checked.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
