"""Writes the inputs of the GPU checks' training runs into DIR as .npy (fixed seed):
peaks_x/y (4096 x 2 -> 1, regression), img_x/y (512 grey 28x28 images, 10 classes) and
ode_x/y (2000 x 3 -> 3, regression).

usage: make_check_data.py DIR
"""
import sys

import numpy as np


def main(out):
    rng = np.random.default_rng(7)
    arrays = {
        "peaks_x": rng.standard_normal((4096, 2)).astype(np.float32),
        "peaks_y": rng.standard_normal((4096, 1)).astype(np.float32),
        "img_x": rng.standard_normal((512, 1, 28, 28)).astype(np.float32),
        "img_y": rng.integers(0, 10, 512).astype(np.int64),
        "ode_x": rng.standard_normal((2000, 3)).astype(np.float32),
        "ode_y": rng.standard_normal((2000, 3)).astype(np.float32),
    }
    for name, a in arrays.items():
        np.save(f"{out}/{name}.npy", a)
    print(f"wrote {', '.join(arrays)} into {out}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
