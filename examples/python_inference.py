#!/usr/bin/python3
"""Load an ONNX model with `import tandem`, print its inputs and outputs, run it once on a
batch of deterministic data and print the outputs.

usage: python_inference.py MODEL.onnx [BATCH]   (symbolic dims -> BATCH, default 1)
"""
import sys

import numpy as np

import tandem


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    batch = int(sys.argv[2]) if len(sys.argv) == 3 else 1
    session = tandem.Session(sys.argv[1], threads=1)
    print(f"tandem {tandem.version()} from {tandem.library_path}")
    for kind, infos in (("input", session.inputs), ("output", session.outputs)):
        for io in infos:
            print(f"  {kind:6} {io.name:12} {io.type_name}{io.shape}")

    feeds = {}
    for io in session.inputs:
        if io.shape is None or io.dtype is None:
            sys.exit(f"input {io.name}: unknown rank or a dtype NumPy lacks")
        shape = [d if isinstance(d, int) else batch for d in io.shape]  # symbols -> batch
        n = int(np.prod(shape))
        values = np.sin(0.1 * np.arange(n)) if io.dtype == np.float32 else np.zeros(n)
        feeds[io.name] = values.astype(io.dtype).reshape(shape)

    outputs = session.run(feeds)
    print(f"ran with batch {batch}:")
    for name, value in outputs.items():
        print(f"  {name}: {value.dtype}{list(value.shape)} first values: "
              f"{np.array2string(value.ravel()[:6], precision=5)}")


if __name__ == "__main__":
    main()
