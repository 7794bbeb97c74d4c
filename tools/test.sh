#!/usr/bin/env bash
# Run the whole test suite against the extension tools/setup.sh built.
set -euo pipefail
cd "$(dirname "$0")/.."
py="${STRUCTOPS_PYTHON:-.venv/bin/python}"
exec "$py" -m pytest "$@"
