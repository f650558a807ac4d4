#!/usr/bin/env python3
"""Training transformers: Tandem against PyTorch eager and torch.compile, side by side.

usage: bench/transformer_training_bench.sh [--models bert-tiny,minilm,gpt2-tiny,gpt2-mini]
           [--engines eager,compile,tandem] [--batch 8] [--seq 128] [--steps 8] [--threads 2]
           [--rounds 3] [--tandem build/tandem] [--markdown FILE]
(the .sh builds Tandem and makes the environment: bench/setup_torch2_env.sh)

Each model (models/hf_training_models.py: BERT and GPT-2 at two sizes each, random weights
from their Hugging Face configs, dropout 0) is seeded once, its weights saved and exported
for `tandem train` (legacy exporter, training mode, opset 17). Every engine then trains
from those weights on the same token batches (a third of the rows padded through the
attention mask): MSE between the last hidden state and a fixed random target, AdamW (lr
1e-4, weight decay 0.01), --steps steps of --batch rows, --threads threads. Each engine runs
in a process of its own per round, the engines taking turns round after round. An engine's
time for a round is its mean step after the first (eager, Tandem: primitives, allocator) or
after the first two (torch.compile: the graphs are compiled in them; the compile time is
printed apart). The table gives the median over rounds and Tandem / each PyTorch (< 1:
Tandem is faster).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "models"))
sys.path.insert(0, HERE)
import hf_training_models as hf  # noqa: E402
from scratch import scratch_dir  # noqa: E402
from turns import cpu_model, vector_isa  # noqa: E402

LR, WEIGHT_DECAY = 1e-4, 0.01


def torch_worker(engine, name, work, steps, batch, threads):
    """In its own process: `steps` AdamW steps of PyTorch (`engine` eager or compile); prints
    a JSON list of each step's milliseconds."""
    import torch
    torch.set_num_threads(threads)
    module = hf.build(name)
    module.load_state_dict(torch.load(os.path.join(work, name + ".pt")))
    data = {k: torch.from_numpy(np.load(os.path.join(work, f"{name}_{k}.npy")))
            for k in ("input_ids", "attention_mask", "y")}
    model = torch.compile(module) if engine == "compile" else module
    opt = torch.optim.AdamW(module.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    times = []
    for s in range(steps):
        rows = slice(s * batch, (s + 1) * batch)
        t0 = time.perf_counter()
        opt.zero_grad()
        y = model(data["input_ids"][rows], data["attention_mask"][rows])
        torch.nn.functional.mse_loss(y, data["y"][rows]).backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps(times))


def torch_step_ms(engine, name, work, steps, batch, threads):
    """(ms per step after the warm-up steps, ms of the warm-up steps) of a PyTorch engine."""
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", engine, name, work, str(steps),
                          str(batch), str(threads)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{engine} on {name} failed: {out.stderr.strip()[-800:]}")
    times = json.loads(out.stdout.strip().splitlines()[-1])
    warm = 2 if engine == "compile" else 1
    return statistics.mean(times[warm:]), sum(times[:warm])


def tandem_step_ms(tandem, name, work, batch, threads):
    """Tandem's ms per step after the first, from `tandem train`'s summary line."""
    onnx_path = os.path.join(work, name + ".onnx")
    inputs = [f for k in ("input_ids", "attention_mask") for f in ("--input", f"{k}={work}/{name}_{k}.npy")]
    out = subprocess.run([tandem, "train", onnx_path, *inputs, "--y", f"{work}/{name}_y.npy", "--loss", "mse",
                          "--optimizer", "adamw", "--lr", str(LR), "--weight-decay", str(WEIGHT_DECAY),
                          "--batch-size", str(batch), "--epochs", "1", "--no-shuffle", "--threads", str(threads),
                          "--quiet"], capture_output=True, text=True)
    found = re.search(r"\(([0-9.e+-]+) ms/step(?:, ([0-9.e+-]+) after the first)?\)", out.stdout)
    if out.returncode != 0 or not found:
        raise RuntimeError(f"tandem on {name} failed: {(out.stderr or out.stdout).strip()[-800:]}")
    return float(found.group(2) or found.group(1))


