#!/bin/bash
# Creates the benchmarks' virtual environment (default .venv-bench in the source tree,
# or $TANDEM_BENCH_VENV): Debian's python3 with its system packages visible (torch 1.13
# with OpenBLAS, onnx, numpy — the tests' own) plus onnxruntime from PyPI. Nothing is
# installed into the system Python (python3-venv comes from tools/setup.sh). Prints the
# environment's python on its last line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="${TANDEM_BENCH_VENV:-$ROOT/.venv-bench}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "[bench-env] creating $VENV" >&2
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
if ! "$VENV/bin/python" -c "import onnxruntime" 2>/dev/null; then
  echo "[bench-env] installing onnxruntime from PyPI" >&2
  "$VENV/bin/pip" install --quiet --disable-pip-version-check onnxruntime >&2
fi
echo "$VENV/bin/python"
