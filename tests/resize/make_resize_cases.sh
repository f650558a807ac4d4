#!/bin/bash
# Writes the Resize cases (make_resize_cases.py: expected outputs from onnx.reference in
# float64) into OUT_DIR with the pinned onnx environment (tools/python_env.sh onnx).
# Usage: tests/resize/make_resize_cases.sh OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out=${1:?usage: make_resize_cases.sh OUT_DIR}
py="$(bash "$here/../../tools/onnx_suite/setup_onnx_env.sh" | tail -1)"
exec "$py" "$here/make_resize_cases.py" "$out"
