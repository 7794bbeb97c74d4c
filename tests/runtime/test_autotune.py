"""Multi-kernel autotuning (structops.autotune, csrc/runtime/autotune/): decisions, the on-disk cache
and its failure modes, and the pin / disable / log switches. Each scenario runs in a fresh
process, because the library reads its environment once and keeps decisions in memory."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import structops
from structops import autotune

# One script per scenario: tunes sum over both layouts and an mm, checks the results against
# torch, and prints the counters and the decisions as JSON on its last line.
SCRIPT = textwrap.dedent("""
    import json, sys, warnings, torch, structops
    from structops import autotune
    warnings.simplefilter("always")
    torch.manual_seed(0)
    x = torch.randn(384, 512)
    for dim in (0, 1):
        torch.testing.assert_close(structops.sum(x, [dim]), x.sum(dim))
    a, b = torch.randn(96, 80), torch.randn(80, 112)
    torch.testing.assert_close(structops.mm(a, b), a @ b)
    print(json.dumps({"counters": autotune.counters(), "decisions": autotune.decisions()}))
""")


# The variants' times in the scenarios' rounds (STRUCTOPS_AUTOTUNE_FAKE_US): clear winners, so the
# decisions resolve and are saved however busy the machine running the tests is (the timing
# itself is tools/bench_autotune.py's subject, the judging test_judge_*'s).
FAKE_US = "sum.IntList_out:rows=100;sum.IntList_out:columns=50;mm.out:blocked=80;mm.out:aten=40"


def run(cache: Path, script: str = SCRIPT, **env) -> tuple[dict, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("STRUCTOPS_AUTOTUNE")}
    environ.update({"STRUCTOPS_AUTOTUNE_CACHE_DIR": str(cache), "STRUCTOPS_AUTOTUNE_FAKE_US": FAKE_US, **env})
    r = subprocess.run(
        [sys.executable, "-c", script], env=environ, capture_output=True, text=True, timeout=300, check=False
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def files(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.json")) if cache.is_dir() else []


def test_first_process_tunes_and_a_second_reads_the_cache(tmp_path):
    first, _ = run(tmp_path)
    timed, hits = first["counters"]
    assert timed >= 6 and hits == 0  # sum rows/columns twice, mm blocked/aten
    tuned = [d for d in first["decisions"] if d["source"] == "tuned"]
    assert {d["op"] for d in tuned} == {"sum.IntList_out", "mm.out"}
    assert len(files(tmp_path)) == len(tuned)
    second, _ = run(tmp_path)
    assert second["counters"] == [0, len(tuned)]  # nothing re-timed
    picks = lambda r: {(d["op"], tuple(d["key"])): d["pick"] for d in r["decisions"]}
    assert picks(second) == picks(first)


def test_a_decision_file_holds_every_timing_and_its_key(tmp_path):
    run(tmp_path)
    for path in files(tmp_path):
        d = json.loads(path.read_text())
        assert d["torch"] == torch.__version__.split("+")[0]
        assert d["device_type"] == "cpu" and d["compile_flags"] and d["key_text"]
        names = [v["name"] for v in d["variants"]]
        assert [t["variant"] for t in d["timings"]] == names
        assert all(len(v["source_hash"]) == 16 for v in d["variants"])
        best = min(t["us"] for t in d["timings"])
        # The pick is the first declared variant within 3% of the fastest (ties -> declaration order).
        assert d["pick"] == next(t["variant"] for t in d["timings"] if t["us"] <= best * 1.03)


def test_files_of_other_builds_unused_for_30_days_are_removed(tmp_path):
    """A rebuild changes the build part of every decision's name (<op>-<device>-<dtype>-<build>-
    <decision>.json); the old build's files go once no process has used them for 30 days."""
    run(tmp_path)
    ours = files(tmp_path)
    prefix = ours[0].name[: -len("0123456789abcdef-0123456789abcdef.json")]
    month_ago = ours[0].stat().st_mtime - 40 * 86400

    def planted(name: str, mtime: float | None) -> Path:
        path = tmp_path / name
        path.write_text("{}")
        if mtime is not None:
            os.utime(path, (mtime, mtime))
        return path

    stale = planted(prefix + "0" * 16 + "-" + "1" * 16 + ".json", month_ago)
    recent = planted(prefix + "0" * 16 + "-" + "2" * 16 + ".json", None)
    other_op = planted("other.op-cpu-Float-" + "0" * 16 + "-" + "3" * 16 + ".json", month_ago)
    os.utime(ours[0], (month_ago, month_ago))  # this build's, unused for long: read, so kept
    second, _ = run(tmp_path)
    assert second["counters"][0] == 0  # this build's decisions were all read
    assert not stale.exists()
    assert recent.exists() and other_op.exists()
    assert ours[0].exists() and ours[0].stat().st_mtime > month_ago + 30 * 86400  # touched on read


