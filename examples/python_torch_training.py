#!/usr/bin/python3
"""Train peaks_mlp.onnx on the peaks surface from PyTorch tensors: the batches go into
Tandem without copies (DLPack), and the predictions come back as PyTorch tensors that
share Tandem's output memory. Exits 1 when the loss did not fall.

usage: python_torch_training.py MODEL.onnx [EPOCHS]
"""
import sys

import torch

import tandem


def peaks(n=60):
    g = torch.linspace(-3, 3, n)
    x, y = torch.meshgrid(g, g, indexing="xy")
    z = (3 * (1 - x) ** 2 * torch.exp(-x ** 2 - (y + 1) ** 2)
         - 10 * (x / 5 - x ** 3 - y ** 5) * torch.exp(-x ** 2 - y ** 2)
         - torch.exp(-(x + 1) ** 2 - y ** 2) / 3)
    return torch.stack([x.reshape(-1), y.reshape(-1)], dim=1), z.reshape(-1, 1)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    x, y = peaks()
    torch.manual_seed(0)
    with tandem.TrainingSession(sys.argv[1], loss="mse", optimizer="adam", lr=0.01, device="cpu") as ts:
        initial, _ = ts.eval_step(x, y)
        for epoch in range(epochs):
            order = torch.randperm(len(x))
            losses = []
            for start in range(0, len(x), 64):
                rows = order[start:start + 64]
                losses.append(ts.train_step(x[rows], y[rows]))  # gathered rows: contiguous tensors
            print(f"epoch {epoch + 1:3d}/{epochs} loss {sum(losses) / len(losses):.6f}")
        (prediction,) = ts.predict(x, output="dlpack")
        fitted = torch.from_dlpack(prediction)  # Tandem's memory, viewed by PyTorch
        final = torch.nn.functional.mse_loss(fitted, y).item()
    print(f"mse over the surface: {initial:.6f} -> {final:.6f} (PyTorch's mse of Tandem's predictions)")
    if not final < initial:
        print("the loss did not fall")
        return 1
    print(f"loss fell: {initial:.6f} -> {final:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
