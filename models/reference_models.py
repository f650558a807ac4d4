"""The reference models of Tandem, defined in PyTorch.

- peaks_mlp:   the 2-20-5-1 ReLU MLP fitted to the "peaks" surface (40,000 points)
- ode_mlp:     the 3-100-3 tanh network inside a neural ODE
- cifar_cnn:   the Keras CIFAR-10 example CNN, exactly 1,667,594 parameters
- fashion_cnn: a small CNN for Fashion-MNIST (28x28 grey images, 10 classes)
- EncoderClassifier: a 2-layer pre-norm transformer encoder classifier (sequence models,
  exported at build time by the parity tests)
- LstmModel: a 2-layer LSTM with a linear head on every step

Each entry gives the module and an example input shape (batch first).
"""
import torch
from torch import nn


def peaks_mlp():
    return nn.Sequential(nn.Linear(2, 20), nn.ReLU(), nn.Linear(20, 5), nn.ReLU(), nn.Linear(5, 1))


def ode_mlp():
    return nn.Sequential(nn.Linear(3, 100), nn.Tanh(), nn.Linear(100, 3))


def cifar_cnn():
    # Conv32-same, MaxPool, Dropout .25, Conv64-same, Conv64-valid, MaxPool, Dropout .25,
    # Flatten, Dense512, Dropout .2, Dense10 (ReLU after each conv and the hidden dense).
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.25),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
        nn.Conv2d(64, 64, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.25),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 512), nn.ReLU(), nn.Dropout(0.2), nn.Linear(512, 10))


def fashion_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 64), nn.ReLU(), nn.Linear(64, 10))


class EncoderClassifier(torch.nn.Module):
    """Two pre-norm transformer encoder layers over [batch, seq, 32] and a linear head."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
                                                 batch_first=True, norm_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = torch.nn.Linear(32, 5)

    def forward(self, x):
        return self.head(self.encoder(x).mean(dim=1))


class LstmModel(torch.nn.Module):
    """A 2-layer LSTM over [batch, seq, 8] and a linear head on every step."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(16, 3)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y)


# name -> (constructor, input shape with batch 1, committed to the repo?)
MODELS = {
    "peaks_mlp": (peaks_mlp, (1, 2), True),
    "ode_mlp": (ode_mlp, (1, 3), True),
    "fashion_cnn": (fashion_cnn, (1, 1, 28, 28), True),
    "cifar_cnn": (cifar_cnn, (1, 3, 32, 32), False),  # 6.7 MB: generated at build time
}


def parameter_count(module):
    return sum(p.numel() for p in module.parameters())


def export(module, input_shape, path, opset=13):
    """Exports `module` in eval mode with a dynamic batch dimension named 'batch'."""
    module.eval()
    x = torch.randn(*input_shape)
    # PyTorch 2.x defaults to its dynamo exporter (opset 18+); keep the TorchScript one,
    # which writes the opset asked for, so every torch version exports the same graph.
    legacy = {"dynamo": False} if int(torch.__version__.split(".")[0]) >= 2 else {}
    torch.onnx.export(module, x, path, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                      opset_version=opset, do_constant_folding=True, **legacy)
