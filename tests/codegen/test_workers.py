"""codegen/workers.py: jobs spread over forked processes give what one process gives, and a
failure anywhere is raised in the caller with nothing left running. Each check runs in a fresh
interpreter: this test process may have imported torch (threads), where run_jobs does not fork."""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "codegen" / "fixtures" / "native_functions.yaml"


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_results_come_back_in_job_order_from_several_processes():
    proc = _python(
        """
        import os, time
        from structgen.codegen.workers import can_fork, run_jobs
        assert can_fork()
        def job(i):
            time.sleep(0.01 * (i % 3))  # uneven jobs: claimed in turn, not in a fixed split
            return i * i, os.getpid()
        results = run_jobs([lambda i=i: job(i) for i in range(20)], workers=3)
        assert [r[0] for r in results] == [i * i for i in range(20)], results
        pids = {r[1] for r in results}
        assert os.getpid() in pids and len(pids) > 1, pids
        os.waitpid(-1, os.WNOHANG)  # raises ChildProcessError when every worker was reaped
        """
    )
    assert "ChildProcessError" in proc.stderr, proc.stderr


def test_a_job_failing_in_a_worker_raises_in_the_caller_with_its_traceback():
    proc = _python(
        """
        import os, time
        from structgen.codegen.workers import WorkerError, run_jobs
        parent = os.getpid()
        def job(i):
            if i == 3 and os.getpid() != parent:
                raise ValueError("job three broke in a worker")
            time.sleep(0.02)
            return i
        # Retried until the failing job lands in a worker (the caller claims jobs too).
        for _ in range(50):
            try:
                run_jobs([lambda i=i: job(i) for i in range(8)], workers=2)
            except WorkerError as e:
                assert "ValueError: job three broke in a worker" in str(e), e
                print("raised")
                break
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            print("reaped")
        """
    )
    assert proc.stdout.split() == ["raised", "reaped"], proc.stdout + proc.stderr


def test_a_result_a_worker_cannot_send_back_is_a_failure_not_a_truncated_read():
    proc = _python(
        """
        import os, time
        from structgen.codegen.workers import WorkerError, run_jobs
        def job(i):
            time.sleep(0.02)
            return lambda: i  # a lambda does not pickle
        try:
            run_jobs([lambda i=i: job(i) for i in range(6)], workers=2)
        except WorkerError as e:
            assert "pickle" in str(e), e
            print("raised")
        """
    )
    assert proc.stdout.split() == ["raised"], proc.stdout + proc.stderr


def test_a_job_failing_in_the_caller_stops_the_workers():
    proc = _python(
        """
        import os, time
        from structgen.codegen.workers import run_jobs
        parent = os.getpid()
        def job(i):
            if os.getpid() == parent:
                raise KeyError("caller")
            time.sleep(30)  # a worker still busy when the caller fails: killed, not waited for
        start = time.perf_counter()
        try:
            run_jobs([lambda i=i: job(i) for i in range(4)], workers=2)
        except KeyError:
            print("raised")
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            print("reaped")
        print("fast" if time.perf_counter() - start < 10 else "waited")
        """
    )
    assert proc.stdout.split() == ["raised", "reaped", "fast"], proc.stdout + proc.stderr


def test_a_process_with_threads_runs_the_jobs_itself():
    proc = _python(
        """
        import os, threading
        from structgen.codegen.workers import can_fork, run_jobs
        stop = threading.Event()
        thread = threading.Thread(target=stop.wait)
        thread.start()
        try:
            assert not can_fork()
            results = run_jobs([lambda i=i: (i, os.getpid()) for i in range(5)], workers=4)
        finally:
            stop.set()
            thread.join()
        assert results == [(i, os.getpid()) for i in range(5)], results
        print("ok")
        """
    )
    assert proc.stdout.split() == ["ok"], proc.stdout + proc.stderr


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_codegen_in_several_processes_writes_the_same_files_as_in_one(tmp_path):
    for jobs in ("1", "3"):
        proc = subprocess.run(
            [sys.executable, "-m", "structgen.codegen", "--manifest", str(FIXTURE), "--shards", "2"]
            + ["--out-dir", str(tmp_path / jobs), "--jobs", jobs],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
    one, several = _tree(tmp_path / "1"), _tree(tmp_path / "3")
    assert len(one) > 20 and one == several
