#!/usr/bin/python3
"""Inference latency: Tandem vs PyTorch CPU, side by side in the same run.

usage: bench/inference_bench.py [--tandem build/tandem] [--threads 2] [--rounds 3]

Cases: the CIFAR CNN at batch 1 and 128, the peaks MLP on 40,000 points. Each round
times many iterations of each engine; the table reports min and median over rounds of
the per-iteration latency and the ratio PyTorch / Tandem (>1 means Tandem is faster).
PyTorch must use OpenBLAS (Debian's torch otherwise runs the reference BLAS): the script
checks which BLAS library torch loaded and says so.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
import torch
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "models"))
from reference_models import MODELS, export  # noqa: E402
from scratch import scratch_dir  # noqa: E402


def blas_in_use():
    torch.randn(64, 64) @ torch.randn(64, 64)
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "blas" in line}
    return ", ".join(sorted(os.path.basename(l) for l in libs)) or "none found"


def torch_latency_ms(module, x, iters):
    with torch.no_grad():
        for _ in range(max(2, iters // 10)):
            module(x)
        start = time.perf_counter()
        for _ in range(iters):
            module(x)
        return (time.perf_counter() - start) * 1000 / iters


def tandem_latency_ms(tandem, model, npy, iters, threads):
    out = subprocess.run([tandem, "run", model, "--input", f"x={npy}", "--repeat", str(iters),
                          "--threads", str(threads)], capture_output=True, text=True, check=True)
    m = re.search(r"p50 ([0-9.]+)", out.stdout)
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tandem", default=os.path.join(ROOT, "build", "tandem"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"PyTorch {torch.__version__}, BLAS: {blas_in_use()}, threads: {args.threads}")
    if "openblas" not in blas_in_use():
        print("WARNING: torch is not using OpenBLAS; install libopenblas0-openmp for a fair baseline")

    work = scratch_dir("tandem_bench_")
    cases = [("cifar_cnn", 1, 300), ("cifar_cnn", 128, 10), ("peaks_mlp", 40000, 100)]
    print(f"{'case':<24}{'torch min':>11}{'torch med':>11}{'tandem min':>12}{'tandem med':>12}{'ratio(med)':>12}")
    for name, batch, iters in cases:
        make, shape, _ = MODELS[name]
        torch.manual_seed(0)
        module = make().eval()
        model_path = os.path.join(work, name + ".onnx")
        if not os.path.exists(model_path):
            export(module, shape, model_path)
        x = torch.randn(batch, *shape[1:])
        npy = os.path.join(work, f"{name}_{batch}.npy")
        np.save(npy, x.numpy())
        t_torch, t_tandem = [], []
        for _ in range(args.rounds):
            t_torch.append(torch_latency_ms(module, x, iters))
            t_tandem.append(tandem_latency_ms(args.tandem, model_path, npy, iters, args.threads))
        label = f"{name} batch {batch}"
        ratio = statistics.median(t_torch) / statistics.median(t_tandem)
        print(f"{label:<24}{min(t_torch):>9.3f}ms{statistics.median(t_torch):>9.3f}ms"
              f"{min(t_tandem):>10.3f}ms{statistics.median(t_tandem):>10.3f}ms{ratio:>11.2f}x")


if __name__ == "__main__":
    main()
