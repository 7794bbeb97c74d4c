"""Manifest fuzzer: mutants of the real manifest and of the fixture either stop the generator with a
SpecError at a line of the file (``native_functions.yaml:LINE: ...``) or generate Python that parses
and, sampled, C++ that g++ accepts (-fsyntax-only). A traceback or a hang is a failure.

Budget and seeds: tests/fuzz/settings.py. A failure names the seed, the case, the mutation
(shrunk to the fewest steps that still fail) and the mutant as a diff against the manifest.
"""

from __future__ import annotations

import ast
import difflib
import random
import re
import shutil
import signal
import subprocess
import time
import traceback
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from structgen.codegen.errors import SpecError
from structgen.codegen.gen import OutputKind, generate, outputs
from structgen.codegen.manifest import load_manifest

from tests.fuzz import mutate, settings

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = {
    "fixture": (ROOT / "tests/codegen/fixtures/native_functions.yaml", (150, 20_000)),
    "real": (ROOT / "structops" / "native_functions.yaml", (15, 2_000)),  # ~0.6 s a case
}
CASE_SECONDS = 30  # a mutant of the real manifest generates in < 1 s
# Cases of the CI seed (0) that hit a known defect: run on their own as strict xfails, so the CI
# budget stays on passing cases and a fix turns the xfail into an error that says to drop it.
KNOWN_DEFECTS: dict[tuple[str, int], str] = {}
# Cases that found a defect, now fixed: each runs on its own, so it stays fixed.
REGRESSIONS = {
    (
        "fixture",
        76,
    ): "a dispatch value that is a list ('dispatch: {CPU: [a]}') raised TypeError in _parse_dispatch",
}
# One g++ -fsyntax-only of a generated file takes 3-7 s on 2 cores: in CI at most one per manifest.
COMPILE_RATE, MAX_COMPILES = (0.2, 10**9) if settings.LONG else (0.05, 1)


class Hang(Exception):
    pass


@contextmanager
def time_limit(seconds: float):
    def alarm(signum, frame):
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def make_mutant(original: str, rng: random.Random, steps: list[int]) -> tuple[str, list[str]]:
    """The mutant of ``original`` made of the given steps (each step draws from its own RNG, so a
    subset of steps replays the same way) and their descriptions."""
    structural = rng.random() < 0.3
    entries = yaml.safe_load(original) if structural else None
    base, text, described = rng.random(), original, []
    for step in steps:
        step_rng = random.Random(f"{base}/{step}")
        if structural:
            described.append("structure: " + mutate.mutate_structure(entries, step_rng))
        else:
            text, _, desc = mutate.mutate_text(text, step_rng)
            described.append("text: " + desc)
    return (mutate.dump(entries) if structural else text), described


def run_generator(path: Path, out: Path) -> str | None:
    """None when the generator accepts the manifest with parsable Python or rejects it properly;
    else what went wrong."""
    lines = path.read_text(encoding="utf-8", errors="replace").count("\n") + 1
    try:
        with time_limit(CASE_SECONDS):
            manifest = load_manifest(path)
            generate(manifest, out, shards=2)
    except SpecError as e:
        m = re.match(rf"{re.escape(path.name)}:(\d+): ", str(e))
        if m is None or not 1 <= int(m[1]) <= lines:
            return f"SpecError without a line of the file (1..{lines}): {str(e)[:300]}"
        return None
    except Hang as e:
        return f"hang: {e}"
    except Exception:  # noqa: BLE001 - any other exception is the finding
        return "traceback:\n" + "".join(traceback.format_exc(limit=-4))[-2000:]
    for name in (o.path for o in outputs(manifest, 2) if o.kind is OutputKind.PYTHON):
        try:
            ast.parse((out / name).read_text(encoding="utf-8"))
        except SyntaxError as e:
            return f"generated {name} does not parse: {e}"
    return None


