#!/usr/bin/env bash
# On a machine with a GPU and a CUDA torch already installed (no network needed): build the
# extension against that torch, then, most important first, the tests that touch CUDA, a
# compute-sanitizer memcheck of every op's CUDA kernels, the GPU benchmarks, and the rest of the
# suite. Logs go to $LOG_DIR (default /tmp/structops-gpu).
#   STRUCTOPS_PYTHON=python3 GPU_CHECK_BUDGET=560 bash tools/gpu_check.sh
# GPU_CHECK_BUDGET (seconds, default none): a lent GPU is held for minutes, so each stage gets what
# is left after the later stages' shares; an interrupted pytest still prints its summary (SIGINT).
set -uo pipefail
cd "$(dirname "$0")/.."
py="${STRUCTOPS_PYTHON:-python3}"
logs="${LOG_DIR:-/tmp/structops-gpu}"
mkdir -p "$logs"
export PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=1
deadline=$((SECONDS + ${GPU_CHECK_BUDGET:-100000}))
left() { echo $((deadline - SECONDS)); }
# run_for <seconds> <log> <command...>: SIGINT at the limit (pytest then reports), KILL 20 s later.
run_for() {
  local limit=$1 log=$2
  shift 2
  if ((limit < 15)); then echo "skipped (no time left): $*" | tee -a "$log"; return 0; fi
  local start=$SECONDS
  timeout -s INT -k 20 "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  echo "$(basename "$log"): rc=$rc in $((SECONDS - start)) s (limit $limit s)"
}

{
  "$py" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"
  nvcc --version | tail -2
  for c in c++ g++ gcc "${CXX:-}"; do [[ -n "$c" ]] && echo "$c -> $(command -v "$c") $(readlink -f "$(command -v "$c")")"; done
  env | grep -E '^(CXX|CC|CUDAHOSTCXX|LDFLAGS|CXXFLAGS|CFLAGS|CPATH|LIBRARY_PATH|PATH)=' || true
} >"$logs/env.txt" 2>&1
cat "$logs/env.txt"

# The GPU image's compiler wrapper links libstdc++ statically into shared objects, and integer-
# formatting error paths then crash in that private copy (docs/pointwise.md). Build with the system
# g++ and name the shared libstdc++ before any object: an archive then adds nothing, since every
# symbol it holds is already defined. The readelf line below says what the extension links.
if [[ -x /usr/bin/g++ ]]; then export CXX=/usr/bin/g++ CC=/usr/bin/gcc CUDAHOSTCXX=/usr/bin/g++; fi
LDFLAGS="${LDFLAGS:-}"
export LDFLAGS="${LDFLAGS//-static-libstdc++/} -Wl,--no-as-needed -l:libstdc++.so.6"
# Machine code for this GPU alone unless told otherwise: the build is on the lease's clock.
cap=$("$py" -c "import torch; print('%d.%d' % torch.cuda.get_device_capability(0))")
export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-$cap}"
start=$SECONDS
STRUCTOPS_PYTHON="$py" bash tools/setup.sh >"$logs/build.log" 2>&1 || { tail -80 "$logs/build.log"; exit 1; }
echo "build: $((SECONDS - start)) s (CXX=${CXX:-default}, arch $TORCH_CUDA_ARCH_LIST)"
(cd build/structops/*/ && ninja -t commands | grep -m1 -- "-o _C" | cut -c1-700)
for so in build/structops/*/_C*.so build/structops/*/structops_ops_generated/python/structops/libstructops_ops.so; do
  echo "$so: $(readelf -d "$so" | grep -o 'NEEDED.*libstdc++[^]]*' || echo 'no shared libstdc++ (static copy)')"
done
"$py" -c "
import torch, structops
try:
    structops.sum(torch.ones(2, device='cuda'), 5)
except IndexError as e:
    print('integer-formatting error path: IndexError, no crash:', str(e)[:80])
" || echo "integer-formatting error path: rc=$? (a crash here is the static libstdc++)"

workers=$("$py" -c "import xdist" 2>/dev/null && echo "-n 14" || echo "")
timeout_opt=$("$py" -c "import pytest_timeout" 2>/dev/null && echo "--timeout=240" || echo "")
pytest=("$py" -m pytest -q -rfE -p no:cacheprovider $timeout_opt)

# 1. Everything that runs CUDA code: the conformance checks on cuda, tests/runtime/test_cuda*.py, ...
run_for $(($(left) - 170)) "$logs/tests_cuda.log" "${pytest[@]}" $workers -k cuda tests \
  --junitxml="$logs/junit_cuda.xml"
tail -25 "$logs/tests_cuda.log"

# 2. memcheck: every op's CUDA kernels once (the float32 reference samples, forward and backward).
if command -v compute-sanitizer >/dev/null; then
  # Without torch's caching allocator, so that a read past a tensor's end is past an allocation.
  t=$(($(left) - 100)); ((t > 150)) && t=150
  run_for $t "$logs/sanitizer.log" env PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck \
    --error-exitcode 3 --print-limit 20 "${pytest[@]}" tests/conformance -k "reference-cuda-float32 or gradients-cuda"
  grep -E "ERROR SUMMARY|passed|failed|error" "$logs/sanitizer.log" | tail -8
fi

# 3. The GPU benchmarks, side by side with torch.
if [[ "${SKIP_BENCH:-0}" != 1 ]]; then
  t=$(($(left) - 40)); ((t > 70)) && t=70
  run_for $t "$logs/bench.log" "$py" tools/bench_pointwise.py --quick "$@"
  cat "$logs/bench.log"
  t=$(($(left) - 30)); ((t > 60)) && t=60
  run_for $t "$logs/bench_ops.log" "$py" tools/bench_ops.py --quick --device cuda
  cat "$logs/bench_ops.log"
  t=$(($(left) - 5)); ((t > 30)) && t=30
  run_for $t "$logs/profile_call.log" "$py" tools/profile_call.py --device cuda --tables
  head -12 "$logs/profile_call.log"
fi

# 4. The rest of the suite (CPU-only tests, also run by CI) with the time that is left.
run_for $(($(left) - 10)) "$logs/tests_rest.log" "${pytest[@]}" $workers -k "not cuda" tests
tail -15 "$logs/tests_rest.log"
