#!/bin/bash
# Creates the Keras environment of the Keras/tf2onnx export test (default .venv-keras in
# the source tree, or $TANDEM_KERAS_VENV): Debian's python3 without the system packages,
# with tensorflow-cpu (Keras 3 comes with it) and tf2onnx from PyPI (~1.5 GB). Prints the
# environment's python on its last line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
exec bash "$ROOT/tools/python_env.sh" keras-env "${TANDEM_KERAS_VENV:-$ROOT/.venv-keras}" \
  "import tensorflow, keras, tf2onnx" -- tensorflow-cpu tf2onnx
