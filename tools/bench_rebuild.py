"""How long the op author's loop takes: edit one op, rebuild with the README's command, revert.

    .venv/bin/python tools/bench_rebuild.py              # every scenario
    .venv/bin/python tools/bench_rebuild.py formula      # some of them
    .venv/bin/python tools/bench_rebuild.py --clean      # a clean build (removes build/ first)

Each scenario makes one real edit (the generated or compiled code changes; a comment in the YAML
would rebuild nothing), times the README's rebuild command (`bash tools/setup.sh`: pip's editable
rebuild, then the demo) and the CPU emulator's rebuild that the next test run makes, restores the
file and rebuilds again. It prints the wall time of each, the part ninja spent compiling and
linking, and the files it recompiled (from ninja's log), so a slow rebuild names its cause.
Needs a finished `bash tools/setup.sh` first. `--clean` times the README's first command from an
empty build/ instead: ninja's span (the compile) and its slowest steps.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "structops" / "native_functions.yaml"


@dataclass(frozen=True)
class Scenario:
    name: str
    what: str
    path: Path
    edit: Callable[[str], str]  # the file's text -> the edited text


def _formula(op_line: str, wrap: str) -> Callable[[str], str]:
    """Rewrite the `pointwise:` formula of the entry whose func line starts with op_line
    (`wrap` formats the old formula: "({}) * 1")."""

    def edit(text: str) -> str:
        start = text.index(f"- func: {op_line}")
        m = re.compile(r'pointwise: "([^"]*)"').search(text, start)
        assert m is not None, op_line
        return text[: m.start(1)] + wrap.format(m.group(1)) + text[m.end(1) :]

    return edit


def _append(line: str) -> Callable[[str], str]:
    return lambda text: text + line


SCENARIOS = (
    Scenario(
        "formula",
        "a pointwise formula (bias_gelu) in native_functions.yaml",
        MANIFEST,
        _formula("bias_gelu.out", "({}) * 1"),
    ),
    Scenario(
        "formula12",
        "a pointwise formula over 12 dtypes, complex included (mul: self * other -> other * self)",
        MANIFEST,
        _formula("mul.out", "other * self"),
    ),
    Scenario(
        "doc",
        "an op's doc text (mul) in native_functions.yaml",
        MANIFEST,
        lambda t: t.replace("doc: self * other", "doc: self times other", 1),
    ),
    Scenario(
        "kernel",
        "a hand-written kernel file (max_pool2d: csrc/ops/pool/cpu.cpp)",
        ROOT / "structops/csrc/ops/pool/cpu.cpp",
        _append("// edited by tools/bench_rebuild.py\n"),
    ),
    Scenario(
        "reduce",
        "a hand-written kernel file (sum: csrc/ops/reduce/cpu_sum.cpp)",
        ROOT / "structops/csrc/ops/reduce/cpu_sum.cpp",
        _append("// edited by tools/bench_rebuild.py\n"),
    ),
)


def _ninja_log() -> Path:
    logs = sorted((ROOT / "build" / "structops").glob("*/.ninja_log"))
    if not logs:
        sys.exit("no build/structops/*/.ninja_log: run `bash tools/setup.sh` first")
    return logs[0]


def _emulator_command() -> list[str] | None:
    """What the next test run does first: bring the CPU emulator of CUDA up to date
    (structgen/conformance/emulation.py); None where the build has no emulator."""
    found = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "from structops import _build; "
                "print(_build.CMAKE, _build.BUILD_DIR, _build.EMULATOR_TARGET, _build.EMULATOR)"
            ),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return [found[0], "--build", found[1], "--target", found[2]] if len(found) == 4 else None


def _rebuild(with_emulator: bool = True) -> tuple[float, float, float, list[tuple[float, str]]]:
    """The README's rebuild command, then the emulator's rebuild the next test run makes; their
    wall times, ninja's wall time over both and the recompiled files (ninja's log rows whose
    output is newer than the command's start: ninja compacts its log, so rows are picked by
    time, not by position)."""
    started_ns = time.time_ns()
    t0 = time.perf_counter()
    done = subprocess.run(["bash", "tools/setup.sh"], check=False, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        sys.exit(f"the rebuild failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    emulator = 0.0
    command = _emulator_command() if with_emulator else None
    if command is not None:
        t0 = time.perf_counter()
        done = subprocess.run(command, check=False, cwd=ROOT, capture_output=True, text=True)
        emulator = time.perf_counter() - t0
        if done.returncode != 0:
            sys.exit(f"the emulator's rebuild failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    rows = [line.split("\t") for line in _ninja_log().read_text().splitlines() if not line.startswith("#")]
    rows = [r for r in rows if int(r[2]) >= started_ns]
    steps = [((int(end) - int(start)) / 1000, out) for start, end, _, out, _ in rows]
    ninja = (max((int(r[1]) for r in rows), default=0) - min((int(r[0]) for r in rows), default=0)) / 1000
    return wall, emulator, ninja, sorted(steps, reverse=True)


def _step_name(out: str) -> str:
    """An object's name; a CUDA compile check's (nvcc --fatbin) marked as such."""
    name = Path(out).name.removesuffix(".o")
    return f"{name.removesuffix('.fatbin')} (nvcc check)" if name.endswith(".fatbin") else name


def _clean_build() -> None:
    """The README's first command from an empty build/ (the emulator is the tests' to build)."""
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    wall, _, ninja, steps = _rebuild(with_emulator=False)
    # Compiles and links only: ninja also logs every generated file as an output of the codegen step.
    steps = [(t, out) for t, out in steps if out.endswith((".o", ".gch", ".fatbin", ".so"))]
    print(f"clean build: setup.sh {wall:.0f} s, ninja {ninja:.0f} s from first to last step")
    summed = sum(t for t, _ in steps)
    print(f"{len(steps)} steps, {summed:.0f} s summed over ninja's parallel jobs; the slowest:")
    for t, out in steps[:15]:
        print(f"  {t:6.1f}  {_step_name(out)}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("scenarios", nargs="*", help=", ".join(s.name for s in SCENARIOS) + " (default: all)")
    parser.add_argument("--clean", action="store_true", help="time a clean build instead")
    args = parser.parse_args()
    if args.clean:
        _clean_build()
        return
    unknown = set(args.scenarios) - {s.name for s in SCENARIOS}
    if unknown:
        parser.error(f"unknown scenarios {sorted(unknown)}: choose from {[s.name for s in SCENARIOS]}")
    chosen = [s for s in SCENARIOS if not args.scenarios or s.name in args.scenarios]
    _rebuild()  # start from an up-to-date build
    print(f"{'edit':<10}{'rebuild (s)':>12}{'emulator (s)':>13}{'ninja (s)':>11}  recompiled (s)")
    for s in chosen:
        original = s.path.read_text()
        edited = s.edit(original)
        assert edited != original, s.name
        try:
            s.path.write_text(edited)
            wall, emulator, ninja, steps = _rebuild()
        finally:
            s.path.write_text(original)
        objects = ", ".join(
            f"{_step_name(out)} {t:.1f}" for t, out in steps if out.endswith((".o", ".fatbin"))
        )
        print(f"{s.name:<10}{wall:>12.1f}{emulator:>13.1f}{ninja:>11.1f}  {objects or '-'}")
        print(f"{'':<10}({s.what})")
        wall, emulator, ninja, _ = _rebuild()
        print(f"{'  revert':<10}{wall:>12.1f}{emulator:>13.1f}{ninja:>11.1f}")


if __name__ == "__main__":
    main()
