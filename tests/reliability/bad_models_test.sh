#!/usr/bin/env bash
# Absurd or broken model content and inputs: `tandem run` must exit 1 with a one-line
# reason on stderr that says what is wrong — never a signal, an abort or an OOM kill.
# The process runs under a 16 GiB address-space limit (TANDEM_TEST_VMEM_KB) so an
# unchecked allocation fails fast here instead of swapping.
# usage: tests/reliability/bad_models_test.sh path/to/tandem WORK_DIR
set -uo pipefail
tandem=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
/usr/bin/python3 "$here/make_bad_models.py" "$work" >/dev/null || { echo "FAIL: model generation"; exit 1; }
/usr/bin/python3 - "$work" <<'PY'
import sys, numpy as np
d = sys.argv[1]
np.save(d + "/wrong_shape.npy", np.ones((2, 5), np.float32))
np.save(d + "/wrong_type.npy", np.ones((1, 64), np.int32))
np.save(d + "/good.npy", np.ones((1, 64), np.float32))
raw = open(d + "/good.npy", "rb").read()
open(d + "/truncated.npy", "wb").write(raw[:-10])
# A header that declares 2^40 x 2^40 elements over a few bytes of data.
open(d + "/huge_header.npy", "wb").write(raw.replace(b"(1, 64), }", b"(1099511627776, 1099511627776), }"))
np.save(d + "/big.npy", np.ones((64, 1 << 20), np.float32))  # 256 MiB
np.save(d + "/many_points.npy", np.ones((1 << 20, 2), np.float32))  # 8 MiB; 80 MiB hidden layer
PY
m=$work
peaks=$here/../../models/peaks_mlp.onnx
failures=0
# expect NAME STATUS SUBSTRING ARGS...: `tandem run --repeat 0 ARGS` must exit STATUS (1:
# bad content, 2: bad usage) with one stderr line starting "error:" that holds SUBSTRING.
source "$here/expect_error.sh"
VMEM_KB=${TANDEM_TEST_VMEM_KB:-16777216} TIMEOUT_S=120
expect() {
  local name=$1 status=$2 want=$3; shift 3
  expect_error "$name" "$status" "$want" "$tandem" run --repeat 0 "$@"
}
expect huge_input 1 "4.0 TiB, over the memory limit" "$m/huge_input.onnx"
expect overflow_input 1 "more elements than fit in 64 bits" "$m/overflow_input.onnx"
expect negative_dim 1 "negative dimension -5" "$m/negative_dim.onnx"
expect huge_expand 1 "(Expand): float[1048576,1048576] needs 4.0 TiB" "$m/huge_expand.onnx"
expect huge_constant_of_shape 1 "(ConstantOfShape): float[1048576,1048576] needs 4.0 TiB" "$m/huge_constant_of_shape.onnx"
expect pad_overflow 1 "(Pad): pads [0,4611686018427387904,0,4611686018427387904] overflow axis 1" "$m/pad_overflow.onnx"
expect truncated_weights 1 "raw_data has 1000 bytes, expected 16384" "$m/truncated_weights.onnx"
expect truncated_weights_opset18 1 "raw_data has 1000 bytes, expected 16384" "$m/truncated_weights_opset18.onnx"
expect huge_weights_no_data 1 "tensor name: w" "$m/huge_weights_no_data.onnx"
expect huge_weights_no_data_opset18 1 "tensor 'w': float[1048576,1048576] needs 4.0 TiB" "$m/huge_weights_no_data_opset18.onnx"
expect endless_loop 1 "(Loop): still running after 1000 iterations" --max-loop-iterations 1000 "$m/endless_loop.onnx"
expect deep_subgraphs 1 "nested deeper than the parser's limit" "$m/deep_subgraphs.onnx"
# Malformed models that crash Debian's libonnx 1.12 (found by the fuzzer): its checker and
# shape inference run in a child process, so the crash is reported, not suffered.
regressions=$here/../fuzz/regressions
expect libonnx_segv 1 "libonnx crashed (signal 11)" "$regressions/run/convtranspose_rank2_input_libonnx_segv"
expect libonnx_sigfpe 1 "libonnx crashed (signal 8)" "$regressions/import/pool_shape_libonnx_divide_by_zero"
expect input_wrong_shape 1 "has shape [2,5], the model expects [batch,2]" "$peaks" --input "x=$m/wrong_shape.npy"
expect input_wrong_type 1 "has type int32, the model expects float" "$peaks" --input "x=$m/wrong_type.npy"
expect input_truncated_npy 1 "truncated data" "$peaks" --input "x=$m/truncated.npy"
expect input_huge_npy_header 1 "more elements than fit in 64 bits" "$peaks" --input "x=$m/huge_header.npy"
expect memory_limit 1 "over the memory limit of 64.0 MiB" --max-memory 64M "$peaks" --input "x=$m/big.npy"
# Unfused, so the hidden layer is a tensor (the fused dense chain keeps it in cache tiles).
expect memory_limit_in_kernel 1 "over the memory limit of 16.0 MiB" --max-memory 16M --no-fusion "$peaks" --input "x=$m/many_points.npy"
expect bad_max_memory 2 "is not a size" --max-memory lots "$m/huge_input.onnx"
expect bad_dim 2 "--dim expects" --dim batch=-3 "$m/huge_input.onnx"
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
