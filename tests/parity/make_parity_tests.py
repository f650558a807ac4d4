#!/usr/bin/python3
"""Writes ONNX backend-test folders whose expected outputs come from PyTorch.

usage: tests/parity/make_parity_tests.py OUT_DIR

For the reference models and torchvision's resnet18 and mobilenet_v2 (random weights,
eval mode) it exports OUT_DIR/<name>/model.onnx and stores a seeded random input and
PyTorch's own output as test_data_set_0/input_0.pb and output_0.pb, so
`tandem test-onnx --rtol 1e-4 OUT_DIR` checks Tandem against PyTorch.
"""
import os
import sys

import numpy as np
import torch
import torchvision
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "models"))
from reference_models import MODELS, export  # noqa: E402


def write_case(out_dir, name, module, input_shape):
    case = os.path.join(out_dir, name)
    data = os.path.join(case, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    module.eval()
    export(module, (1,) + tuple(input_shape[1:]), os.path.join(case, "model.onnx"))
    x = torch.randn(*input_shape)
    with torch.no_grad():
        y = module(x)
    for kind, array in (("input", x), ("output", y)):
        tensor = numpy_helper.from_array(array.numpy().astype(np.float32), kind == "input" and "x" or "y")
        with open(os.path.join(data, kind + "_0.pb"), "wb") as f:
            f.write(tensor.SerializeToString())
    print(f"{case}: input {tuple(x.shape)} -> output {tuple(y.shape)}")


def main():
    out_dir = sys.argv[1]
    torch.set_num_threads(2)
    for i, (name, (make, shape, _)) in enumerate(MODELS.items()):
        torch.manual_seed(2000 + i)
        batch = 4 if len(shape) == 4 else 64
        write_case(out_dir, name, make(), (batch,) + tuple(shape[1:]))
    torch.manual_seed(3000)
    write_case(out_dir, "resnet18", torchvision.models.resnet18(), (2, 3, 224, 224))
    torch.manual_seed(3001)
    write_case(out_dir, "mobilenet_v2", torchvision.models.mobilenet_v2(), (2, 3, 224, 224))


if __name__ == "__main__":
    main()
