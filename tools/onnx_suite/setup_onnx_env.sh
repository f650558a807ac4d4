#!/bin/bash
# Creates the environment of the current ONNX backend suite (default .venv-onnx in the
# source tree, or $TANDEM_ONNX_VENV): Debian's python3 without the system packages, with
# onnx from PyPI at the version the expected-failures list was made with
# (tests/conformance/expected_failures_current.txt). Nothing is installed into the
# system Python, whose onnx 1.12 the other tests use. Prints the python on its last line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="${TANDEM_ONNX_VENV:-$ROOT/.venv-onnx}"
ONNX_VERSION=1.23.2

if [ ! -x "$VENV/bin/python" ]; then
  echo "[onnx-env] creating $VENV" >&2
  /usr/bin/python3 -m venv "$VENV"
fi
if [ "$("$VENV/bin/python" -c 'import onnx; print(onnx.__version__)' 2>/dev/null)" != "$ONNX_VERSION" ]; then
  echo "[onnx-env] installing onnx==$ONNX_VERSION from PyPI" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "onnx==$ONNX_VERSION" >&2
fi
echo "$VENV/bin/python"
