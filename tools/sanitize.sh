#!/usr/bin/env bash
# The extension built with AddressSanitizer + UndefinedBehaviorSanitizer, running the runtime tests,
# the CUDA kernels on the CPU emulator (tests/cuda_emu) and the call fuzzer (a script, not part of
# CI: the build takes ~15 min on 2 cores).
#
#   bash tools/sanitize.sh                      # tests/runtime + tests/cuda_emu + tests/fuzz/test_call_fuzz.py
#   bash tools/sanitize.sh tests/runtime/test_ops.py -k pow
#
# A separate virtual environment (.venv-sanitize) and build folder (build/sanitize), so the normal
# build stays as it is. -fwrapv: integer wrap-around is torch's semantics for integer tensors, so
# UBSan's signed-overflow check would report what torch intends. torch itself is not instrumented;
# libasan is preloaded into Python, leak checking is off (CPython's allocations would drown it).
set -euo pipefail
cd "$(dirname "$0")/.."

py=.venv-sanitize/bin/python
if [[ ! -x "$py" ]]; then
  python3 -m venv .venv-sanitize
  "$py" -m pip install --quiet torch==2.13.0
  "$py" -m pip install --quiet "scikit-build-core>=0.10" "pybind11>=2.12" pyyaml jinja2 ninja "cmake>=3.25" \
    pytest hypothesis expecttest numpy
fi
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -fwrapv"
"$py" -m pip install --quiet --no-build-isolation -e . --config-settings=build-dir=build/sanitize/structgen
"$py" -m pip install --quiet --no-build-isolation -e structops \
  --config-settings=build-dir=../build/sanitize/structops \
  --config-settings=cmake.define.STRUCTGEN_CUDA_CHECK=OFF \
  --config-settings=cmake.define.CMAKE_CXX_FLAGS="$flags" \
  --config-settings=cmake.define.CMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
  --config-settings=cmake.define.CMAKE_MODULE_LINKER_FLAGS="-fsanitize=address,undefined"

export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:symbolize=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
if [[ $# -eq 0 ]]; then
  set -- tests/runtime tests/cuda_emu tests/fuzz/test_call_fuzz.py
fi
exec "$py" -m pytest -q -p no:cacheprovider "$@"
