#!/bin/bash
# Creates the environment of the current ONNX backend suite (default .venv-onnx in the
# source tree, or $TANDEM_ONNX_VENV): Debian's python3 without the system packages, with
# onnx from PyPI at the version the expected-failures list was made with
# (tests/conformance/expected_failures_current.txt), and onnxruntime, which
# tests/convert/ loads converted models in. Nothing is installed into the
# system Python, whose onnx 1.12 the other tests use. Prints the python on its last line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ONNX_VERSION=1.23.2
exec bash "$ROOT/tools/python_env.sh" onnx-env "${TANDEM_ONNX_VENV:-$ROOT/.venv-onnx}" \
  "import onnx, onnxruntime, sys; sys.exit(onnx.__version__ != '$ONNX_VERSION')" \
  -- "onnx==$ONNX_VERSION" onnxruntime