def prepare(name, work, rows, seq, seed):
    """Saves the model's initial weights, its ONNX export and the data under `work`."""
    import torch
    module = hf.build(name, seed)
    torch.save(module.state_dict(), os.path.join(work, name + ".pt"))
    feeds = hf.token_batch(hf.vocabulary(name), rows, seq, seed)
    for k, v in feeds.items():
        np.save(os.path.join(work, f"{name}_{k}.npy"), v)
    with torch.no_grad():
        y = module(*(torch.from_numpy(v[:1]) for v in feeds.values()))
    target = np.random.default_rng(seed + 1).standard_normal((rows, seq, y.shape[-1])).astype(np.float32)
    np.save(os.path.join(work, f"{name}_y.npy"), target)
    hf.export_for_training(module, feeds, os.path.join(work, name + ".onnx"))
    return sum(p.numel() for p in module.parameters())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(hf.CONFIGS))
    ap.add_argument("--engines", default="eager,compile,tandem")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tandem", default=os.path.join(ROOT, "build", "tandem"))
    ap.add_argument("--markdown", help="also write the table to this file")
    ap.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        engine, name, work, steps, batch, threads = args.worker
        torch_worker(engine, name, work, int(steps), int(batch), int(threads))
        return
    import torch
    import transformers
    engines = args.engines.split(",")
    for e in engines:
        if e not in ("eager", "compile", "tandem"):
            sys.exit(f"unknown engine '{e}': eager, compile or tandem")
    if "tandem" in engines and not os.access(args.tandem, os.X_OK):
        sys.exit(f"no tandem binary at {args.tandem} (build it, or give --tandem)")
    header = [f"{cpu_model()}, {vector_isa()}; {args.threads} threads per engine, one at a time",
              f"PyTorch {torch.__version__}, transformers {transformers.__version__}; batch {args.batch}, "
              f"sequence {args.seq}, {args.steps} steps a round, {args.rounds} rounds; AdamW, MSE on the last hidden state"]
    print("\n".join(header), flush=True)
    work = scratch_dir("tandem_transformer_train_")
    vs = [e for e in engines if e != "tandem"]
    lines = ["| model | params | " + " | ".join(f"{e} ms/step" for e in engines) + " | " +
             " | ".join(f"Tandem / {e}" for e in vs if "tandem" in engines) + " |",
             "|---|---|" + "---|" * (len(engines) + (len(vs) if "tandem" in engines else 0))]
    print(lines[0], flush=True)
    failed = False
    for name in args.models.split(","):
        if name not in hf.CONFIGS:
            sys.exit(f"unknown model '{name}': {', '.join(hf.CONFIGS)}")
        params = prepare(name, work, args.batch * args.steps, args.seq, seed=0)
        times = {e: [] for e in engines}
        compile_ms = []
        try:
            for _ in range(args.rounds):
                for e in engines:
                    if e == "tandem":
                        times[e].append(tandem_step_ms(args.tandem, name, work, args.batch, args.threads))
                    else:
                        ms, warm = torch_step_ms(e, name, work, args.steps, args.batch, args.threads)
                        times[e].append(ms)
                        if e == "compile":
                            compile_ms.append(warm)
        except RuntimeError as err:
            print(f"{name}: {err}", flush=True)
            failed = True
            continue
        med = {e: statistics.median(v) for e, v in times.items()}
        cells = [f"{med[e]:.1f} ({', '.join(f'{t:.0f}' for t in times[e])})" for e in engines]
        ratios = [f"{med['tandem'] / med[e]:.2f}" for e in vs] if "tandem" in engines else []
        lines.append(f"| {name} | {params / 1e6:.1f}M | " + " | ".join(cells + ratios) + " |")
        print(lines[-1], flush=True)
        if compile_ms:
            print(f"  torch.compile's first two steps (compiling): {', '.join(f'{t / 1e3:.0f} s' for t in compile_ms)}",
                  flush=True)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(["\n".join(f"- {h}" for h in header), "", *lines, ""]))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
