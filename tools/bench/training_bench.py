#!/usr/bin/python3
"""Training speed: Tandem vs PyTorch CPU (OpenBLAS), side by side in the same run.

usage: tools/bench/training_bench.py [--tandem build/tandem] [--threads 2] [--rounds 3]
                                     [--peaks-epochs 2000] [--ode-steps 20000] [--cifar-steps 30]

  peaks MLP: full-batch Adam (lr 0.08) on 40,000 points, --peaks-epochs epochs; ms per epoch
  ODE MLP:   the 3-100-3 tanh net, Adam steps at batch 1 (--ode-steps); microseconds per step
  CIFAR CNN: Adam steps on random 32x32 images at batch 32 and 128; images per second
Each round runs both engines; the table gives min and median over rounds and the ratio
of medians (>1: Tandem is faster). Both engines are timed at the rate of their steps after
the first (which builds primitives, JIT-compiles kernels and warms allocators in each), so
a short run measures what a long training run pays per step.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "models"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inference_bench import blas_in_use  # noqa: E402
from peaks_data import peaks  # noqa: E402
from reference_models import cifar_cnn, export, ode_mlp, peaks_mlp  # noqa: E402


def torch_train_seconds(module, x, y, loss_fn, lr, steps, batch):
    """Seconds for `steps` steps at the rate of the steps after the first."""
    opt = torch.optim.Adam(module.parameters(), lr=lr)
    n = x.shape[0]
    start = time.perf_counter()
    for s in range(steps):
        if s == 1:
            start = time.perf_counter()
        i = (s * batch) % n
        opt.zero_grad()
        loss_fn(module(x[i:i + batch]), y[i:i + batch]).backward()
        opt.step()
    return (time.perf_counter() - start) * steps / max(1, steps - 1)


def tandem_train_seconds(tandem, model, xp, yp, loss, lr, epochs, batch, threads):
    out = subprocess.run([tandem, "train", model, "--x", xp, "--y", yp, "--loss", loss, "--optimizer",
                          "adam", "--lr", str(lr), "--epochs", str(epochs), "--batch-size", str(batch),
                          "--no-shuffle", "--threads", str(threads), "--quiet"],
                         capture_output=True, text=True, check=True)
    found = re.search(r"done: (\d+) steps in \S+ \(([0-9.e+-]+) ms/step(?:, ([0-9.e+-]+) after the first)?\)",
                      out.stdout)
    steps, ms, ms_after_first = found.groups()
    return int(steps) * float(ms_after_first or ms) / 1000


def row(label, unit, t_torch, t_tandem, higher_is_better):
    med_t, med_d = statistics.median(t_torch), statistics.median(t_tandem)
    ratio = med_d / med_t if higher_is_better else med_t / med_d
    best = max if higher_is_better else min
    print(f"{label:<29}{best(t_torch):>10.4g}{med_t:>11.4g}{best(t_tandem):>12.4g}{med_d:>12.4g}"
          f"  {unit:<9}{ratio:>6.2f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tandem", default=os.path.join(ROOT, "build", "tandem"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--peaks-epochs", type=int, default=2000)
    ap.add_argument("--ode-steps", type=int, default=20000)
    ap.add_argument("--cifar-steps", type=int, default=30)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"PyTorch {torch.__version__}, BLAS: {blas_in_use()}, threads: {args.threads}")
    work = tempfile.mkdtemp(prefix="tandem_train_bench_")
    print(f"{'case':<29}{'torch best':>10}{'torch med':>11}{'tandem best':>12}{'tandem med':>12}  {'unit':<9}{'ratio':>7}")

    def race(make, module, onnx_name, x, y, torch_loss, tandem_loss, lr, batch, steps):
        """Seconds per round of `steps` Adam steps at `batch` (cycling through x, y) for
        PyTorch and for `tandem train` (steps * batch / len(x) epochs), same init and data."""
        xp, yp = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
        np.save(xp, x)
        np.save(yp, y)
        epochs = steps * batch // len(x)
        tt, td = [], []
        for _ in range(args.rounds):
            m = make()
            m.load_state_dict(module.state_dict())
            tt.append(torch_train_seconds(m, torch.from_numpy(x), torch.from_numpy(y), torch_loss, lr,
                                          steps, batch))
            td.append(tandem_train_seconds(args.tandem, os.path.join(work, onnx_name), xp, yp,
                                           tandem_loss, lr, epochs, batch, args.threads))
        return tt, td

    mse = torch.nn.functional.mse_loss
    torch.manual_seed(1)
    mlp = peaks_mlp()
    export(mlp, (1, 2), os.path.join(work, "peaks.onnx"))
    X, Y = peaks()
    tt, td = race(peaks_mlp, mlp, "peaks.onnx", X, Y, mse, "mse", 0.08, len(X), args.peaks_epochs)
    per_epoch = [1e3 / args.peaks_epochs * t for t in tt], [1e3 / args.peaks_epochs * t for t in td]
    row("peaks MLP epoch (40,000 pts)", "ms/epoch", *per_epoch, higher_is_better=False)

    torch.manual_seed(3)
    ode = ode_mlp()
    export(ode, (1, 3), os.path.join(work, "ode.onnx"))
    rng = np.random.default_rng(3)
    Xo = rng.standard_normal((args.ode_steps, 3)).astype(np.float32)
    Yo = rng.standard_normal((args.ode_steps, 3)).astype(np.float32)
    tt, td = race(ode_mlp, ode, "ode.onnx", Xo, Yo, mse, "mse", 1e-3, 1, args.ode_steps)
    per_step = [1e6 / args.ode_steps * t for t in tt], [1e6 / args.ode_steps * t for t in td]
    row("3-100-3 step, batch 1", "us/step", *per_step, higher_is_better=False)

    torch.manual_seed(2)
    cnn = cifar_cnn().eval()
    export(cnn, (1, 3, 32, 32), os.path.join(work, "cifar.onnx"))
    for batch in (32, 128):
        n = batch * args.cifar_steps
        rng = np.random.default_rng(batch)
        Xc = rng.standard_normal((n, 3, 32, 32)).astype(np.float32)
        Yc = rng.integers(0, 10, n).astype(np.int64)
        tt, td = race(lambda: cifar_cnn().eval(), cnn, "cifar.onnx", Xc, Yc,
                      torch.nn.functional.cross_entropy, "cross_entropy", 1e-3, batch, args.cifar_steps)
        row(f"CIFAR CNN batch {batch}", "img/s", [n / t for t in tt], [n / t for t in td],
            higher_is_better=True)


if __name__ == "__main__":
    main()
