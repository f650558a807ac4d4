#!/usr/bin/python3
"""PyTorch's side of the wheel test (tests/python/wheel_test.sh), run with Debian's python3
and its torch: exports a small CNN and an MLP to ONNX and writes what PyTorch computes for
them, for tests/python/wheel_check.py to compare an installed wheel against (that venv
has NumPy and the wheel only).

usage: wheel_reference.py WORK_DIR
"""
import json
import os
import sys

import numpy as np
import torch

from torch_models import export, mlp


def main(work):
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    cnn = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(), torch.nn.Linear(16, 10))
    export(cnn, os.path.join(work, "cnn.onnx"), torch.randn(1, 3, 16, 16))
    x = rng.standard_normal((4, 3, 16, 16)).astype(np.float32)
    with torch.no_grad():
        y = cnn(torch.from_numpy(x)).numpy()
    np.save(os.path.join(work, "cnn_x.npy"), x)
    np.save(os.path.join(work, "cnn_y.npy"), y)

    model = mlp(1)
    export(model, os.path.join(work, "mlp.onnx"))
    X = rng.standard_normal((64, 4)).astype(np.float32)
    Y = np.sin(X @ rng.standard_normal((4, 3))).astype(np.float32)
    np.save(os.path.join(work, "mlp_x.npy"), X)
    np.save(os.path.join(work, "mlp_y.npy"), Y)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(torch.from_numpy(X)), torch.from_numpy(Y))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with open(os.path.join(work, "mlp_adam_losses.json"), "w") as f:
        json.dump(losses, f)


if __name__ == "__main__":
    main(sys.argv[1])
