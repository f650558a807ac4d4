#!/usr/bin/env bash
# The CUDA plugin's coverage of the reference models, checked without a GPU through the
# placement preview (tandem inspect --device cuda): every compute node of each exported
# model's inference, and of the CNNs' training steps (cross-entropy, Adam), placed on the
# GPU; on the host only the shape arithmetic listed per case. Fails naming the case and
# what it left on the host.
# usage: preview_coverage.sh TANDEM_BINARY BUILD_DIR
set -uo pipefail
tandem=$1
build=$2
failures=0

# check LABEL ALLOWED_OPS(space-separated, may be empty) -- inspect arguments...
check() {
  local label=$1 allowed=" $2 "
  shift 3
  local out host
  if ! out=$("$tandem" inspect --device cuda "$@" 2>&1); then
    echo "FAIL $label: inspect failed: $(echo "$out" | tail -1)"
    failures=$((failures + 1))
    return
  fi
  host=$(echo "$out" | sed -n 's/^on the host: //p')
  if [[ -z $host ]]; then
    echo "FAIL $label: no 'on the host' line (is this a placement preview?)"
    failures=$((failures + 1))
    return
  fi
  local extra=()
  if [[ $host != nothing ]]; then
    for entry in $host; do
      local op=${entry%x[0-9]*}
      [[ $allowed == *" $op "* ]] || extra+=("$entry")
    done
  fi
  if ((${#extra[@]})); then
    echo "FAIL $label: on the host: ${extra[*]}"
    failures=$((failures + 1))
  else
    echo "ok   $label: on the host: $host"
  fi
}

for dir in "$build"/parity/float32/*/; do
  model=$(basename "$dir")
  check "$model inference" "" -- "$dir/model.onnx"
done
for model in cifar_cnn fashion_cnn resnet18 mobilenet_v2 vgg11; do
  check "$model training step" "Shape" -- --train --loss cross_entropy "$build/parity/float32/$model/model.onnx"
done
for model in peaks_mlp ode_mlp; do
  check "$model training step" "" -- --train "$build/parity/float32/$model/model.onnx"
done
# The dynamo export's transformer encoder, inference: everything on the GPU.
check "transformer_encoder (dynamo) inference" "" -- "$build/torch2-exports/dynamo/transformer_encoder/model.onnx"

if [[ ! -d $build/parity/float32 ]] || ((failures)); then
  echo "preview coverage: $failures case(s) failed"
  exit 1
fi
echo "preview coverage: every case as expected"
