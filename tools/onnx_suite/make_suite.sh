#!/bin/bash
# Writes the current ONNX backend suite into OUT_DIR (node/ and simple/ test folders), once
# per onnx version: makes the environment (setup_onnx_env.sh), then has onnx write its
# cases (generate_suite.py). Usage: tools/onnx_suite/make_suite.sh OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out=${1:?usage: make_suite.sh OUT_DIR}
py="$(bash "$here/setup_onnx_env.sh" | tail -1)"
version="$("$py" -c 'import onnx; print(onnx.__version__)')"
if [ -f "$out/ONNX_VERSION" ] && [ "$(cat "$out/ONNX_VERSION")" = "$version" ]; then
  echo "current ONNX suite (onnx $version) already in $out"
  exit 0
fi
rm -rf "$out"
"$py" "$here/generate_suite.py" "$out"
echo "$version" > "$out/ONNX_VERSION"