def test_eight_processes_tuning_at_once_leave_a_valid_cache(tmp_path):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("STRUCTOPS_AUTOTUNE")}
    environ["STRUCTOPS_AUTOTUNE_CACHE_DIR"] = str(tmp_path)
    environ["STRUCTOPS_AUTOTUNE_FAKE_US"] = FAKE_US
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT],
            env=environ,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    counters = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
        counters.append(json.loads(out.strip().splitlines()[-1])["counters"])
    # No process waits on another: each times the decisions it finds no file for and reads the
    # others, so each of its three decisions is made once, either way (docs/multi_kernel.md).
    alone, _ = run(tmp_path / "alone")
    per_decision = alone["counters"][0] // 3  # the same rounds for each: the fake times are clear
    for timed, hits in counters:
        assert timed % per_decision == 0 and timed // per_decision + hits == 3, (timed, hits)
    assert not list(tmp_path.glob("*.tmp.*")), "temporary files left behind"
    written = files(tmp_path)
    assert len(written) == 3  # one file per decision, however many processes wrote it
    for path in written:
        json.loads(path.read_text())  # whole, parseable files
    after, _ = run(tmp_path)
    assert after["counters"] == [0, 3]


# Holds the lock file the cache dir had (an older structops, or any process) from before the
# tuning process starts until 20 s after it is about to make its first call: far longer than
# three decisions with fake times take, and shorter than the 30 s the old lock waited.
HOLDER = textwrap.dedent("""
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("locked", flush=True)
    while not os.path.exists(sys.argv[2]):
        time.sleep(0.01)
    time.sleep(20)
""")


def test_a_process_holding_the_cache_lock_stalls_no_one(tmp_path):
    """Tuning never waits on another process: with the cache dir's lock file held (by a hung or
    stopped process), a fresh process makes and saves its decisions while the lock is still held
    (the 30 s wait per decision of the lock it replaced would have outlasted the holder)."""
    lock, go = tmp_path / ".tuning.lock", tmp_path / "go"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, lock, go], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        check_lock = textwrap.dedent(f"""
            import fcntl, os
            fd = os.open({str(lock)!r}, os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                lock = "free"
            except BlockingIOError:
                lock = "held"
            print(json.dumps({{"lock": lock, "decisions": autotune.decisions()}}))
        """)
        start = f"import pathlib; pathlib.Path({str(go)!r}).touch()\n"  # the holder's 20 s begin
        result, _ = run(tmp_path, script=start + SCRIPT + check_lock)
    finally:
        holder.kill()
        holder.wait()
    assert result["lock"] == "held"
    assert [d["source"] for d in result["decisions"]] == ["tuned"] * 3
    assert len(files(tmp_path)) == 3 and not list(tmp_path.glob("*.tmp.*"))


