#!/usr/bin/python3
"""Writes ONNX backend-test folders whose expected outputs come from PyTorch.

usage: tests/parity/make_parity_tests.py OUT_DIR

For the reference models and torchvision image classifiers (random weights, eval mode)
it exports OUT_DIR/float32/<name>/model.onnx and stores a seeded random input and
PyTorch's own float32 output as test_data_set_0/input_0.pb and output_0.pb, so
`tandem test-onnx --rtol 1e-4 --atol 1e-5 OUT_DIR/float32` checks Tandem against PyTorch.
OUT_DIR/float64/<name> holds the same model (a symlink) and input with the output of the
same module run in float64 (rounded to float32 once): the exact answer, which
`tandem test-onnx OUT_DIR/float64` holds Tandem to at the ONNX suite's default tolerance.

Tolerance. Random-weight classifiers put out logits of any scale (max |logit| 3e-14 for
efficientnet_b0, 3e-9 for mobilenet_v2, 1e2 for resnet50), where a fixed atol checks
nothing or demands the impossible. So the last Linear layer is scaled by a power of two
(exact: no rounding changes) until max |logit| lies in [0.5, 1). Deep models' float32
logits then carry rounding noise of up to ~2e-6 in any engine (PyTorch's own float32 vs
float64, worst of 6 inputs: vgg11 2.4e-6, mobilenet_v3_large 8.6e-7, resnet50 4.3e-7;
Tandem and ONNX Runtime vs PyTorch alike). The ONNX suite's rtol 1e-3/atol 1e-7 is below
that for logits near 0: by it PyTorch misses its own float64 answer on 5 of 6 vgg11
inputs, and ONNX Runtime misses PyTorch's outputs stored here on vgg11 and efficientnet_b0.
atol 1e-5 is ~5x the noise; weights perturbed by a relative 1e-5 already fail it.
Against the float64 answer, though, the default tolerance holds: on these inputs Tandem's
worst element uses 0.30x of it on efficientnet_b0 (PyTorch float32: 1.19x), 0.47x on
vgg11 (0.83x), 0.67x on mobilenet_v2 (0.20x), 0.09x on densenet121 (0.08x).
"""
import math
import os
import sys

import numpy as np
import torch
import torchvision
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "models"))
from reference_models import MODELS, export  # noqa: E402

# torchvision classifier -> (batch, opset). googlenet and inception_v3 are left out: with
# their random initialization the activations die out and every input gives the same logits.
VISION = {
    "resnet18": (2, 13),
    "mobilenet_v2": (2, 13),
    "densenet121": (1, 13),         # BatchNorm before Conv, 58 Concats, AveragePool
    "resnet50": (1, 13),
    "vgg11": (1, 13),               # Conv+Relu+MaxPool fusion, 25088x4096 Gemm
    "mobilenet_v3_large": (1, 17),  # HardSwish, HardSigmoid squeeze-excitation
    "efficientnet_b0": (1, 17),     # SiLU, depthwise convolutions
}


def normalize_logits(module, x):
    """Scales the last Linear layer by 2^-k so that max |module(x)| lies in [0.5, 1)."""
    last = [m for m in module.modules() if isinstance(m, torch.nn.Linear)][-1]
    with torch.no_grad():
        k = math.floor(math.log2(module(x).abs().max().item())) + 1
        last.weight.mul_(2.0 ** -k)
        last.bias.mul_(2.0 ** -k)


def write_tensor(folder, kind, array):
    """Writes `array` as folder/test_data_set_0/<kind>_0.pb, a float32 TensorProto."""
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    tensor = numpy_helper.from_array(array.numpy().astype(np.float32), kind == "input" and "x" or "y")
    with open(os.path.join(data, kind + "_0.pb"), "wb") as f:
        f.write(tensor.SerializeToString())


def write_case(out_dir, name, module, input_shape, opset=13, normalize=False):
    case = os.path.join(out_dir, "float32", name)
    exact = os.path.join(out_dir, "float64", name)
    os.makedirs(case, exist_ok=True)
    os.makedirs(exact, exist_ok=True)
    module.eval()
    x = torch.randn(*input_shape)
    if normalize:
        normalize_logits(module, x)
    export(module, (1,) + tuple(input_shape[1:]), os.path.join(case, "model.onnx"), opset)
    link = os.path.join(exact, "model.onnx")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.join("..", "..", "float32", name, "model.onnx"), link)
    with torch.no_grad():
        y = module(x)
        y64 = module.double()(x.double())  # last use of module: converted in place
    for folder in (case, exact):
        write_tensor(folder, "input", x)
    write_tensor(case, "output", y)
    write_tensor(exact, "output", y64)
    print(f"{case}: input {tuple(x.shape)} -> output {tuple(y.shape)}, max |y| {y.abs().max().item():.3g}, "
          f"max |float32 - float64| {(y.double() - y64).abs().max().item():.3g}")


def main():
    out_dir = sys.argv[1]
    torch.set_num_threads(2)
    for i, (name, (make, shape, _)) in enumerate(MODELS.items()):
        torch.manual_seed(2000 + i)
        batch = 4 if len(shape) == 4 else 64
        write_case(out_dir, name, make(), (batch,) + tuple(shape[1:]))
    for i, (name, (batch, opset)) in enumerate(VISION.items()):
        torch.manual_seed(3000 + i)
        model = getattr(torchvision.models, name)(weights=None)
        write_case(out_dir, name, model, (batch, 3, 224, 224), opset, normalize=True)


if __name__ == "__main__":
    main()
