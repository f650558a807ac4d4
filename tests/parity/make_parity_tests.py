#!/usr/bin/python3
"""Writes ONNX backend-test folders whose expected outputs come from PyTorch.

usage: tests/parity/make_parity_tests.py OUT_DIR

For the reference models and torchvision image classifiers (random weights, eval mode)
it exports OUT_DIR/float32/<name>/model.onnx and stores a seeded random input and
PyTorch's own float32 output as test_data_set_0/input_0.pb and output_0.pb: ctest
parity_pytorch holds Tandem to PyTorch with `tandem test-onnx --scale-tol`.
OUT_DIR/float64/<name> holds the same model (a symlink) and input with the output of the
same module run in float64 (rounded to float32 once) as output_0.pb, the exact answer,
and PyTorch's float32 output beside it as peer_output_0.pb: ctest parity_float64 holds
Tandem's error against the exact answer to a multiple of PyTorch's own
(`tandem test-onnx --peer-ratio`).

Logit scale. Random-weight classifiers put out logits of any scale (max |logit| 3e-14 for
efficientnet_b0, 3e-9 for mobilenet_v2, 1e2 for resnet50), so the last Linear layer is
scaled by a power of two (exact: no rounding changes) until max |logit| lies in
[0.5, 1), which keeps the printed errors comparable between models.

Why judge at the scale. A float32 engine's rounding error in a sum follows the size of
its terms, not of its result: deep models' logits carry noise of up to ~2e-6 of the logit
scale in any engine (PyTorch's own float32 against float64, worst of 6 inputs: vgg11
2.4e-6, mobilenet_v3_large 8.6e-7, resnet50 4.3e-7), and it lands on logits near zero as
on large ones. An element-wise atol judges that noise as a failure on a CPU whose kernels
round differently (resnet50's logit 349, 4e-4 of the scale, missed atol 1e-7 by 7e-7 on
an AVX-512 machine), so the parity tests compare max |error| with max |expected|; the
tolerances and the errors measured on each instruction set are in tests/CMakeLists.txt.
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
    write_tensor(exact, "peer_output", y)
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
