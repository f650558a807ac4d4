#!/bin/bash
# Writes the current ONNX backend suite into OUT_DIR (node/ and simple/ test folders), once
# per lock of its environment: makes the environment (setup_onnx_env.sh), then has onnx
# write its cases (generate_suite.py). What onnx writes depends on its dependencies too
# (ml_dtypes decides the stored outputs of casts to 4- and 2-bit types), so the stamp is
# the lock's digest with the generator's. Usage: tools/onnx_suite/make_suite.sh OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out=${1:?usage: make_suite.sh OUT_DIR}
py="$(bash "$here/setup_onnx_env.sh" | tail -1)"
version="$("$py" -c 'import onnx; print(onnx.__version__)')"
stamp="lock $(sha1sum "$here/../python_envs/onnx.lock" | cut -c1-12)"
stamp="$stamp, generator $(sha1sum "$here/generate_suite.py" | cut -c1-12)"
if [ -f "$out/STAMP" ] && [ "$(cat "$out/STAMP")" = "$stamp" ]; then
  echo "current ONNX suite (onnx $version; $stamp) already in $out"
  exit 0
fi
rm -rf "$out"
"$py" "$here/generate_suite.py" "$out"
echo "$version" > "$out/ONNX_VERSION"
echo "$stamp" > "$out/STAMP"
