#!/bin/bash
# Makes the PyTorch 2.x environment (default .venv-torch2 in the source tree, or
# $TANDEM_TORCH2_VENV) from its lock: torch, torchvision, onnx and onnxscript (the
# PyTorch 2.x export and transformer training tests), timm and transformers (the model
# zoo), ONNX Runtime and OpenVINO (the inference peers); tools/python_envs/torch2.in.
# PyTorch 2.x's CPU path uses oneDNN (convolutions) and MKL (matrix products): the stronger
# CPU reference beside Debian's 1.13 with OpenBLAS. PyPI's only Linux torch is the CUDA
# build, so this pulls its CUDA wheels too (about 5.5 GB on disk, a few minutes); only its
# CPU path is used. Prints the python on its last line.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/../tools/python_env.sh" torch2
