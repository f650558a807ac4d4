"""The PyTorch models the Python module's tests export to ONNX (test_python_api.py,
test_dlpack.py, wheel_reference.py): run with Debian's python3 and its torch."""
import torch


def mlp(seed):
    """Linear(4, 16) - Tanh - Linear(16, 3), its weights drawn after torch.manual_seed(seed)."""
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))


def export(module, path, example=None):
    """`module` in eval mode to ONNX opset 13 at `path`: input "x", output "y", dim 0 dynamic
    ("batch"); traced with `example` (default: a random [2, 4] batch)."""
    module.eval()
    example = torch.randn(2, 4) if example is None else example
    torch.onnx.export(module, example, path, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=13,
                      do_constant_folding=True)
