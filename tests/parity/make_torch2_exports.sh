#!/usr/bin/env bash
# Makes .venv-torch2 (tools/bench/setup_torch2_env.sh: torch 2.x, torchvision, onnx and
# onnxscript from PyPI, apart from the system Python) and writes PyTorch 2.x's exports of
# the parity models into OUT_DIR (make_torch2_exports.py), once per torch version.
# Usage: tests/parity/make_torch2_exports.sh OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
python=$(bash "$here/../../tools/bench/setup_torch2_env.sh" | tail -1)
stamp="$("$python" -c 'import torch, onnxscript; print(torch.__version__, onnxscript.__version__)') $(sha1sum "$here/make_torch2_exports.py" | cut -c1-12)"
if [ -f "$out/STAMP" ] && [ "$(cat "$out/STAMP")" = "$stamp" ]; then
  echo "PyTorch 2.x exports ($stamp) already in $out"
  exit 0
fi
rm -rf "$out"
mkdir -p "$out"
"$python" -W ignore "$here/make_torch2_exports.py" "$out" 2>&1 | grep -v '^\[torch.onnx\]\|^Applied\|^$' || true
test -f "$out/dynamo23/lstm/model.onnx"  # the last case written: the script ran to its end
echo "$stamp" > "$out/STAMP"
