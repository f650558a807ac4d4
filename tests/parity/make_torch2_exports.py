"""Exports models with PyTorch 2.x's two ONNX exporters as ONNX backend-test folders.

usage: make_torch2_exports.py OUT_DIR     (ctest parity_torch2_export runs it in
.venv-torch2 through export_in_venv.sh)

Writes OUT_DIR/<exporter>/<model>/model.onnx with a seeded random input and PyTorch's own
float32 output in test_data_set_0, so `tandem test-onnx --rtol 1e-4 --atol 1e-5 OUT_DIR`
checks Tandem against PyTorch on what today's exporters write:
- torchscript: torch.onnx.export(dynamo=False), opset 17 (the TorchScript exporter);
- dynamo: torch.onnx.export(dynamo=True) at its default opset (torch.export + onnxscript);
- dynamo23: the dynamo exporter at opset 23, where attention becomes the ONNX Attention op;
- dynamo_raw: the dynamo exporter without its ONNX optimizer (optimize=False), as a user
  who turns it off gets it: constant shape chains stay (tests/convert/ optimizes them).
Models: the reference models, torchvision resnet18 / mobilenet_v2 / efficientnet_b0 (random
weights, logits scaled into [0.5, 1) as make_parity_tests.py explains), a 2-layer
transformer encoder classifier and an LSTM sequence model.
"""
import os
import shutil
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "models"))
from make_parity_tests import normalize_logits  # noqa: E402
from reference_models import MODELS, EncoderClassifier, LstmModel  # noqa: E402


def cases():
    """(name, make module, input shape, normalize logits) for every model."""
    for name, (make, shape, _) in MODELS.items():
        yield name, make, (4,) + tuple(shape[1:]), False
    for name in ("resnet18", "mobilenet_v2", "efficientnet_b0"):
        yield name, lambda n=name: getattr(torchvision.models, n)(weights=None), (1, 3, 224, 224), True
    yield "transformer_encoder", EncoderClassifier, (2, 10, 32), False
    yield "lstm", LstmModel, (2, 12, 8), False


def write_tensor(folder, kind, name, array):
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    tensor = numpy_helper.from_array(array.detach().numpy().astype(np.float32), name)
    with open(os.path.join(data, kind + "_0.pb"), "wb") as f:
        f.write(tensor.SerializeToString())


def export(module, x, path, exporter):
    if exporter == "torchscript":
        torch.onnx.export(module, (x,), path, input_names=["x"], output_names=["y"], opset_version=17,
                          dynamo=False)
    else:
        opset = {"dynamo": None, "dynamo_raw": None, "dynamo23": 23}[exporter]
        program = torch.onnx.export(module, (x,), dynamo=True, opset_version=opset, verbose=False,
                                    optimize=exporter != "dynamo_raw")
        program.save(path)


def main():
    out_dir = sys.argv[1]
    torch.set_num_threads(2)
    for exporter in ("torchscript", "dynamo", "dynamo23", "dynamo_raw"):
        for i, (name, make, shape, normalize) in enumerate(cases()):
            if exporter == "dynamo23" and name not in ("transformer_encoder", "lstm", "peaks_mlp"):
                continue  # opset 23 changes attention and recurrences, not convolutions
            if exporter == "dynamo_raw" and name not in ("cifar_cnn", "transformer_encoder"):
                continue
            torch.manual_seed(4000 + i)
            module = make().eval()
            x = torch.randn(*shape)
            if normalize:
                normalize_logits(module, x)
            case = os.path.join(out_dir, exporter, name)
            shutil.rmtree(case, ignore_errors=True)
            os.makedirs(case)
            path = os.path.join(case, "model.onnx")
            export(module, x, path, exporter)
            with torch.no_grad():
                y = module(x)
            graph = onnx.load(path, load_external_data=False).graph
            write_tensor(case, "input", graph.input[0].name, x)
            write_tensor(case, "output", graph.output[0].name, y)
            opsets = {o.domain or "ai.onnx": o.version for o in onnx.load(path).opset_import}
            print(f"{exporter}/{name}: opset {opsets.get('ai.onnx')}, {len(graph.node)} nodes, "
                  f"output {tuple(y.shape)}, max |y| {y.abs().max().item():.3g}", flush=True)


if __name__ == "__main__":
    main()
