#!/bin/bash
# `tandem convert` on real exports, each result checked by the current onnx checker and
# by ONNX Runtime against the original (check_converted.py), plus its refusals.
# usage: convert_test.sh TANDEM BUILD_DIR
set -euo pipefail
tandem=$1 build=$2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python=$(bash "$here/../../tools/onnx_suite/setup_onnx_env.sh" | tail -1)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
check() { "$python" "$here/check_converted.py" "$@"; }
convert() { echo "+ tandem convert $*"; "$tandem" convert "$@"; }

keras=$build/keras-exports/keras_cifar_cnn/model.onnx
cnn=$build/parity/float32/cifar_cnn/model.onnx
transformer=$build/torch2-exports/torchscript/transformer_encoder/model.onnx
lstm=$build/torch2-exports/torchscript/lstm/model.onnx
raw_cnn=$build/torch2-exports/dynamo_raw/cifar_cnn/model.onnx  # dynamo without its optimizer
raw_transformer=$build/torch2-exports/dynamo_raw/transformer_encoder/model.onnx
"$python" "$here/make_conv_bn_model.py" "$out/conv_bn.onnx"

# --optimize: tf2onnx's NHWC CNN loses its shape chain and the Transpose before Flatten
# (only the input's NHWC->NCHW Transpose stays); the others shrink or stay minimal.
convert --optimize "$keras" "$out/keras_opt.onnx"
check "$keras" "$out/keras_opt.onnx" --fewer-nodes --transposes-at-most 1
convert --optimize "$out/conv_bn.onnx" "$out/conv_bn_opt.onnx"
check "$out/conv_bn.onnx" "$out/conv_bn_opt.onnx" --fewer-nodes
for m in "$transformer" "$lstm" "$raw_cnn" "$raw_transformer"; do
  convert --optimize "$m" "$out/opt.onnx"
  check "$m" "$out/opt.onnx" --fewer-nodes
done
# The reference CNN as torch exports it by default is already minimal in standard ONNX
# (no fused Conv+Relu op exists): it must come out unchanged.
convert --optimize "$cnn" "$out/cnn_opt.onnx"
check "$cnn" "$out/cnn_opt.onnx"

# --weights: half the bytes, outputs within the narrower type's rounding.
convert --weights fp16 "$cnn" "$out/cnn_fp16.onnx"
check "$cnn" "$out/cnn_fp16.onnx" --rtol 1e-2
convert --weights bf16 "$cnn" "$out/cnn_bf16.onnx"
check "$cnn" "$out/cnn_bf16.onnx" --rtol 5e-2
[ "$(stat -c %s "$out/cnn_fp16.onnx")" -lt "$(( $(stat -c %s "$cnn") * 6 / 10 ))" ] || {
  echo "FAIL: fp16 weights did not shrink the file"; exit 1; }

# --external-data and back inline.
convert --external-data "$cnn" "$out/ext.onnx"
[ -s "$out/ext.onnx.data" ] && [ "$(stat -c %s "$out/ext.onnx")" -lt 100000 ] || {
  echo "FAIL: the weights did not move to ext.onnx.data"; exit 1; }
check "$cnn" "$out/ext.onnx"
convert "$out/ext.onnx" "$out/inline.onnx"
check "$cnn" "$out/inline.onnx"

# --opset (libonnx's converter; it has no adapter to take Relu below 13), --fix-dims.
for opset in 15 17; do
  convert --opset $opset "$cnn" "$out/opset$opset.onnx"
  check "$cnn" "$out/opset$opset.onnx"
done
convert --fix-dims batch=8 --optimize "$cnn" "$out/fixed.onnx"
check "$cnn" "$out/fixed.onnx" --fix-dims batch=8
"$python" -c "import onnx,sys; d=onnx.load(sys.argv[1]).graph.input[0].type.tensor_type.shape.dim[0]; sys.exit(d.dim_value!=8)" "$out/fixed.onnx"

# Refusals: one clear line, nothing written.
expect_error() {
  local want=$1; shift
  if "$tandem" convert "$@" > "$out/log" 2>&1; then echo "FAIL: tandem convert $* succeeded"; exit 1; fi
  grep -q "$want" "$out/log" || { echo "FAIL: expected '$want' in:"; cat "$out/log"; exit 1; }
  echo "refused as expected: $(grep error "$out/log" | head -1)"
}
expect_error "knows ai.onnx opsets up to 17" --opset 20 "$cnn" "$out/never.onnx"
expect_error "No Adapter To Version \$12 for Relu" --opset 11 "$cnn" "$out/never.onnx"
expect_error "no input has a dimension named 'batchsize'" --fix-dims batchsize=2 "$cnn" "$out/never.onnx"
expect_error "differ beyond the tolerance" --weights bf16 --rtol 1e-7 --atol 0 "$cnn" "$out/never.onnx"
expect_error "does not exist" "$cnn" "$out/no/such/folder.onnx"
expect_error "holds .*'s weights" --external-data "$out/ext.onnx" "$out/ext.onnx"
[ ! -e "$out/never.onnx" ] || { echo "FAIL: a refused conversion wrote its output"; exit 1; }
check "$cnn" "$out/ext.onnx"  # still intact after the refusal
echo "convert tests passed"
