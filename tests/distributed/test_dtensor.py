"""structops' ops on the real DTensor engine: 2 and 4 processes on the CPU (gloo over loopback),
1-D and 2-D meshes, every structured op with random placements, out= and inplace, compared with
the op on whole tensors; on 1-D meshes each sharded strategy must run with no collective
(tests/distributed/worker.py runs each rank). A planted wrong strategy must be caught."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]

# Each test starts 2 or 4 processes: under xdist they run one after another in one worker, with
# the other files that build or start processes of their own (tools/test.sh).
pytestmark = [
    pytest.mark.skipif(
        not torch.distributed.is_available() or not torch.distributed.is_gloo_available(),
        reason="this torch build has no torch.distributed with gloo",
    ),
    pytest.mark.xdist_group("own_processes"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


STALL = 240  # s with no rank printing: longer than gloo's own 120 s timeout, so a hung collective
# reports itself first; the time a whole run takes depends on what else shares the 2 cores.
LIMIT = 1800  # s in all: a cap for CI, far beyond a loaded run of the 4-rank mesh (about 300 s)


def launch(tmp_path: Path, world: int, mesh: str, *extra: str) -> list[dict]:
    """Run the worker on ``world`` ranks; every rank's report. The ranks are killed, and their logs
    shown with each thread's stack, when none has printed for ``STALL`` s: a watchdog on progress,
    not on the wall time, which under xdist is shared with the other worker's tests."""
    env = dict(os.environ, WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))
    env["OMP_NUM_THREADS"] = "1"  # 4 ranks on 2 cores
    result = tmp_path / "result.json"
    logs = [tmp_path / f"rank{rank}.log" for rank in range(world)]
    procs = []
    for rank, log in enumerate(logs):
        with log.open("w") as out:
            procs.append(
                subprocess.Popen(
                    # -X faulthandler: a rank killed by a signal prints the Python stack it died
                    # in; the worker also dumps every thread's stack on SIGUSR1 (the watchdog).
                    [
                        sys.executable,
                        "-X",
                        "faulthandler",
                        "-m",
                        "tests.distributed.worker",
                        str(result),
                        mesh,
                        *extra,
                    ],
                    cwd=ROOT,
                    env=dict(env, RANK=str(rank)),
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            )
    stalled = _watch(procs, logs)
    texts = [log.read_text(errors="replace") for log in logs]
    # Every rank that failed, not only the first: a rank that dies takes its peers down with a
    # "Connection closed by peer", so the first failing rank is rarely the one to read. Ranks
    # killed by a signal come last, where a log cut short in the middle still shows their end.
    failed = [
        f"rank {rank} exited with {p.returncode}:\n{text[-3000:]}"
        for rank, (p, text) in sorted(
            enumerate(zip(procs, texts, strict=True)), key=lambda r: r[1][0].returncode < 0
        )
        if p.returncode != 0
    ]
    assert not stalled, f"{stalled}; each rank's log ends:\n\n" + "\n\n".join(failed)
    assert not failed, "\n\n".join(failed)
    return [json.loads(Path(f"{result}.rank{rank}").read_text()) for rank in range(world)]


def _watch(procs: list[subprocess.Popen], logs: list[Path]) -> str:
    """Wait for every rank; why they were stopped, or "" when they all ended by themselves."""
    start = last = time.monotonic()
    sizes = [0] * len(logs)
    why = ""
    while any(p.poll() is None for p in procs) and not why:
        time.sleep(1)
        now = time.monotonic()
        grown = [log.stat().st_size for log in logs]
        if grown != sizes:
            sizes, last = grown, now
        if now - last > STALL:
            why = f"no rank printed for {STALL} s"
        elif now - start > LIMIT:
            why = f"the ranks ran past {LIMIT} s"
    if why:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGUSR1)
        time.sleep(2)
    for p in procs:
        p.kill()
        p.wait()
    return why


def every_failure(reports: list[dict]) -> list[str]:
    """Each failure once, with the ranks that saw it: a result gathered whole fails alike on every
    rank, while a kernel that goes wrong on one rank's shard of a replicated output fails there only."""
    ranks: dict[str, list[int]] = {}
    for rank, report in enumerate(reports):
        for failure in report["failures"]:
            ranks.setdefault(failure, []).append(rank)
    return [f"{failure}\n(on ranks {seen})" for failure, seen in ranks.items()]


@pytest.mark.parametrize("world, mesh", [(2, "2"), (4, "4"), (4, "2x2")])
def test_every_op_on_dtensor(tmp_path, world, mesh):
    reports = launch(tmp_path, world, mesh)
    failures = every_failure(reports)
    assert not failures, f"{len(failures)} failures; the first:\n" + "\n".join(failures[:3])
    untested = [op for op, calls in reports[0]["calls"].items() if calls == 0]
    # masked_select: DTensor sizes every output on fake tensors before it runs an op, and the
    # size of masked_select's depends on the data (the worker checks that the call refuses).
    assert untested == ["masked_select"], f"ops no DTensor call ran: {untested}"


def test_float16_kernels_on_dtensor(tmp_path):
    """The float16 CPU loops (vector widening, staged softmax columns, narrow column reductions)
    on each rank's shard, against the op on whole tensors: the suite above runs float64."""
    ops = "add_Tensor,mul_Tensor,mul_add,where_self,gelu,softmax_int,log_softmax_int,sum_dim_IntList,amax"
    reports = launch(tmp_path, 2, "2", "--dtype", "float16", "--ops", ops)
    failures = every_failure(reports)
    assert not failures, f"{len(failures)} failures; the first:\n" + "\n".join(failures[:3])
    calls = reports[0]["calls"]
    assert set(calls) == set(ops.split(",")) and all(calls.values()), calls


def test_a_planted_wrong_strategy_is_caught(tmp_path):
    """softmax's and cumsum's dims declared parallel: DTensor then runs each rank's half alone."""
    reports = launch(tmp_path, 2, "2", "--plant-parallel", "--ops", "softmax_int,cumsum")
    failures = every_failure(reports)
    assert any(f.startswith("softmax_int") for f in failures), failures[:2]
    assert any(f.startswith("cumsum") for f in failures), failures[:2]


def test_the_tensor_parallel_demo():
    """tools/demo_tensor_parallel.py: a column- then row-parallel MLP equals the one-process MLP."""
    run = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "demo_tensor_parallel.py")],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
    )
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    assert "hidden (Shard(dim=1),)" in run.stdout and ", 0 collectives" in run.stdout, run.stdout
    assert "the tensor-parallel MLP equals the single-process one" in run.stdout


def test_the_watchdog_stops_ranks_that_stopped_printing(tmp_path, monkeypatch):
    """A hang is reported as one, with the ranks stopped, rather than as a test that never ends."""
    monkeypatch.setattr(sys.modules[__name__], "STALL", 2)
    log = tmp_path / "rank0.log"
    log.write_text("rank 0: add_Tensor\n")
    hung = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    started = time.monotonic()
    assert _watch([hung], [log]) == "no rank printed for 2 s"
    assert hung.returncode is not None and time.monotonic() - started < 30
