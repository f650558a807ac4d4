"""Data-parallel training through the Python module (docs/DISTRIBUTED.md), for
tests/data_parallel_test.sh: the peaks MLP, momentum SGD, 10 steps on one fixed batch of
300 sin*cos points.

  python3 data_parallel_api.py OUT.json            one process steps on the whole batch
  mpirun -n K python3 data_parallel_api.py OUT.json mpi
                                                    each rank steps on its contiguous share
                                                    (uneven for K = 3), distributed="mpi"

Writes {"losses": [...], "eval": [loss, accuracy], "ranks": K} (rank 0 alone)."""
import json
import os
import sys

import numpy as np

import tandem

out = sys.argv[1]
distributed = len(sys.argv) > 2
model = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "peaks_mlp.onnx")
rng = np.random.default_rng(0)
x = rng.uniform(-3, 3, (300, 2)).astype(np.float32)
y = (np.sin(x[:, :1]) * np.cos(x[:, 1:])).astype(np.float32)

ts = tandem.TrainingSession(model, loss="mse", optimizer="momentum", lr=0.02, threads=1,
                            distributed="mpi" if distributed else None)
rank, size = ts.rank
assert size == (int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1")) if distributed else 1), (rank, size)
base, extra = divmod(len(x), size)
lo = rank * base + min(rank, extra)
hi = lo + base + (1 if rank < extra else 0)
losses = [ts.train_step({"x": x[lo:hi]}, y[lo:hi]) for _ in range(10)]
evaluation = ts.eval_step({"x": x[lo:hi]}, y[lo:hi])
if rank == 0:
    with open(out, "w") as f:
        json.dump({"losses": losses, "eval": list(evaluation), "ranks": size}, f)
