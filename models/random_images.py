#!/usr/bin/python3
"""Writes a random image classification set: OUT_DIR/NAME_x.npy, float32 [N, C, H, W] of
standard normals, and OUT_DIR/NAME_y.npy, int64 [N] labels in 0..9, drawn in that order
from numpy.random.default_rng(SEED) (the data-parallel tests and benchmark train on it).
usage: models/random_images.py OUT_DIR NAME N C H W SEED"""
import os
import sys

import numpy as np


def main(out_dir, name, n, c, h, w, seed):
    rng = np.random.default_rng(int(seed))
    os.makedirs(out_dir, exist_ok=True)
    np.save(os.path.join(out_dir, f"{name}_x.npy"),
            rng.standard_normal((int(n), int(c), int(h), int(w))).astype(np.float32))
    np.save(os.path.join(out_dir, f"{name}_y.npy"), rng.integers(0, 10, int(n)).astype(np.int64))


if __name__ == "__main__":
    if len(sys.argv) != 8:
        sys.exit(__doc__)
    main(*sys.argv[1:])
