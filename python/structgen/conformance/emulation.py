"""The ops' CUDA path on the CPU: generated wrappers, host glue and device code built as host C++
(lib<target>_cuda_emu.so, the <target>_cuda_emu of add_generated_extension) and run by the emulator
in csrc/emulator (docs/cuda_emulation.md)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from structgen.codegen.dest.conformance_suite import SuiteSpec
from structgen.conformance.spec import under_test


def built_emulator() -> Path:
    """The emulator library of the package under test (lib<target>_cuda_emu.so),
    built (or brought up to date: only what changed recompiles) in its build folder. It is a test
    artifact, so `pip install` leaves it out and the first test that runs a CUDA kernel on the CPU
    builds it (a few minutes for a package of 80 ops). A failed build is reported by every
    later call without building again."""
    path, error = _build_emulator()
    if error:
        raise AssertionError(error)
    return path


@functools.cache
def _build_emulator() -> tuple[Path, str]:
    return build_emulator(under_test().python_package)


def build_emulator(name: str) -> tuple[Path, str]:
    """The emulator library of the installed package ``name``, built or brought up to date, one
    build at a time; or why there is none. tools/setup.sh calls it after the install
    (`python -m structgen.conformance.emulation NAME`), so that no test process waits for it."""
    import fcntl
    import importlib
    import subprocess

    package = importlib.import_module(name)
    build = importlib.import_module(f"{name}._build")  # where it was built (its CMake writes it)
    if not build.EMULATOR:
        return Path(), (
            f"this build of {name} has no CPU emulator of CUDA (torch has CUDA, or "
            "STRUCTGEN_CUDA_EMULATION=OFF): rebuild with STRUCTGEN_CUDA_EMULATION=ON"
        )
    folder = Path(build.BUILD_DIR)
    with open(folder / "emulator.lock", "w") as lock:  # one build at a time (parallel test processes)
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(
            [build.CMAKE, "--build", str(folder), "--target", build.EMULATOR_TARGET],
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        return Path(), f"building the CPU emulator of CUDA failed:\n{(done.stdout + done.stderr)[-6000:]}"
    # The emulator binds to the library this process loaded (the installed one): built from older
    # sources than the emulator, its wrappers would not match the emulator's.
    built = Path(build.LIBRARY)
    installed = _loaded(built.name) or Path(package.__file__).with_name(built.name)
    if built.stat().st_mtime > installed.stat().st_mtime:
        return Path(), (
            f"{installed} is older than the sources the emulator was just built from: rebuild {name} first"
        )
    return folder / build.EMULATOR, ""


def _loaded(name: str) -> Path | None:
    """The file of the shared library ``name`` this process has mapped (an editable install
    loads it from the build folder, not from beside the package's sources)."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        path = line.split(maxsplit=5)[-1]
        if path.endswith(f"/{name}"):
            return Path(path)
    return None


def namespace() -> str:
    """torch.ops.<package>_emu: where the emulated CUDA wrappers register (wrappers.cpp.j2)."""
    return f"{under_test().name}_emu"


def checks() -> Any:
    """torch.ops.<package>_emu_checks: the emulator's own controls (csrc/emulator/emulator_checks.cpp)."""
    return getattr(torch.ops, f"{namespace()}_checks")


@functools.cache
def emulated_library() -> torch.library.Library:
    """torch.ops.<package>_emu: every op's CUDA path registered for CPU tensors, with the
    package's own schemas. Loaded once per process: a second definition of the namespace would
    fail."""
    path = built_emulator()
    prefix = f"{under_test().name}::"
    library = torch.library.Library(namespace(), "DEF")
    names = {n.partition(".")[0] for n in torch._C._dispatch_get_all_op_names() if n.startswith(prefix)}
    for name in sorted(names):
        for schema in torch._C._jit_get_schemas_for_operator(name):
            library.define(str(schema).removeprefix(prefix))
    torch.ops.load_library(str(path))
    return library


def emulated(spec: SuiteSpec) -> SuiteSpec:
    """``spec`` with its overloads resolved in torch.ops.<package>_emu."""
    emulated_library()
    return dataclasses.replace(spec, namespace=namespace())


POISON, OTHER_POISON = 0xFF, 0x00  # unwritten shared memory: NaN / -1, then 0.0 / 0


def poison_checked(call: Callable[[], Any], what: str) -> Any:
    """call()'s result (a call of an emulated op), after checking that it reads no shared memory
    that no thread wrote: where one of its kernels used shared memory, ``call`` runs again with
    another poison in unwritten shared memory and must give the same bits. If it does not, each
    kernel that used shared memory is poisoned alone to find the ones whose reads change it."""
    controls = checks()
    controls.take_shared_memory_kernels()
    result = call()
    kernels = controls.take_shared_memory_kernels()
    if not kernels or same_bits(result, poisoned(call, "")):
        return result
    readers = [k for k in kernels if not same_bits(result, poisoned(call, k))] or kernels
    raise AssertionError(
        f"{what}: {' and '.join(readers)} read{'s' if len(readers) == 1 else ''} shared memory no thread "
        f"wrote: the result changes when unwritten shared memory holds {OTHER_POISON:#04x} bytes instead "
        f"of {POISON:#04x} (docs/cuda_emulation.md)"
    )


def poisoned(call: Callable[[], Any], kernel: str) -> Any:
    """call() with OTHER_POISON in the unwritten shared memory of ``kernel`` (every kernel: "")."""
    checks().set_shared_poison(OTHER_POISON, kernel)
    try:
        return call()
    finally:
        checks().set_shared_poison(POISON)


def same_bits(a: Any, b: Any) -> bool:
    """Whether two results are the same bytes (NaN payloads and signed zeros included)."""
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(same_bits(x, y) for x, y in zip(a, b, strict=True))
    if not isinstance(a, torch.Tensor):
        return a == b
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(_bytes(a), _bytes(b))


def _bytes(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(-1).view(torch.uint8)


if __name__ == "__main__":  # tools/setup.sh: the package's emulator, where its build configured one
    import importlib
    import sys

    if importlib.import_module(f"{sys.argv[1]}._build").EMULATOR:
        sys.exit(build_emulator(sys.argv[1])[1] or None)
