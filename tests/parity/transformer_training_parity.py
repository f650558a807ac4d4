#!/usr/bin/env python3
"""Transformer training parity with PyTorch: Hugging Face models (models/hf_training_models.py:
BERT and GPT-2, small configs, random weights, dropout 0) exported for training, then 30
AdamW steps (lr 1e-3, weight decay 0.01) of MSE on the last hidden state over fixed
consecutive batches of 8 token sequences (a third of them padded through the attention
mask), from the same initial weights in PyTorch and in `tandem train`, with Tandem's
fusions (attention, GELU, linear layers fused before the gradients) and without
(--no-fusion: the element-wise gradient rules). The per-step losses must agree within 1e-4
relative, as the CNN and MLP parity does (tests/parity/training_parity.py).

usage: transformer_training_parity.py TANDEM_BINARY WORK_DIR  (in an environment with torch
and transformers: bench/setup_torch2_env.sh)
Exit status 0 when every run matches.
"""
import csv
import os
import subprocess
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "models"))
import hf_training_models as hf  # noqa: E402

STEPS, BATCH, SEQ, LR, WEIGHT_DECAY = 30, 8, 64, 1e-3, 0.01


def torch_losses(module, feeds, y):
    opt = torch.optim.AdamW(module.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    data = {k: torch.from_numpy(v) for k, v in feeds.items()}
    target = torch.from_numpy(y)
    losses = []
    for s in range(STEPS):
        rows = slice(s * BATCH, (s + 1) * BATCH)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(module(data["input_ids"][rows], data["attention_mask"][rows]), target[rows])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses)


def tandem_losses(tandem, model, paths, log, extra):
    inputs = [f for k in ("input_ids", "attention_mask") for f in ("--input", f"{k}={paths[k]}")]
    subprocess.run([tandem, "train", model, *inputs, "--y", paths["y"], "--loss", "mse", "--optimizer", "adamw",
                    "--lr", str(LR), "--weight-decay", str(WEIGHT_DECAY), "--batch-size", str(BATCH), "--epochs", "1",
                    "--no-shuffle", "--threads", "2", "--quiet", "--step-log", log, *extra], check=True)
    with open(log) as f:
        return np.array([float(r["loss"]) for r in csv.DictReader(f)])


def main():
    tandem, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(2)
    ok = True
    for name in ("bert-tiny", "gpt2-tiny"):
        module = hf.build(name, seed=5)
        initial = {k: v.clone() for k, v in module.state_dict().items()}
        feeds = hf.token_batch(hf.vocabulary(name), STEPS * BATCH, SEQ, seed=6)
        with torch.no_grad():
            width = module(*(torch.from_numpy(v[:1]) for v in feeds.values())).shape[-1]
        y = np.random.default_rng(7).standard_normal((STEPS * BATCH, SEQ, width)).astype(np.float32)
        paths = {k: os.path.join(work, f"{name}_{k}.npy") for k in ("input_ids", "attention_mask", "y")}
        for k, v in {**feeds, "y": y}.items():
            np.save(paths[k], v)
        model = os.path.join(work, name + ".onnx")
        hf.export_for_training(module, feeds, model)
        module.load_state_dict(initial)
        ref = torch_losses(module, feeds, y)
        for label, extra in (("fused", []), ("--no-fusion", ["--no-fusion"])):
            got = tandem_losses(tandem, model, paths, os.path.join(work, f"{name}_{label}.csv"), extra)
            if got.shape != ref.shape:
                print(f"{name} ({label}): {got.shape[0]} steps, PyTorch {ref.shape[0]}")
                ok = False
                continue
            rel = np.abs(got - ref) / np.abs(ref)
            good = rel.max() <= 1e-4
            ok &= good
            print(f"{name} ({label}): {STEPS} AdamW steps, loss {ref[0]:.6f} -> {ref[-1]:.6f} (PyTorch) vs "
                  f"{got[-1]:.6f} (Tandem); max relative difference {rel.max():.2e} at step {rel.argmax() + 1} "
                  f"-> {'OK' if good else 'MISMATCH'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
