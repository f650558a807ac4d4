"""Checks that two training runs trained the same model: NAME REFERENCE_DIR OTHER_DIR, each
dir holding the run's steps.csv (--step-log) and model.onnx (--export). Every step's loss
must agree within 1e-5 relative, each exported weight within 1e-4 of its tensor's scale.
Used by the data-parallel tests (tests/data_parallel_test.sh, data_parallel_srun_test.sh)."""
import csv
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def losses(d):
    with open(d + "/steps.csv") as f:
        return np.array([float(r["loss"]) for r in csv.DictReader(f)])


def weights(d):
    return {t.name: numpy_helper.to_array(t) for t in onnx.load(d + "/model.onnx").graph.initializer}


def main(name, ref, other):
    a, b = losses(ref), losses(other)
    assert len(a) == len(b) and len(a) > 0, f"{name}: {len(a)} vs {len(b)} steps"
    rel = np.abs(a - b) / np.maximum(np.abs(a), 1e-12)
    worst = int(rel.argmax())
    print(f"{name}: {len(a)} steps, largest relative loss difference {rel.max():.2e} "
          f"(step {worst + 1}: {a[worst]:.9g} vs {b[worst]:.9g})")
    assert rel.max() <= 1e-5, f"FAIL {name}: step losses differ"
    wa, wb = weights(ref), weights(other)
    assert wa.keys() == wb.keys()
    for k in wa:
        scale = max(np.abs(wa[k]).max(), 1e-6)
        d = np.abs(wa[k].astype(np.float64) - wb[k]).max() / scale
        assert d <= 1e-4, f"FAIL {name}: weight {k} differs by {d:.2e} of its scale"
    print(f"PASS {name}: same step losses and final weights")


if __name__ == "__main__":
    main(*sys.argv[1:4])