MALFORMED = textwrap.dedent("""
    import torch, structops
    try:
        structops.mm(torch.ones(4, 4), torch.ones(4, 4))
        print("no error")
    except RuntimeError as e:
        print(str(e).splitlines()[0])
""")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("mm.out:aten", "entry 1 'mm.out:aten' has no '='"),
        ("mm.out:aten=40;mm.out:blocked=4x0", "entry 2 'mm.out:blocked=4x0': time 1 '4x0' is not a number"),
        ("mm.out:aten=40//80", "entry 1 'mm.out:aten=40//80': time 2 '' is not a number"),
        ("mm.out:aten=", "time 1 '' is not a number"),
        ("mm.out:aten=-5", "time 1 '-5' is not a number of microseconds >= 0"),
        ("mm.out:aten=nan", "time 1 'nan' is not a number"),
        ("aten=40", "entry 1 'aten=40' does not start with op:variant"),
        ("mm.out:=40", "does not start with op:variant"),
        ("mm.out:aten=4;;mm.out:aten=5", "entry 3 'mm.out:aten=5' gives mm.out:aten a second time"),
    ],
)
def test_a_malformed_fake_us_says_what_is_wrong(value, message):
    environ = {k: v for k, v in os.environ.items() if k != "STRUCTOPS_AUTOTUNE_FAKE_US"}
    r = subprocess.run(
        [sys.executable, "-c", MALFORMED],
        env={**environ, "STRUCTOPS_AUTOTUNE_FAKE_US": value},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    line = r.stdout.strip()
    assert line.startswith("STRUCTOPS_AUTOTUNE_FAKE_US: ") and message in line, line
    assert "expected entries op:variant=us[/us...] separated by ';'" in line


def test_well_formed_fake_us_entries_are_taken(tmp_path):
    """An empty entry (a trailing ';') is no error; decimals and several rounds are taken."""
    result, _ = run(tmp_path, STRUCTOPS_AUTOTUNE_FAKE_US=FAKE_US.replace("=40", "=40.5/39") + ";")
    mm = next(d for d in result["decisions"] if d["op"] == "mm.out")
    assert mm["pick"] == "aten" and next(t["us"] for t in mm["timings"] if t["variant"] == "aten") == 39


# A functional add of 256 MiB tuned with its address space capped at what the call itself needs
# plus half that: timing its variants into scratch copies of the output does not fit.
TIMED_INTO_THE_OUTPUT = textwrap.dedent("""
    import json, resource, torch, structops
    from structops import autotune
    n = 2**28
    x = torch.ones(n, dtype=torch.uint8)
    structops.add(x[: 2**20], x[: 2**20])  # threads and allocator arenas made before the cap
    vm = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmSize:"))
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (vm + n + n // 2, hard))
    y = structops.add(x, x)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    assert bool((y == 2).all())
    print(json.dumps(autotune.decisions()))
""")


def test_timing_writes_into_the_calls_own_output(tmp_path):
    """The variants of a functional call are timed into its output, which each overwrites whole: the
    first call needs no memory beyond the call's own (a scratch output per variant had needed the
    output's size again, and under this cap every variant raised)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("STRUCTOPS_AUTOTUNE")}
    r = subprocess.run(
        [sys.executable, "-c", TIMED_INTO_THE_OUTPUT],
        env={**environ, "STRUCTOPS_AUTOTUNE_CACHE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    (add,) = [d for d in json.loads(r.stdout.strip().splitlines()[-1]) if d["key"] == [2**28]]
    assert add["source"].startswith("tuned") and all(t["us"] is not None for t in add["timings"]), add


# Calls whose output is also an input (inplace, out=self) and too large for a scratch copy (16 MiB).
UNTIMED = textwrap.dedent("""
    import json, torch, structops
    from structops import autotune
    x, y = torch.ones(2**23), torch.full((2**23,), 2.0)
    structops.add_(x, y)
    structops.add(x, y, out=x)
    assert bool((x == 5).all()), "timing must not write an input"
    counters = autotune.counters()
    z = structops.add(x, y)
    assert bool((z == 7).all())
    print(json.dumps({"untimed": counters, "decisions": autotune.decisions()}))
""")


def test_a_call_writing_an_input_times_nothing_it_would_have_to_copy(tmp_path):
    """An inplace call (or an out= that is an input) cannot be timed into its output: it is timed on
    a scratch copy up to 16 MiB, and beyond runs untimed, deciding nothing, so the next call of the
    bucket with an output of its own tunes it."""
    result, stderr = run(tmp_path, script=UNTIMED, STRUCTOPS_AUTOTUNE_FAKE_US="", STRUCTOPS_AUTOTUNE_LOG="1")
    assert result["untimed"] == [0, 0]
    assert stderr.count("(not timed: timing would need a scratch copy of an output the call also reads") == 2
    (add,) = result["decisions"]
    assert add["op"] == "add.out" and add["source"].startswith("tuned")


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_a_corrupt_cache_file_warns_once_and_is_rewritten(tmp_path, damage):
    run(tmp_path)
    victim = files(tmp_path)[0]
    text = victim.read_text()
    victim.write_text({"garbage": "not json {", "truncated": text[: len(text) // 2], "empty": ""}[damage])
    result, stderr = run(tmp_path)
    assert stderr.count("is corrupt or truncated") == 1, stderr
    timed, hits = result["counters"]
    assert timed >= 2 and hits == 2  # the damaged decision is re-timed, the other two are read
    json.loads(victim.read_text())  # rewritten whole


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "too large"])
def test_a_decision_path_that_is_no_decision_file_is_not_read(tmp_path, kind):
    """A FIFO would block the read forever, /dev/zero would read without end: only regular files
    of a decision file's size are read; the decision is re-timed and written in their place."""
    run(tmp_path)
    victim = files(tmp_path)[0]
    victim.unlink()
    if kind == "fifo":
        os.mkfifo(victim)
    elif kind == "link to /dev/zero":
        victim.symlink_to("/dev/zero")
    else:
        victim.write_text("{" + " " * (1 << 17) + "}")
    result, stderr = run(tmp_path)
    message = "is larger than a decision file" if kind == "too large" else "is not a regular file"
    assert stderr.count(message) == 1, stderr
    assert result["counters"][1] == 2  # the other two decisions are read
    assert victim.is_file() and not victim.is_symlink()
    json.loads(victim.read_text())


def test_an_empty_cache_dir_setting_keeps_decisions_in_memory(tmp_path):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("STRUCTOPS_AUTOTUNE")}
    environ["STRUCTOPS_AUTOTUNE_CACHE_DIR"] = ""
    environ["HOME"] = environ["XDG_CACHE_HOME"] = str(tmp_path / "home")
    r = subprocess.run(
        [sys.executable, "-c", SCRIPT + "print(repr(autotune.cache_dir()))"],
        env=environ,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().splitlines()[-1] == "''"
    assert json.loads(r.stdout.strip().splitlines()[-2])["counters"][0] >= 6  # tuned, in memory
    assert not list(tmp_path.rglob("*.json")), "an empty setting must not write anywhere"


def test_an_unwritable_cache_dir_warns_once_and_keeps_decisions_in_memory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache dir's parent should be")
    result, stderr = run(blocker / "cache")
    assert stderr.count("cannot write the cache dir") == 1, stderr
    assert sum(d["source"] == "tuned" for d in result["decisions"]) == 3


def test_pinned_variants_run_untimed(tmp_path):
    result, _ = run(tmp_path, STRUCTOPS_AUTOTUNE_PIN="sum.IntList_out=columns,mm.out=blocked")
    assert result["counters"] == [0, 0] and not files(tmp_path)
    # `columns` is not eligible for a full reduction: that call is decided as if unpinned.
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import torch, structops; print(structops.sum(torch.ones(4, 5), None).item())",
        ],
        env={
            **os.environ,
            "STRUCTOPS_AUTOTUNE_PIN": "sum.IntList_out=columns",
            "STRUCTOPS_AUTOTUNE_CACHE_DIR": str(tmp_path),
        },
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0 and r.stdout.strip() == "20.0", r.stderr


