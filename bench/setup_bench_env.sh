#!/bin/bash
# Creates the benchmarks' virtual environment (default .venv-bench in the source tree,
# or $TANDEM_BENCH_VENV): Debian's python3 with its system packages visible (torch 1.13
# with OpenBLAS, onnx, numpy — the tests' own) plus onnxruntime from PyPI. Nothing is
# installed into the system Python (python3-venv comes from tools/setup.sh). Prints the
# environment's python on its last line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec bash "$ROOT/tools/python_env.sh" bench-env "${TANDEM_BENCH_VENV:-$ROOT/.venv-bench}" \
  --system-site-packages "import onnxruntime" -- onnxruntime
