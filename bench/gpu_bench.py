#!/usr/bin/env python3
"""CPU-vs-GPU benchmark: Tandem on the CPU, Tandem on the GPU and PyTorch CUDA (eager,
data already on the GPU) side by side in the same run, on the same data; min and median
of --rounds runs, ratios against PyTorch CUDA.

  peaks MLP  2-20-5-1, 40,000 points, full batch, Adam lr 0.08, --peaks-epochs epochs
  ODE MLP    3-100-3 tanh, one train step at batch 1 (launch overhead dominates)
  CIFAR CNN  the Keras example CNN, training at batch 32/128/256 (images/s)

Without a GPU (torch.cuda unavailable) it says so in one line and exits 0, or 1 under
TANDEM_REQUIRE_GPU=1 (the GPU checks). --models DIR takes the ONNX files Tandem trains
(peaks_mlp.onnx, ode_mlp.onnx, cifar_cnn.onnx) from DIR where it has them, instead of
exporting them with this PyTorch (the repository's models/ has all but cifar_cnn).
usage: bench/gpu_bench.py [--tandem build/tandem] [--models DIR] [--rounds 3] [--out FILE.md]
"""
import argparse
import datetime
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
from peaks_data import peaks  # noqa: E402
from reference_models import cifar_cnn, export, ode_mlp, peaks_mlp  # noqa: E402
from scratch import scratch_dir  # noqa: E402


def torch_cuda_seconds(module, x, y, loss_fn, lr, steps, batch):
    dev = torch.device("cuda")
    module = module.to(dev)
    x, y = x.to(dev), y.to(dev)  # uploaded once, as a careful PyTorch user does
    opt = torch.optim.Adam(module.parameters(), lr=lr)
    n = x.shape[0]
    torch.cuda.synchronize()
    start = time.perf_counter()
    for s in range(steps):
        i = (s * batch) % n
        opt.zero_grad(set_to_none=True)
        loss_fn(module(x[i:i + batch]), y[i:i + batch]).backward()
        opt.step()
    torch.cuda.synchronize()
    return time.perf_counter() - start