def test_a_pin_naming_no_variant_raises():
    with (
        autotune.pin("mm.out", "nonexistent"),
        pytest.raises(RuntimeError, match="mm.out has no variant 'nonexistent'.*blocked, aten"),
    ):
        structops.mm(torch.ones(2, 2), torch.ones(2, 2))


def test_disabled_tuning_runs_the_first_eligible_variant(tmp_path):
    result, _ = run(tmp_path, STRUCTOPS_AUTOTUNE="0")
    assert result["counters"] == [0, 0] and result["decisions"] == [] and not files(tmp_path)


def test_a_variant_that_raises_is_excluded_and_logged(tmp_path):
    result, stderr = run(tmp_path, STRUCTOPS_AUTOTUNE_FAIL="mm.out:aten", STRUCTOPS_AUTOTUNE_LOG="1")
    mm = next(d for d in result["decisions"] if d["op"] == "mm.out")
    assert mm["pick"] == "blocked"
    aten = next(t for t in mm["timings"] if t["variant"] == "aten")
    assert aten["us"] is None and "injected failure" in aten["error"]
    assert "mm.out cpu Float key=[128, 128, 128] -> blocked (tuned" in stderr
    assert "aten raised: injected failure" in stderr


def test_one_log_line_per_decision(tmp_path):
    result, stderr = run(tmp_path, STRUCTOPS_AUTOTUNE_LOG="1")
    lines = [line for line in stderr.splitlines() if line.startswith("structops.autotune: ")]
    assert len(lines) == len(result["decisions"]) == 3


