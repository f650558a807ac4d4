#!/usr/bin/python3
"""Writes the "peaks" regression data set: 40,000 points of MATLAB's peaks surface on a
200x200 grid over [-3, 3]^2. usage: models/peaks_data.py OUT_DIR -> X.npy [N,2], Y.npy [N,1]"""
import os
import sys

import numpy as np


def peaks(n=200):
    g = np.linspace(-3, 3, n)
    x, y = np.meshgrid(g, g)
    z = (3 * (1 - x) ** 2 * np.exp(-x ** 2 - (y + 1) ** 2)
         - 10 * (x / 5 - x ** 3 - y ** 5) * np.exp(-x ** 2 - y ** 2)
         - np.exp(-(x + 1) ** 2 - y ** 2) / 3)
    X = np.stack([x.ravel(), y.ravel()], axis=1).astype(np.float32)
    return X, z.reshape(-1, 1).astype(np.float32)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    X, Y = peaks()
    np.save(os.path.join(out, "X.npy"), X)
    np.save(os.path.join(out, "Y.npy"), Y)
    print(f"{out}/X.npy {X.shape}, {out}/Y.npy {Y.shape}")
