#!/usr/bin/python3
"""Training speed: Tandem vs PyTorch CPU, side by side in the same run.

usage: bench/training_bench.py [--tandem build/tandem] [--threads 2] [--rounds 3]
                                     [--peaks-epochs 2000] [--ode-steps 20000] [--cifar-steps 30]
                                     [--torch2-python .venv-torch2/bin/python]

  peaks MLP: full-batch Adam (lr 0.08) on 40,000 points, --peaks-epochs epochs; ms per epoch
  ODE MLP:   the 3-100-3 tanh net, Adam steps at batch 1 (--ode-steps); microseconds per step
  CIFAR CNN: Adam steps on random 32x32 images at batch 32 and 128; images per second
PyTorch is Debian's 1.13 with OpenBLAS and, where a PyTorch 2.x environment exists
(bench/setup_torch2_env.sh makes .venv-torch2, the default --torch2-python), also
PyTorch 2.x from PyPI (oneDNN convolutions, MKL matrix products). Each round runs every
engine, each in its own process, on the same initial weights and batches; the table gives
min and median over rounds and the ratio of medians (>1: Tandem is faster). Every engine
is timed at the rate of its steps after the first (which builds primitives, JIT-compiles
kernels and warms allocators in each), so a short run measures what a long training run
pays per step.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "models"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inference_bench import blas_in_use  # noqa: E402
from peaks_data import peaks  # noqa: E402
from reference_models import cifar_cnn, export, ode_mlp, peaks_mlp  # noqa: E402
from scratch import scratch_dir  # noqa: E402


MODELS = {"peaks": peaks_mlp, "ode": ode_mlp, "cifar": lambda: cifar_cnn().eval()}
LOSSES = {"mse": torch.nn.functional.mse_loss, "cross_entropy": torch.nn.functional.cross_entropy}


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


def torch_worker(model, state_path, xp, yp, loss, lr, steps, batch, threads):
    """In the process of the torch under test: prints the seconds of torch_train_seconds."""
    torch.set_num_threads(threads)
    module = MODELS[model]()
    module.load_state_dict(torch.load(state_path))
    print(torch_train_seconds(module, torch.from_numpy(np.load(xp)), torch.from_numpy(np.load(yp)),
                              LOSSES[loss], lr, steps, batch))


def torch_train_seconds_in(python, model, state_path, xp, yp, loss, lr, steps, batch, threads):
    out = subprocess.run([python, os.path.abspath(__file__), "--torch-worker", model, state_path, xp, yp, loss,
                          str(lr), str(steps), str(batch), str(threads)], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def tandem_train_seconds(tandem, model, xp, yp, loss, lr, epochs, batch, threads):
    out = subprocess.run([tandem, "train", model, "--x", xp, "--y", yp, "--loss", loss, "--optimizer",
                          "adam", "--lr", str(lr), "--epochs", str(epochs), "--batch-size", str(batch),
                          "--no-shuffle", "--threads", str(threads), "--quiet"],
                         capture_output=True, text=True, check=True)
    found = re.search(r"done: (\d+) steps in \S+ \(([0-9.e+-]+) ms/step(?:, ([0-9.e+-]+) after the first)?\)",
                      out.stdout)
    steps, ms, ms_after_first = found.groups()
    return int(steps) * float(ms_after_first or ms) / 1000


def row(label, unit, times, higher_is_better):
    """times: engine -> per-round values, Tandem last; ratios of Tandem against each torch."""
    best = max if higher_is_better else min
    med = {e: statistics.median(v) for e, v in times.items()}
    cells = "".join(f"{best(v):>13.4g}{med[e]:>13.4g}" for e, v in times.items())
    ratios = "".join(f"{(med['tandem'] / med[e] if higher_is_better else med[e] / med['tandem']):>9.2f}x"
                     for e in times if e != "tandem")
    print(f"{label:<29}{cells}  {unit:<9}{ratios}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tandem", default=os.path.join(ROOT, "build", "tandem"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--peaks-epochs", type=int, default=2000)
    ap.add_argument("--ode-steps", type=int, default=20000)
    ap.add_argument("--cifar-steps", type=int, default=30)
    ap.add_argument("--torch2-python", default=os.path.join(ROOT, ".venv-torch2", "bin", "python"),
                    help="python of a PyTorch 2.x environment; left out if it does not exist")
    ap.add_argument("--torch-worker", nargs=9, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.torch_worker:
        model, state_path, xp, yp, loss, lr, steps, batch, threads = args.torch_worker
        torch_worker(model, state_path, xp, yp, loss, float(lr), int(steps), int(batch), int(threads))
        return
    torch.set_num_threads(args.threads)
    pythons = {"torch": sys.executable}
    print(f"PyTorch {torch.__version__}, BLAS: {blas_in_use()}, threads: {args.threads}")
    if os.path.exists(args.torch2_python):
        pythons["torch2"] = args.torch2_python
        print(subprocess.run([args.torch2_python, "-c", "import torch; print(f'PyTorch {torch.__version__} "
                              "(oneDNN: {torch.backends.mkldnn.is_available()}, MKL: {torch.backends.mkl.is_available()})')"],
                             capture_output=True, text=True, check=True).stdout.strip())
    else:
        print(f"no PyTorch 2.x environment at {args.torch2_python} (bench/setup_torch2_env.sh makes one): "
              "comparing with PyTorch 1.13 only")
    work = scratch_dir("tandem_train_bench_")
    names = {"torch": "1.13", "torch2": "2.x", "tandem": "tandem"}
    print(f"{'case':<29}" + "".join(f"{names[e] + ' best':>13}{names[e] + ' med':>13}" for e in [*pythons, "tandem"]) +
          f"  {'unit':<9}" + "".join(f"{'vs ' + names[e]:>10}" for e in pythons))

    def race(model, onnx_name, x, y, loss, lr, batch, steps):
        """Seconds per round of `steps` Adam steps at `batch` (cycling through x, y) for each
        PyTorch and for `tandem train` (steps * batch / len(x) epochs), same init and data."""
        xp, yp = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
        np.save(xp, x)
        np.save(yp, y)
        epochs = steps * batch // len(x)
        times = {e: [] for e in [*pythons, "tandem"]}
        for _ in range(args.rounds):
            for engine, python in pythons.items():
                times[engine].append(torch_train_seconds_in(python, model, os.path.join(work, model + ".state.pt"),
                                                            xp, yp, loss, lr, steps, batch, args.threads))
            times["tandem"].append(tandem_train_seconds(args.tandem, os.path.join(work, onnx_name), xp, yp,
                                                        loss, lr, epochs, batch, args.threads))
        return times

    def exported(model, seed, input_shape):
        """The model's ONNX file and its initial weights (state dict) for every engine."""
        torch.manual_seed(seed)
        module = MODELS[model]()
        export(module, input_shape, os.path.join(work, model + ".onnx"))
        torch.save(module.state_dict(), os.path.join(work, model + ".state.pt"))
        return model + ".onnx"

    X, Y = peaks()
    times = race("peaks", exported("peaks", 1, (1, 2)), X, Y, "mse", 0.08, len(X), args.peaks_epochs)
    row("peaks MLP epoch (40,000 pts)", "ms/epoch", {e: [1e3 / args.peaks_epochs * t for t in v]
                                                     for e, v in times.items()}, higher_is_better=False)

    rng = np.random.default_rng(3)
    Xo = rng.standard_normal((args.ode_steps, 3)).astype(np.float32)
    Yo = rng.standard_normal((args.ode_steps, 3)).astype(np.float32)
    times = race("ode", exported("ode", 3, (1, 3)), Xo, Yo, "mse", 1e-3, 1, args.ode_steps)
    row("3-100-3 step, batch 1", "us/step", {e: [1e6 / args.ode_steps * t for t in v] for e, v in times.items()},
        higher_is_better=False)

    cifar = exported("cifar", 2, (1, 3, 32, 32))
    for batch in (32, 128):
        n = batch * args.cifar_steps
        rng = np.random.default_rng(batch)
        Xc = rng.standard_normal((n, 3, 32, 32)).astype(np.float32)
        Yc = rng.integers(0, 10, n).astype(np.int64)
        times = race("cifar", cifar, Xc, Yc, "cross_entropy", 1e-3, batch, args.cifar_steps)
        row(f"CIFAR CNN batch {batch}", "img/s", {e: [n / t for t in v] for e, v in times.items()},
            higher_is_better=True)


if __name__ == "__main__":
    main()