def test_report_lists_the_decisions_of_this_process():
    structops.mm(torch.randn(33, 17), torch.randn(17, 9))
    text = autotune.report()
    assert "mm.out" in text and "[64, 32, 16]" in text
    assert autotune.cache_dir() == os.environ["STRUCTOPS_AUTOTUNE_CACHE_DIR"]


def test_pins_apply_per_device_type_and_are_restored():
    x = torch.randn(64, 48)
    with autotune.pin("sum.IntList_out@cpu", "columns"):
        torch.testing.assert_close(structops.sum(x, [1]), x.sum(1))
    with autotune.pin("sum.IntList_out@cuda", "nonexistent"):  # another device type's pin is not consulted
        torch.testing.assert_close(structops.sum(x, [0]), x.sum(0))


@pytest.mark.parametrize(
    ("rounds", "verdict"),
    [
        ([[100, 200], [101, 210], [100, 205]], (0, True)),  # clearly faster
        ([[200, 100], [210, 101], [205, 100]], (1, True)),
        ([[100, 102], [101, 102], [100, 103]], (0, True)),  # truly tied: the first declared
        ([[102, 100], [103, 101], [102, 100]], (0, True)),
        # A loaded machine: the fast variant's calls mostly snapped to a scheduler tick. Its best
        # round shows it is fastest, but the rounds cannot tell how much: not resolved.
        ([[145, 12000], [12000, 12018], [11983, 12000]], (0, False)),
        ([[12000, 145], [12018, 12000], [12000, 11983]], (1, False)),
        ([[100, -1], [101, -1], [100, -1]], (0, True)),  # the other one raised
        ([[-1, -1]], (-1, False)),
    ],
)
def test_judge_picks_clear_winners_and_true_ties_and_leaves_noise_unresolved(rounds, verdict):
    assert structops._C._autotune_judge(rounds) == verdict


def test_an_unresolved_decision_runs_but_is_not_saved(tmp_path):
    """Timings that stay ambiguous in every round (as under heavy load: one clean round of rows'
    nine): the fastest best round runs, nothing is written, and the next process tunes again.
    (Two clean rounds of four would resolve it: the median round then shows rows is faster.)"""
    noisy = "sum.IntList_out:rows=145" + "/12000" * 8 + ";sum.IntList_out:columns=12000"
    first, _ = run(tmp_path, STRUCTOPS_AUTOTUNE_FAKE_US=f"{noisy};mm.out:blocked=80;mm.out:aten=40")
    sums = [d for d in first["decisions"] if d["op"] == "sum.IntList_out"]
    assert [d["source"] for d in sums] == ["tuned, unresolved (not saved)"] * 2
    assert all(d["pick"] == "rows" for d in sums)
    assert [json.loads(p.read_text())["pick"] for p in files(tmp_path)] == ["aten"]  # mm only
    second, _ = run(tmp_path, STRUCTOPS_AUTOTUNE_FAKE_US=FAKE_US)
    assert [d["source"] for d in second["decisions"] if d["op"] == "sum.IntList_out"] == ["tuned"] * 2


def test_the_default_cache_dir_is_named_by_the_project_header(tmp_path):
    """The manifest's `project: {autotune_cache: ...}` (structops: its name) names the folder, so
    two extensions built by the generator keep their decisions apart."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("STRUCTOPS_AUTOTUNE")}
    environ["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    r = subprocess.run(
        [sys.executable, "-c", "from structops import autotune; print(autotune.cache_dir())"],
        env=environ,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == str(tmp_path / "xdg" / "structops" / "autotune")
