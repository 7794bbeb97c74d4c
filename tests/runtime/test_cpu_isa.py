"""A native build (STRUCTOPS_CPU_ISA=native) refuses, on import, a CPU that lacks a feature it was
compiled for, with an ImportError that says how to fix it, before any of its code runs."""

import subprocess
import sys
import textwrap

import pytest
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
    if not _build.CPU_FEATURES:
        pytest.skip("a portable build (STRUCTOPS_CPU_ISA=portable) records no CPU features")
    assert "SSE2" in _build.CPU_FEATURES  # every x86-64 compiler defines it: the record is read right
    assert _cpu.missing_features(_build.CPU_FEATURES, _cpu._cpuinfo_flags()) == []


def test_a_cpu_without_the_features_is_refused_before_the_library_loads():
    if not _build.CPU_FEATURES:
        pytest.skip("a portable build (STRUCTOPS_CPU_ISA=portable) runs on any x86-64")
    # A CPU whose /proc/cpuinfo lists only SSE2: the import must fail, with the library not loaded.
    script = textwrap.dedent("""
        import pathlib, sys, torch
        read_text = pathlib.Path.read_text
        def fake(self, *args, **kwargs):
            if str(self) == "/proc/cpuinfo":
                return "flags\\t\\t: fpu sse sse2\\n"
            return read_text(self, *args, **kwargs)
        pathlib.Path.read_text = fake
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
    assert "lacks " in out.stdout and "AVX" in out.stdout  # names what is missing
    assert "STRUCTOPS_CPU_ISA=portable" in out.stdout  # and how to fix it
    assert "loaded: False False" in out.stdout
