#!/bin/bash
# Creates the PyTorch 2.x environment (default .venv-torch2 in the source tree, or
# $TANDEM_TORCH2_VENV) of the benchmarks and the PyTorch 2.x export tests: Debian's
# python3 WITHOUT the system packages, with torch, torchvision, numpy, onnx and onnxscript
# (which torch.onnx.export's dynamo path needs) from PyPI. PyTorch 2.x's CPU path uses
# oneDNN (convolutions) and MKL (matrix products): the stronger CPU reference beside
# Debian's 1.13 with OpenBLAS. PyPI's only Linux build of torch is the CUDA one, so this
# pulls its CUDA wheels too (about 5.5 GB on disk, a few minutes); only its CPU path is
# used. Prints the environment's python on its last line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec bash "$ROOT/tools/python_env.sh" torch2-env "${TANDEM_TORCH2_VENV:-$ROOT/.venv-torch2}" \
  "import torch, torchvision, numpy, onnx, onnxscript" -- torch torchvision numpy onnx onnxscript
