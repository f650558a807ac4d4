#!/bin/bash
# Creates the PyTorch 2.x environment (default .venv-torch2 in the source tree, or
# $TANDEM_TORCH2_VENV) of the benchmarks and the PyTorch 2.x export tests: Debian's
# python3 WITHOUT the system packages, with torch, torchvision, numpy, onnx and onnxscript
# (which torch.onnx.export's dynamo path needs) from PyPI. PyTorch 2.x's CPU path uses oneDNN (convolutions) and
# MKL (matrix products): the stronger CPU reference beside Debian's 1.13 with OpenBLAS.
# PyPI's only Linux build of torch is the CUDA one, so this pulls its CUDA wheels too
# (about 5.5 GB on disk, a few minutes); the benchmarks use its CPU path alone. Nothing is
# installed into the system Python. Prints the environment's python on its last line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="${TANDEM_TORCH2_VENV:-$ROOT/.venv-torch2}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "[torch2-env] creating $VENV" >&2
  /usr/bin/python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import torch, torchvision, numpy, onnx, onnxscript" 2>/dev/null; then
  echo "[torch2-env] installing torch, torchvision, numpy, onnx and onnxscript from PyPI (~5.5 GB with its CUDA wheels)" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check torch torchvision numpy onnx onnxscript >&2
fi
echo "$VENV/bin/python"
