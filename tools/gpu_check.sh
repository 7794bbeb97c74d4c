#!/usr/bin/env bash
# On a machine with a GPU and a CUDA torch already installed (no network needed): build the
# extension against that torch, run the whole suite (CUDA parameters included) and the pointwise
# benchmark. Logs go to $LOG_DIR (default /tmp/structops-gpu).
#   STRUCTOPS_PYTHON=python3 bash tools/gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
py="${STRUCTOPS_PYTHON:-python3}"
logs="${LOG_DIR:-/tmp/structops-gpu}"
mkdir -p "$logs"
export PYTHONUNBUFFERED=1
# Known on the lent GPU image (2026-11): the built _C ends up with a private, static libstdc++
# (`ldd` lists none), and error paths that format integers segfault (docs/pointwise.md).

"$py" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"
start=$SECONDS
STRUCTOPS_PYTHON="$py" bash tools/setup.sh >"$logs/build.log" 2>&1 || { tail -60 "$logs/build.log"; exit 1; }
echo "build: $((SECONDS - start)) s"

# The whole suite, on several workers (pytest-xdist where present).
workers=$("$py" -c "import xdist" 2>/dev/null && echo "-n 8" || echo "")
start=$SECONDS
"$py" -m pytest -q $workers -p no:cacheprovider tests >"$logs/tests.log" 2>&1
echo "tests: rc=$? in $((SECONDS - start)) s"; tail -40 "$logs/tests.log"

if [[ "${SKIP_BENCH:-0}" != 1 ]]; then
  "$py" tools/bench_pointwise.py "$@" >"$logs/bench.log" 2>&1
  echo "bench: rc=$?"; cat "$logs/bench.log"
  "$py" tools/bench_ops.py --device cuda >"$logs/bench_ops.log" 2>&1
  echo "bench_ops: rc=$?"; cat "$logs/bench_ops.log"
fi
