"""The check that a native build (STRUCTGEN_CPU_ISA=native, the default) runs on a CPU it was compiled
for: such a library may use any instruction of the build machine anywhere, even in the code that runs
when it loads, so a CPU without one would die of SIGILL. Checked before the library loads; Linux only
(where /proc/cpuinfo lists the CPU's flags)."""

from pathlib import Path

# The compiler's ISA macro (without its underscores) -> the flag /proc/cpuinfo lists for it: the
# features gcc and clang may use in code compiled from plain C++. A macro missing here is not
# checked (so a name this table does not know never refuses a CPU that has the feature).
_CPUINFO_FLAG = {
    "SSE": "sse",
    "SSE2": "sse2",
    "SSE3": "pni",
    "SSSE3": "ssse3",
    "SSE4_1": "sse4_1",
    "SSE4_2": "sse4_2",
    "SSE4A": "sse4a",
    "POPCNT": "popcnt",
    "LZCNT": "abm",
    "MOVBE": "movbe",
    "BMI": "bmi1",
    "BMI2": "bmi2",
    "F16C": "f16c",
    "FMA": "fma",
    "AVX": "avx",
    "AVX2": "avx2",
    "AVXVNNI": "avx_vnni",
    "AVX512F": "avx512f",
    "AVX512BW": "avx512bw",
    "AVX512CD": "avx512cd",
    "AVX512DQ": "avx512dq",
    "AVX512VL": "avx512vl",
    "AVX512IFMA": "avx512ifma",
    "AVX512VBMI": "avx512vbmi",
    "AVX512VBMI2": "avx512_vbmi2",
    "AVX512VNNI": "avx512_vnni",
    "AVX512BITALG": "avx512_bitalg",
    "AVX512VPOPCNTDQ": "avx512_vpopcntdq",
    "AVX512BF16": "avx512_bf16",
    "AVX512FP16": "avx512_fp16",
}


def missing_features(built_for: tuple[str, ...], cpu_flags: set[str]) -> list[str]:
    """The features of `built_for` (compiler macro names) that `cpu_flags` (/proc/cpuinfo) lacks."""
    return [f for f in built_for if f in _CPUINFO_FLAG and _CPUINFO_FLAG[f] not in cpu_flags]


def _cpuinfo_flags() -> set[str] | None:
    """The first CPU's flags; reads only up to them (the file lists every core: import time)."""
    try:
        with Path("/proc/cpuinfo").open() as lines:
            for line in lines:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        return None
    return None


def check(package: str, built_for: tuple[str, ...]) -> None:
    """Raise ImportError if this CPU lacks a feature the package's library was compiled for."""
    flags = _cpuinfo_flags() if built_for else None
    if flags is None:
        return
    missing = missing_features(built_for, flags)
    if missing:
        raise ImportError(
            f"{package} was compiled for the CPU of the machine that built it (-march=native), and this "
            f"CPU lacks {', '.join(missing)} — rebuild it here, or build a portable library for any "
            f"x86-64 with the CMake option STRUCTGEN_CPU_ISA=portable"
        )
