#!/bin/bash
# Creates the model zoo benchmark's environment (bench/zoo.py): the PyTorch 2.x
# environment of bench/setup_torch2_env.sh (default .venv-torch2, or $TANDEM_TORCH2_VENV)
# with timm and transformers (architectures built from their configs, no downloads),
# ONNX Runtime and OpenVINO from PyPI added to it. Prints the environment's python on its
# last line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec bash "$ROOT/tools/python_env.sh" zoo-env "${TANDEM_TORCH2_VENV:-$ROOT/.venv-torch2}" \
  "import torch, torchvision, numpy, onnx, onnxscript, timm, transformers, onnxruntime, openvino" -- \
  torch torchvision numpy onnx onnxscript timm transformers onnxruntime openvino
