#!/bin/bash
# Makes the current ONNX backend suite's environment (default .venv-onnx in the source
# tree, or $TANDEM_ONNX_VENV) from its lock: onnx at the version the expected-failures list
# was made with, and ONNX Runtime (tools/python_envs/onnx.in says why). Prints the python
# on its last line.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/../python_env.sh" onnx