def syntax_check(manifest: Path, out: Path, rng: random.Random) -> str | None:
    """g++ -fsyntax-only of one generated C++ file the CPU build compiles (CMakeLists.txt)."""
    from torch.utils.cpp_extension import include_paths

    cpu_build = (OutputKind.GLUE, OutputKind.KERNELS, OutputKind.OPS)
    files = sorted(out / o.path for o in outputs(load_manifest(manifest), 2) if o.kind in cpu_build)
    source = rng.choice(files)
    flags = [f"-isystem{p}" for p in include_paths()] + [f"-I{ROOT / 'csrc/include'}", f"-I{out / 'include'}"]
    proc = subprocess.run(
        ["g++", "-std=c++20", "-fsyntax-only", *flags, str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return None if proc.returncode == 0 else f"g++ rejects {source.name}:\n{proc.stderr[-3000:]}"


def known(which: str, index: int) -> bool:
    return settings.SEED == 0 and settings.ONLY is None and (which, index) in KNOWN_DEFECTS


def shrink(original: str, rng_state: float, steps: list[int], fails) -> list[int]:
    """The fewest steps (removing one at a time) whose mutant still fails."""
    for step in list(steps):
        fewer = [s for s in steps if s != step]
        if fewer and fails(make_mutant(original, random.Random(rng_state), fewer)[0]):
            steps = fewer
    return steps


@pytest.mark.parametrize("which", sorted(MANIFESTS))
def test_manifest_mutants(which, tmp_path):
    fuzz(which, settings.case_indices(*MANIFESTS[which][1]), tmp_path)


@pytest.mark.parametrize(
    "which, index",
    [
        pytest.param(w, i, marks=pytest.mark.xfail(strict=True, reason=r))
        for (w, i), r in KNOWN_DEFECTS.items()
    ]
    + [pytest.param(w, i, id=f"regression-{w}-{i}") for (w, i) in REGRESSIONS],
)
def test_known_case(which, index, tmp_path):
    if settings.SEED != 0:
        pytest.skip("the known cases are cases of seed 0")
    fuzz(which, [index], tmp_path, known_too=True)


def fuzz(which: str, indices, tmp_path: Path, known_too: bool = False) -> None:
    path = MANIFESTS[which][0]
    original = path.read_text(encoding="utf-8")
    work = tmp_path / "native_functions.yaml"
    failures, stats, compiles = [], {"generated": 0, "rejected": 0, "compiled": 0}, 0
    started = time.monotonic()

    def problem_of(text: str) -> str | None:
        shutil.rmtree(tmp_path / "out", ignore_errors=True)
        work.write_text(text, encoding="utf-8")
        return run_generator(work, tmp_path / "out")

    for index in indices:
        if known(which, index) and not known_too:
            continue
        rng = settings.case_rng(f"manifest/{which}", index)
        state = rng.random()
        steps = list(range(rng.choice([1, 1, 1, 2, 3, 5])))
        text, described = make_mutant(original, random.Random(state), steps)
        problem = problem_of(text)
        if problem is None and (tmp_path / "out").exists():
            stats["generated"] += 1
            if compiles < MAX_COMPILES and rng.random() < COMPILE_RATE and shutil.which("g++"):
                compiles += 1
                problem = syntax_check(work, tmp_path / "out", rng)
                stats["compiled"] += 1
        elif problem is None:
            stats["rejected"] += 1
        if problem is None:
            continue
        kind = problem.split(":")[0]
        steps = shrink(original, state, steps, lambda t, k=kind: (problem_of(t) or "").split(":")[0] == k)
        text, described = make_mutant(original, random.Random(state), steps)
        saved = tmp_path / f"mutant_{index}.yaml"
        saved.write_text(text, encoding="utf-8")
        diff = "".join(
            difflib.unified_diff(original.splitlines(True), text.splitlines(True), "manifest", "mutant", n=1)
        )
        failures.append(
            f"--- case {index} of {path.relative_to(ROOT)} (seed {settings.SEED}): {problem}\n"
            f"reproduce: {settings.reproduce(f'{__file__}::test_manifest_mutants[{which}]', index)}\n"
            f"mutation: {'; '.join(described)}\nmutant: {saved}\n{diff[:3000]}"
        )
    print(
        f"manifest fuzz [{which}] seed {settings.SEED}: {stats}, {len(failures)} failures, "
        f"{time.monotonic() - started:.1f} s"
    )
    assert not failures, "\n\n".join(failures)
