"""A native build (STRUCTOPS_CPU_ISA=native) refuses, on import, a CPU that lacks a feature it was
compiled for, with an ImportError that says how to fix it, before any of its code runs."""

import subprocess
import sys
import textwrap

from structops import _build, _cpu


def test_compiler_macros_map_to_cpuinfo_flags():
    flags = {"sse2", "pni", "ssse3", "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "bmi1", "bmi2", "abm"}
    built_for = ("SSE2", "SSE3", "SSSE3", "SSE4_1", "SSE4_2", "AVX", "AVX2", "FMA", "F16C", "BMI", "BMI2")
    assert _cpu.missing_features(built_for + ("LZCNT",), flags) == []
    assert _cpu.missing_features(built_for + ("AVX512F", "AVX512BF16"), flags) == ["AVX512F", "AVX512BF16"]
    # A feature the table does not know is not checked: never a refusal of a CPU that has it.
    assert _cpu.missing_features(("AVX512VP2INTERSECT",), flags) == []


def test_this_build_runs_here():
    """Every feature the library was compiled for is one this CPU has (the import worked)."""
    # Every x86-64 compiler defines SSE2 for a native build: the record is read right. A portable
    # build records nothing, and has nothing to check.
    assert not _build.CPU_FEATURES or "SSE2" in _build.CPU_FEATURES
    assert _cpu.missing_features(_build.CPU_FEATURES, _cpu._cpuinfo_flags() or set()) == []


def test_a_cpu_without_the_features_is_refused_before_the_library_loads():
    # A library built for AVX2 (whatever this build records) on a CPU whose /proc/cpuinfo lists
    # only SSE2: the import must fail, with the library not loaded.
    script = textwrap.dedent("""
        import io, pathlib, sys, types, torch
        build = types.ModuleType("structops._build")
        build.CPU_FEATURES = ("SSE2", "AVX", "AVX2", "FMA")
        sys.modules["structops._build"] = build
        path_open = pathlib.Path.open
        def fake(self, *args, **kwargs):
            if str(self) == "/proc/cpuinfo":
                return io.StringIO("processor\\t: 0\\nflags\\t\\t: fpu sse sse2\\n")
            return path_open(self, *args, **kwargs)
        pathlib.Path.open = fake
        try:
            import structops
        except ImportError as e:
            print("ImportError:", e)
        print("loaded:", "structops._C" in sys.modules, hasattr(torch.ops.structops, "add"))
    """)
    out = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "ImportError: structops was compiled for the CPU of the machine that built it" in out.stdout
    assert "lacks AVX, AVX2, FMA" in out.stdout  # names what is missing
    assert "STRUCTOPS_CPU_ISA=portable" in out.stdout  # and how to fix it
    assert "loaded: False False" in out.stdout
