#!/usr/bin/env bash
# Set up structgen and structops from scratch and run the demo:
#   virtual environment in .venv, torch==2.13.0 (CPU wheel), build + test dependencies,
#   the generator and runtime (structgen, this folder: its Python module _C, no operator),
#   then structops built against it from structops/native_functions.yaml (codegen runs inside
#   the CMake build, as for any outside project), then tools/demo.py.
# Re-running it is the rebuild command: pip reuses build/ and recompiles only what changed.
# STRUCTOPS_PYTHON=/path/to/python uses that interpreter and its torch instead of a new .venv
# (for machines with torch preinstalled and no network, e.g. the GPU machine).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -n "${STRUCTOPS_PYTHON:-}" ]]; then
  py="$STRUCTOPS_PYTHON"
else
  [[ -x .venv/bin/python ]] || python3 -m venv .venv
  py=.venv/bin/python
  # Exactly 2.13.0: a bare "torch" would pull a multi-GB CUDA build.
  "$py" -m pip install --quiet torch==2.13.0
  "$py" -m pip install --quiet "scikit-build-core>=0.10" "pybind11>=2.12" pyyaml jinja2 ninja "cmake>=3.25" \
    pytest pytest-xdist hypothesis expecttest numpy "ruff==0.17.6" "mypy==1.19.1" "clang-format==23.1.5"
fi

# The CUDA kernels are compile-checked with nvcc (sm_75, the oldest GPU built for) even when torch has no
# CUDA, wherever nvcc exists (AUTO; without it the build says so in one line and goes on).
# STRUCTOPS_CUDA_CHECK=ON demands it (CI), OFF skips it.
if [[ "${STRUCTOPS_CUDA_CHECK:-AUTO}" == AUTO ]] && ! command -v nvcc >/dev/null && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "structops: no nvcc found, so the CUDA kernels are not compile-checked (the tests still run them on the CPU emulator)"
fi
"$py" -m pip install --quiet --no-build-isolation -e .
"$py" -m pip install --quiet --no-build-isolation -e structops \
  --config-settings=cmake.define.STRUCTGEN_CUDA_CHECK="${STRUCTOPS_CUDA_CHECK:-AUTO}"
# The CPU emulator of the CUDA path (lib<target>_cuda_emu.so, docs/cuda_emulation.md): a test artifact
# that `pip install` leaves out, built here once per build rather than by the first test that runs a
# CUDA kernel on the CPU. Nothing to build where torch has CUDA.
"$py" -m structgen.conformance.emulation structops
"$py" tools/demo.py