def tandem_seconds(tandem, device, model, xp, yp, loss, lr, epochs, batch):
    # TANDEM_REQUIRE_GPU=1: if Tandem's CUDA plugin cannot run (not loadable, no device),
    # `--device cuda` fails instead of falling back, so CPU times are never reported as GPU times.
    env = dict(os.environ, TANDEM_REQUIRE_GPU="1" if device != "cpu" else os.environ.get("TANDEM_REQUIRE_GPU", ""))
    cmd = [tandem, "train", model, "--x", xp, "--y", yp, "--loss", loss, "--optimizer", "adam", "--lr", str(lr),
           "--epochs", str(epochs), "--batch-size", str(batch), "--no-shuffle", "--device", device, "--quiet"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    done = re.search(r"done: (\d+) steps in \S+ \(([0-9.e+-]+) ms/step[,)]", out.stdout)
    if out.returncode != 0 or not done:
        sys.exit(f"gpu_bench: {' '.join(cmd)} exited {out.returncode} without its 'done:' line\n"
                 f"stdout:\n{out.stdout}\nstderr:\n{out.stderr}")
    steps, ms = done.groups()
    return int(steps) * float(ms) / 1000, int(steps)


def measure(label, unit, per, rounds, torch_fn, tandem_fn, lines):
    t_torch, t_cpu, t_gpu = [], [], []
    for _ in range(rounds):  # interleaved rounds
        t_torch.append(torch_fn())
        t_cpu.append(tandem_fn("cpu"))
        t_gpu.append(tandem_fn("cuda"))
    conv = (lambda s: per / s) if unit.endswith("/s") else (lambda s: s * per)
    cols = []
    for ts in (t_torch, t_cpu, t_gpu):
        vals = [conv(t) for t in ts]
        best = max(vals) if unit.endswith("/s") else min(vals)
        cols.append((best, statistics.median(vals)))
    faster = (lambda a, b: b / a) if unit.endswith("/s") else (lambda a, b: a / b)
    line = (f"| {label} | {unit} | {cols[0][0]:.3g} / {cols[0][1]:.3g} | {cols[1][0]:.3g} / {cols[1][1]:.3g} | "
            f"{cols[2][0]:.3g} / {cols[2][1]:.3g} | {faster(cols[0][1], cols[2][1]):.2f}x | "
            f"{faster(cols[1][1], cols[2][1]):.2f}x |")
    print(line, flush=True)
    lines.append(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tandem", default=os.path.join(ROOT, "build", "tandem"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--peaks-epochs", type=int, default=2000)
    ap.add_argument("--cifar-steps", type=int, default=50)
    ap.add_argument("--out", help="also write the table (markdown) to this file")
    ap.add_argument("--models", help="a folder of exported models to use where it has them")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print(f"gpu_bench: no GPU visible to PyTorch {torch.__version__} (CUDA {torch.version.cuda}): nothing to "
              "compare (the CPU benchmarks are inference_bench.py and training_bench.py)")
        return 1 if os.environ.get("TANDEM_REQUIRE_GPU") == "1" else 0
    gpu = torch.cuda.get_device_name(0)
    work = scratch_dir("tandem_gpu_bench_")
    lines = [f"GPU benchmark, {datetime.date.today()}, {gpu}, torch {torch.__version__}",
             "", "| workload | unit | PyTorch CUDA min / median | Tandem CPU min / median | "
             "Tandem GPU min / median | GPU vs PyTorch | GPU vs CPU |", "|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    torch.manual_seed(0)

    def model(name, module, shape):  # the ONNX file Tandem trains; PyTorch trains `module`
        if args.models and os.path.exists(os.path.join(args.models, name + ".onnx")):
            return os.path.join(args.models, name + ".onnx")
        export(module, shape, f"{work}/{name}.onnx")
        return f"{work}/{name}.onnx"

    x, y = peaks()
    np.save(f"{work}/px.npy", x)
    np.save(f"{work}/py.npy", y)
    peaks_onnx = model("peaks_mlp", peaks_mlp(), (1, 2))
    e = args.peaks_epochs
    measure(f"peaks MLP, {e} full-batch Adam epochs", "s", 1, args.rounds,
            lambda: torch_cuda_seconds(peaks_mlp(), torch.from_numpy(x), torch.from_numpy(y),
                                       torch.nn.functional.mse_loss, 0.08, e, len(x)),
            lambda d: tandem_seconds(args.tandem, d, peaks_onnx, f"{work}/px.npy", f"{work}/py.npy",
                                     "mse", 0.08, e, len(x))[0], lines)

    ox = np.random.default_rng(0).standard_normal((2000, 3)).astype(np.float32)
    oy = np.tanh(ox).astype(np.float32)
    np.save(f"{work}/ox.npy", ox)
    np.save(f"{work}/oy.npy", oy)
    ode_onnx = model("ode_mlp", ode_mlp(), (1, 3))
    measure("ODE MLP 3-100-3 train step, batch 1", "us/step", 1e6 / len(ox), args.rounds,
            lambda: torch_cuda_seconds(ode_mlp(), torch.from_numpy(ox), torch.from_numpy(oy),
                                       torch.nn.functional.mse_loss, 1e-3, len(ox), 1),
            lambda d: tandem_seconds(args.tandem, d, ode_onnx, f"{work}/ox.npy", f"{work}/oy.npy",
                                     "mse", 1e-3, 1, 1)[0], lines)

    cifar_onnx = model("cifar_cnn", cifar_cnn(), (1, 3, 32, 32))
    for batch in (32, 128, 256):
        n = batch * args.cifar_steps
        cx = np.random.default_rng(1).standard_normal((n, 3, 32, 32)).astype(np.float32)
        cy = (np.arange(n) % 10).astype(np.int64)
        np.save(f"{work}/cx.npy", cx)
        np.save(f"{work}/cy.npy", cy)
        measure(f"CIFAR CNN training, batch {batch}", "img/s", n, args.rounds,
                lambda: torch_cuda_seconds(cifar_cnn(), torch.from_numpy(cx), torch.from_numpy(cy),
                                           torch.nn.functional.cross_entropy, 1e-3, args.cifar_steps, batch),
                lambda d: tandem_seconds(args.tandem, d, cifar_onnx, f"{work}/cx.npy", f"{work}/cy.npy",
                                         "cross_entropy", 1e-3, 1, batch)[0], lines)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
