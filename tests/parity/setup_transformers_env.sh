#!/bin/bash
# The environment of the transformer training tests (tests/parity/transformer_training_test.sh):
# the PyTorch 2.x environment of bench/setup_torch2_env.sh (default .venv-torch2, or
# $TANDEM_TORCH2_VENV) with Hugging Face transformers added from PyPI (models are built from
# their configs: nothing is downloaded at run time). Prints the environment's python on its
# last line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
exec bash "$ROOT/tools/python_env.sh" transformers-env "${TANDEM_TORCH2_VENV:-$ROOT/.venv-torch2}" \
  "import torch, numpy, onnx, onnxscript, transformers" -- torch torchvision numpy onnx onnxscript transformers
