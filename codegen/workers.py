"""Run independent jobs in forked worker processes and collect their results in job order.

Rendering is half of a generator run and its sections do not depend on each other, so the
build's codegen step renders them on every core it has (tools/bench_codegen.py). A forked child
starts with the parent's loaded manifest, so nothing is sent to it; what it returns comes back
pickled through a pipe. Workers claim the next job from a shared pipe of job numbers, so a worker
that drew a short job takes the next one: jobs listed longest first balance without estimates.

Forking is used only where it is safe: on Linux, from a process with one thread (a forked child
of a multi-threaded process, e.g. one that has imported torch, can deadlock on a lock another
thread held). Elsewhere the jobs run one after another in this process, with the same results.
"""

from __future__ import annotations

import os
import pickle
import signal
import traceback
from collections.abc import Callable, Sequence
from typing import TypeVar

R = TypeVar("R")

# Job numbers travel through the claim pipe as single bytes.
MAX_JOBS = 256


class WorkerError(RuntimeError):
    """A job failed in a worker process; the message carries the worker's traceback."""


def can_fork() -> bool:
    """Whether forking this process is safe: Linux, and this process runs one OS thread."""
    if not hasattr(os, "fork"):
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


# The most workers python -m structgen.codegen starts by default: the longest section (the wrappers) is
# about a third of the rendering, so more than 4 finish no sooner and only copy the process.
DEFAULT_MAX_WORKERS = 4


def default_workers() -> int:
    """The workers ``python -m structgen.codegen`` starts: one per core this process may run on, up to 4."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return min(cores, DEFAULT_MAX_WORKERS)


def run_jobs(jobs: Sequence[Callable[[], R]], workers: int) -> list[R]:
    """Every job's result, in job order, run by up to ``workers`` processes (this one included).
    A job that raises in a child raises WorkerError here; in this process, its own exception."""
    if len(jobs) > MAX_JOBS:
        raise ValueError(f"run_jobs: {len(jobs)} jobs, at most {MAX_JOBS}")
    workers = min(workers, len(jobs))
    if workers <= 1 or not can_fork():
        return [job() for job in jobs]
    claim_read, claim_write = os.pipe()
    os.write(claim_write, bytes(range(len(jobs))))  # fits the pipe's buffer: MAX_JOBS bytes
    os.close(claim_write)
    children: list[tuple[int, int]] = []  # (pid, read end of its result pipe)
    try:
        for _ in range(workers - 1):
            result_read, result_write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: never returns into the caller's code
                os.close(result_read)
                _child(jobs, claim_read, result_write)
            os.close(result_write)
            children.append((pid, result_read))
        results = _claim(jobs, claim_read)
        while children:
            ok, payload = _receive(*children.pop())
            if not ok:
                raise WorkerError(f"a codegen worker failed:\n{payload}")
            results.update(payload)
    finally:
        os.close(claim_read)
        for pid, result_read in children:  # left only when something failed: stop the rest
            os.kill(pid, signal.SIGKILL)
            os.close(result_read)
            os.waitpid(pid, 0)
    return [results[i] for i in range(len(jobs))]


def _claim(jobs: Sequence[Callable[[], R]], claim_read: int) -> dict[int, R]:
    """Run jobs as this process claims them, until the claim pipe is empty."""
    done: dict[int, R] = {}
    while number := os.read(claim_read, 1):
        done[number[0]] = jobs[number[0]]()
    return done


def _child(jobs: Sequence[Callable[[], object]], claim_read: int, result_write: int) -> None:
    try:
        try:  # pickled whole before anything is sent: a result that cannot be is a failure too
            data = pickle.dumps((True, _claim(jobs, claim_read)), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as e:  # noqa: BLE001 - reported to the parent, which raises it
            data = pickle.dumps((False, "".join(traceback.format_exception(e))))
        with os.fdopen(result_write, "wb") as out:
            out.write(data)
    finally:
        os._exit(0)  # no atexit handlers, no flush of buffers copied from the parent


def _receive(pid: int, result_read: int) -> tuple[bool, object]:
    """What the child sent, once it has exited (reaped here whatever it sent)."""
    try:
        with os.fdopen(result_read, "rb") as source:
            data = source.read()
    finally:
        _, status = os.waitpid(pid, 0)
    if not data:
        return False, f"worker {pid} exited without a result (wait status {status})"
    return pickle.loads(data)
