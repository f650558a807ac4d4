"""Writes the small regression set the checkpoint tests train on: 2,000 points uniform in
[-3, 3]^2 (seed 0) and y = sin(x0) * cos(x1).
usage: tests/sincos_data.py OUT_DIR -> OUT_DIR/x.npy [2000,2], OUT_DIR/y.npy [2000,1]"""
import sys

import numpy as np

rng = np.random.default_rng(0)
x = rng.uniform(-3, 3, (2000, 2)).astype(np.float32)
y = (np.sin(x[:, :1]) * np.cos(x[:, 1:])).astype(np.float32)
np.save(sys.argv[1] + "/x.npy", x)
np.save(sys.argv[1] + "/y.npy", y)
