"""A native build (STRUCTGEN_CPU_ISA=native) refuses, on import, a CPU that lacks a feature it was
compiled for, with an ImportError that says how to fix it, before any of its code runs; and the
float16/bfloat16 conversions give torch's bits with and without the CPU's conversion instructions
(the portable build takes the fallbacks). The suite runs where the project was built: g++ and
binutils' nm are there."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from structgen import _cpu

from structops import _build

ROOT = Path(__file__).resolve().parents[2]


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
    assert "STRUCTGEN_CPU_ISA=portable" in out.stdout  # and how to fix it
    assert "loaded: False False" in out.stdout


_CONVERSIONS = r"""
#include <structgen/cpu/float16.h>
#include <cstdio>
#include <vector>

// argv[1]: n floats to round; argv[2]: out: 65536 floats widened (cpu::widen, in chunks of 37 so
// that every call has a tail), the same by to_acc, n float16 and n bfloat16 rounded.
int main(int, char** argv) {
  using namespace structgen::cpu;
  std::FILE* in = std::fopen(argv[1], "rb");
  std::vector<float> x;
  for (float v; std::fread(&v, 4, 1, in) == 1;) x.push_back(v);
  std::fclose(in);
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<c10::Half> every(65536);
  for (int i = 0; i < 65536; ++i) every[i].x = static_cast<uint16_t>(i);
  std::vector<float> widened(65536), scalar(65536);
  for (int64_t i = 0; i < 65536; i += 37) {
    widen(every.data() + i, widened.data() + i, std::min<int64_t>(37, 65536 - i));
  }
  for (int i = 0; i < 65536; ++i) scalar[i] = to_acc<float>(every[i]);
  std::vector<c10::Half> half(n);
  std::vector<c10::BFloat16> bf16(n);
  for (int64_t i = 0; i < n; i += 41) {
    round_to_float16(x.data() + i, half.data() + i, std::min<int64_t>(41, n - i));
    round_to_bfloat16(x.data() + i, bf16.data() + i, std::min<int64_t>(41, n - i));
  }
  std::FILE* out = std::fopen(argv[2], "wb");
  std::fwrite(widened.data(), 4, 65536, out);
  std::fwrite(scalar.data(), 4, 65536, out);
  std::fwrite(half.data(), 2, n, out);
  std::fwrite(bf16.data(), 2, n, out);
  std::fclose(out);
}
"""


def _same_bits_or_both_nan(got, expected):
    """Equal bits, except that a NaN need only be a NaN: torch's vector conversions keep its sign
    and payload, c10's scalar ones (which structops' stores follow) write the canonical NaN."""
    nan = expected.isnan()
    assert torch.equal(got.isnan(), nan)
    bits = torch.int16 if got.element_size() == 2 else torch.int32
    assert torch.equal(got[~nan].view(bits), expected[~nan].view(bits))


@pytest.mark.parametrize("march", ["x86-64", "native"])
def test_float16_conversions_without_and_with_the_instructions_match_torch(tmp_path, march):
    """cpu/float16.h's widening and rounding, compiled for the x86-64 baseline (the portable build's
    fallbacks: bit arithmetic, c10's per-element rounding) and for this CPU (vcvtph2ps, vcvtps2ph,
    vcvtneps2bf16 where it has them): every float16 widened, and float16/bfloat16 rounding of
    every halfway point, denormals, specials and random bit patterns, as torch converts them."""
    from torch.utils.cpp_extension import include_paths

    source = tmp_path / "conversions.cpp"
    source.write_text(_CONVERSIONS)
    program = tmp_path / "conversions"
    includes = [f"-I{p}" for p in [ROOT / "csrc" / "include", *include_paths()]]
    subprocess.run(
        ["g++", "-std=c++20", "-O2", f"-march={march}", *includes, "-o", str(program), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )

    every = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(torch.float16)
    halves = every.float()
    # halfway between neighbouring float16 values (ties to even) and a little either side
    ordered = halves[~halves.isnan()].unique()
    middle = (ordered[:-1].double() + ordered[1:].double()) / 2
    near = torch.cat(
        [
            middle.float(),
            middle.float().nextafter(torch.tensor(0.0)),
            middle.float().nextafter(torch.tensor(float("inf"))),
        ]
    )
    bf16_middle = torch.arange(0, 2**16, dtype=torch.int32).mul(2**16).add(2**15).view(torch.float32)
    generator = torch.Generator().manual_seed(0)
    random_bits = torch.randint(-(2**31), 2**31, (1 << 18,), generator=generator, dtype=torch.int64)
    specials = torch.tensor(
        [
            0.0,
            -0.0,
            float("inf"),
            -float("inf"),
            float("nan"),
            1e-45,
            -1e-45,
            65504.0,
            65520.0,
            65519.99,
            6e-8,
            3e-8,
            2.9e-8,
            3.4e38,
        ]
    )
    x = torch.cat([halves, near, bf16_middle, random_bits.to(torch.int32).view(torch.float32), specials])
    inputs = tmp_path / "x.bin"
    inputs.write_bytes(x.numpy().tobytes())
    outputs = tmp_path / "out.bin"
    subprocess.run([str(program), str(inputs), str(outputs)], check=True, timeout=120)

    data = outputs.read_bytes()
    n = x.numel()
    widened = torch.frombuffer(bytearray(data[: 4 * 65536]), dtype=torch.float32)
    scalar = torch.frombuffer(bytearray(data[4 * 65536 : 8 * 65536]), dtype=torch.float32)
    half = torch.frombuffer(bytearray(data[8 * 65536 : 8 * 65536 + 2 * n]), dtype=torch.float16)
    bf16 = torch.frombuffer(bytearray(data[8 * 65536 + 2 * n :]), dtype=torch.bfloat16)
    in_order = torch.arange(0, 2**16, dtype=torch.int32).to(torch.int16).view(torch.float16).float()
    _same_bits_or_both_nan(widened, in_order)
    _same_bits_or_both_nan(scalar, in_order)
    _same_bits_or_both_nan(half, x.to(torch.float16))
    _same_bits_or_both_nan(bf16, x.to(torch.bfloat16))


def test_no_formula_is_called_per_element():
    """Every formula and formula function (structgen::pw) is inlined into its row loops: past a
    kernel file's inlining budget gcc once called gelu's formula and normcdf per element, which
    kept the loop scalar (float32 gelu at 0.17x torch). An out-of-line copy is a defined symbol."""
    from structops import _build

    library = Path(_build.LIBRARY)  # the build's: the installed copy is stripped of local symbols
    assert library.is_file(), f"{library}: the build folder of the installed package is gone"
    symbols = subprocess.run(["nm", "-C", str(library)], check=True, capture_output=True, text=True).stdout
    assert "structgen::pw::throw_zero_division()" in symbols  # nm read the symbols (not a stripped file)
    not_formulas = ("throw_zero_division", "zero_division_flag")  # the error path and its flag
    called = [
        line
        for line in symbols.splitlines()
        if ("_formula<" in line and ">::operator()" in line)
        or ("structgen::pw::" in line and not any(name in line for name in not_formulas))
    ]
    assert called == []
