#!/usr/bin/env bash
# Makes .venv-keras (tools/keras/setup_keras_env.sh: tensorflow-cpu with Keras 3 and
# tf2onnx from PyPI) and writes the Keras CIFAR CNN converted by tf2onnx into OUT_DIR
# (make_keras_exports.py), once per Keras/tf2onnx version.
# Usage: tests/parity/make_keras_exports.sh OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
python=$(bash "$here/../../tools/keras/setup_keras_env.sh" | tail -1)
stamp="$("$python" -c 'import keras, tf2onnx; print(keras.__version__, tf2onnx.__version__)' 2>/dev/null) $(sha1sum "$here/make_keras_exports.py" | cut -c1-12)"
if [ -f "$out/STAMP" ] && [ "$(cat "$out/STAMP")" = "$stamp" ]; then
  echo "Keras exports ($stamp) already in $out"
  exit 0
fi
rm -rf "$out"
mkdir -p "$out"
"$python" "$here/make_keras_exports.py" "$out" 2>&1 | grep -v '^WARNING\|^I0000\|cpu_feature_guard\|oneDNN custom' || true
test -f "$out/keras_cifar_cnn/test_data_set_0/output_0.pb"  # the script ran to its end
echo "$stamp" > "$out/STAMP"
