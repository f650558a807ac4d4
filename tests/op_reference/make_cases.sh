#!/bin/bash
# Writes the op reference cases into OUT_DIR/resize, OUT_DIR/nms, OUT_DIR/norm,
# OUT_DIR/transpose, OUT_DIR/reduce, OUT_DIR/branch, OUT_DIR/conv, OUT_DIR/index,
# OUT_DIR/roi and OUT_DIR/permute (resize_cases.py, nms_cases.py, norm_cases.py,
# transpose_cases.py, reduce_cases.py, branch_cases.py, conv_cases.py, index_cases.py,
# roi_cases.py, permute_cases.py: expected
# outputs from onnx.reference) with
# the pinned onnx environment
# (tools/python_env.sh onnx). Usage: tests/op_reference/make_cases.sh OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out=${1:?usage: make_cases.sh OUT_DIR}
py="$(bash "$here/../../tools/onnx_suite/setup_onnx_env.sh" | tail -1)"
rm -rf "$out"
cd "$here"
exec "$py" -c "import sys, resize_cases, nms_cases, norm_cases, transpose_cases, reduce_cases, branch_cases, conv_cases, index_cases, roi_cases, permute_cases
resize_cases.write_all(sys.argv[1] + '/resize')
nms_cases.write_all(sys.argv[1] + '/nms')
norm_cases.write_all(sys.argv[1] + '/norm')
transpose_cases.write_all(sys.argv[1] + '/transpose')
reduce_cases.write_all(sys.argv[1] + '/reduce')
branch_cases.write_all(sys.argv[1] + '/branch')
conv_cases.write_all(sys.argv[1] + '/conv')
index_cases.write_all(sys.argv[1] + '/index')
roi_cases.write_all(sys.argv[1] + '/roi')
permute_cases.write_all(sys.argv[1] + '/permute')" "$out"
