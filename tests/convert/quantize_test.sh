#!/bin/bash
# `tandem convert --quantize` on the trained Fashion-MNIST CNN (what fashion_mnist_test.sh
# exports): static (calibrated on 256 training images) and dynamic. Each result must pass
# onnx's checker, give the classes onnx.reference gives (ONNX Runtime runs it too, its
# agreement printed) and keep the test accuracy (10,000 images) within 1 point of the float
# model's (quantize_accuracy.py).
# usage: quantize_test.sh TANDEM TRAINED_MODEL
set -euo pipefail
tandem=$1 model=$2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python=$(bash "$here/../../tools/onnx_suite/setup_onnx_env.sh" | tail -1)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$python" "$here/quantize_accuracy.py" prepare "$out"
for mode in static dynamic; do
  echo "+ tandem convert --quantize $mode"
  "$tandem" convert --quantize $mode --input x="$out/calibration.npy" "$model" "$out/$mode.onnx"
done
for m in float static dynamic; do
  path=$model
  [ $m = float ] || path=$out/$m.onnx
  "$tandem" run "$path" --input x="$out/test_x.npy" --output-dir "$out/$m" --repeat 1 --threads 2 > /dev/null
done
"$python" "$here/quantize_accuracy.py" check "$out" "$model"
