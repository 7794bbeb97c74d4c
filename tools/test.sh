#!/usr/bin/env bash
# Run the whole test suite against the extension tools/setup.sh built.
# With pytest-xdist (setup.sh installs it) the tests run in one process per core; the files whose
# tests share one costly fixture or spawn processes of their own run in one process, one after the
# other (their `xdist_group`). STRUCTOPS_TEST_WORKERS=N sets the number of processes, 0 runs the
# tests in this one (pytest's own -n also wins over the default here).
set -euo pipefail
cd "$(dirname "$0")/.."
py="${STRUCTOPS_PYTHON:-.venv/bin/python}"
workers="${STRUCTOPS_TEST_WORKERS:-auto}"
if [[ "$workers" != 0 ]] && "$py" -c "import xdist" 2>/dev/null; then
  set -- -n "$workers" --dist loadgroup "$@"
fi
exec "$py" -m pytest "$@"
