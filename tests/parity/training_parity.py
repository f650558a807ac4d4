#!/usr/bin/python3
"""Training parity with PyTorch: identical initial weights (exported from torch), identical
data and batches; the per-step loss sequences must agree within 1e-4 relative.

  peaks MLP: 200 Adam steps, full batch (40,000 points), lr 0.08
  CIFAR CNN: 50 Adam steps, batch 32, fixed batches (no shuffling), lr 1e-3
  BN CNN:    30 SGD-momentum steps of Conv-BatchNorm-ReLU-Pool-Linear (training-mode
             batch statistics), plus the running mean/var after training
  transformer: 30 Adam steps of a 2-layer pre-norm encoder classifier (attention,
             LayerNormalization, integer class labels), batch 16, lr 1e-3
  LSTM:      30 Adam steps of a 2-layer LSTM sequence model (a target per step), batch 16,
             lr 1e-2
  two inputs: 30 Adam steps of a model with two inputs (--input NAME=FILE.npy each) and a
             LogSoftmax head trained with the nll loss on integer labels
  k-fold:    tandem train --k-fold 4 on 400 peaks points (no shuffling: fold k holds out
             rows [k*N/4, (k+1)*N/4) and trains on the rows after, then before), 30 full-batch
             Adam epochs per fold from the same start; each fold's validation MSE vs PyTorch's

The peaks run at lr 0.08 is chaotic: PyTorch disagrees with itself (1 vs 2 threads, or
float32 vs float64) by up to 50% after ~80 steps, because rounding differences in the
gradients grow exponentially. So its loss sequence is compared over the steps where
float32 is still predictive — where PyTorch float32 and float64 agree within 1e-5 — and
that window must span at least 10 steps (how long depends on the CPU's kernels: 20 steps
on an AVX-512 Xeon, where Tandem stayed within 2e-7 of float64 for 31; 30 or more on
AVX2 machines); over all 200 steps the final losses are reported side by side.

usage: tests/parity/training_parity.py TANDEM_BINARY WORK_DIR
Exit status 0 when both match; prints the worst relative difference of each.
"""
import csv
import os
import re
import subprocess
import sys

import numpy as np
import torch
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "models"))
from peaks_data import peaks  # noqa: E402
from reference_models import EncoderClassifier, LstmModel, cifar_cnn, export, peaks_mlp  # noqa: E402


def torch_losses(module, x, y, loss_fn, lr, steps, batch):
    """Adam steps over fixed consecutive batches; x is a tensor or a tuple of input tensors."""
    opt = torch.optim.Adam(module.parameters(), lr=lr)
    losses = []
    xs = x if isinstance(x, tuple) else (x,)
    n = xs[0].shape[0]
    for s in range(steps):
        i = (s * batch) % n
        xb, yb = [t[i:i + batch] for t in xs], y[i:i + batch]
        opt.zero_grad()
        loss = loss_fn(module(*xb), yb)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses)


def tandem_losses(tandem, model, x_path, y_path, loss, lr, epochs, batch, log, extra=()):
    """x_path: one .npy file, or {input name: .npy file} for a model with several inputs."""
    x_flags = ["--x", x_path] if isinstance(x_path, str) else \
        [f for name, path in x_path.items() for f in ("--input", f"{name}={path}")]
    subprocess.run([tandem, "train", model, *x_flags, "--y", y_path, "--loss", loss,
                    "--optimizer", "adam", "--lr", str(lr), "--epochs", str(epochs),
                    "--batch-size", str(batch), "--no-shuffle", "--threads", "2", "--quiet",
                    "--step-log", log, *extra], check=True)
    with open(log) as f:
        return np.array([float(r["loss"]) for r in csv.DictReader(f)])


def compare(name, ours, theirs, window=None):
    if window is not None:
        ours, theirs = ours[:window], theirs[:window]
    if ours.shape != theirs.shape:
        print(f"{name}: {ours.shape[0]} steps, PyTorch {theirs.shape[0]}")
        return False
    rel = np.abs(ours - theirs) / np.maximum(np.abs(theirs), 1e-12)
    ok = rel.max() <= 1e-4
    print(f"{name}: {len(ours)} steps, first loss {theirs[0]:.6g}, last {theirs[-1]:.6g} (torch) "
          f"vs {ours[-1]:.6g} (tandem); max relative difference {rel.max():.2e} "
          f"at step {rel.argmax() + 1} -> {'OK' if ok else 'MISMATCH'}")
    return ok


def adam_race(tandem, work, title, tag, module, model, xs, y, torch_loss, loss, lr, batch):
    """One epoch of Adam steps over consecutive batches of (xs, y) in PyTorch and in Tandem;
    xs is an array or {input name: array}. Returns whether the losses agree."""
    named = xs if isinstance(xs, dict) else {"x": xs}
    paths = {}
    for name, array in list(named.items()) + [("y", y)]:
        paths[name] = os.path.join(work, f"{tag}_{name}.npy")
        np.save(paths[name], array)
    steps = len(y) // batch
    ref = torch_losses(module, tuple(torch.from_numpy(a) for a in named.values()), torch.from_numpy(y),
                       torch_loss, lr, steps, batch)
    x_arg = paths["x"] if not isinstance(xs, dict) else {name: paths[name] for name in named}
    got = tandem_losses(tandem, model, x_arg, paths["y"], loss, lr, 1, batch, os.path.join(work, f"{tag}_steps.csv"))
    return compare(title, got, ref)


def main():
    tandem, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(2)
    ok = True

    torch.manual_seed(1)
    mlp = peaks_mlp()
    export(mlp, (1, 2), os.path.join(work, "peaks.onnx"))
    X, Y = peaks()
    np.save(os.path.join(work, "peaks_x.npy"), X)
    np.save(os.path.join(work, "peaks_y.npy"), Y)
    mlp64 = peaks_mlp().double()
    mlp64.load_state_dict({k: v.double() for k, v in mlp.state_dict().items()})
    ref = torch_losses(mlp.train(), torch.from_numpy(X), torch.from_numpy(Y),
                       torch.nn.functional.mse_loss, 0.08, 200, len(X))
    ref64 = torch_losses(mlp64.train(), torch.from_numpy(X).double(), torch.from_numpy(Y).double(),
                         torch.nn.functional.mse_loss, 0.08, 200, len(X))
    got = tandem_losses(tandem, os.path.join(work, "peaks.onnx"), os.path.join(work, "peaks_x.npy"),
                        os.path.join(work, "peaks_y.npy"), "mse", 0.08, 200, len(X),
                        os.path.join(work, "peaks_steps.csv"))
    drift = np.abs(ref64 - ref) / np.abs(ref)
    window = int(np.argmax(drift > 1e-5)) if (drift > 1e-5).any() else len(ref)
    print(f"peaks MLP: PyTorch float32 stays within 1e-5 of float64 for {window} steps")
    ok &= window >= 10
    ok &= compare(f"peaks MLP, Adam lr 0.08, full batch, first {window} steps", got, ref, window)
    print(f"peaks MLP after 200 steps: loss {got[-1]:.5g} (tandem), {ref[-1]:.5g} (PyTorch float32), "
          f"{ref64[-1]:.5g} (PyTorch float64)")

    # The seed workload: 2000 epochs from the same start; final MSEs must be comparable,
    # i.e. within a factor 1.5: the trajectory is chaotic, and runs that differ only in
    # rounding end in different minima (seen: PyTorch 0.895 on 2 threads, 0.979 on 1;
    # Tandem 1.28 on 2 threads, 0.964 on 1).
    torch.manual_seed(1)
    mlp = peaks_mlp()
    ref = torch_losses(mlp.train(), torch.from_numpy(X), torch.from_numpy(Y),
                       torch.nn.functional.mse_loss, 0.08, 2000, len(X))
    got = tandem_losses(tandem, os.path.join(work, "peaks.onnx"), os.path.join(work, "peaks_x.npy"),
                        os.path.join(work, "peaks_y.npy"), "mse", 0.08, 2000, len(X),
                        os.path.join(work, "peaks_2000.csv"))
    ratio = got[-1] / ref[-1]
    print(f"peaks MLP after 2000 epochs: final MSE {got[-1]:.4g} (tandem) vs {ref[-1]:.4g} (PyTorch), "
          f"ratio {ratio:.3f} -> {'OK' if 1 / 1.5 <= ratio <= 1.5 else 'NOT COMPARABLE'}")
    ok &= 1 / 1.5 <= ratio <= 1.5

    torch.manual_seed(2)
    cnn = cifar_cnn()
    export(cnn, (1, 3, 32, 32), os.path.join(work, "cifar.onnx"))
    cnn.eval()  # dropout off: the exported inference graph has no Dropout either
    rng = np.random.default_rng(3)
    X = rng.standard_normal((50 * 32, 3, 32, 32)).astype(np.float32)
    Y = rng.integers(0, 10, 50 * 32).astype(np.int64)
    ok &= adam_race(tandem, work, "CIFAR CNN, Adam lr 1e-3, batch 32", "cifar", cnn, os.path.join(work, "cifar.onnx"),
                    X, Y, torch.nn.functional.cross_entropy, "cross_entropy", 1e-3, 32)

    torch.manual_seed(4)
    bn = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8),
                             torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                             torch.nn.Linear(8 * 8 * 8, 10))
    # Exported in training mode: an eval-mode export folds BatchNorm into the Conv.
    bn.train()
    torch.onnx.export(bn, torch.randn(1, 3, 16, 16), os.path.join(work, "bn.onnx"),
                      input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                      opset_version=15, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    X = rng.standard_normal((30 * 16, 3, 16, 16)).astype(np.float32)
    Y = rng.integers(0, 10, 30 * 16).astype(np.int64)
    np.save(os.path.join(work, "bn_x.npy"), X)
    np.save(os.path.join(work, "bn_y.npy"), Y)
    bn.train()
    ref = []
    # ONNX defines the running variance with the population (biased) batch variance where
    # PyTorch uses the unbiased one; track the ONNX definition from the conv outputs.
    onnx_running_var = bn[1].running_var.clone()
    def track(_module, _inputs, out):
        batch_var = out.detach().transpose(0, 1).reshape(out.shape[1], -1).var(dim=1, unbiased=False)
        onnx_running_var.mul_(0.9).add_(0.1 * batch_var)
    hook = bn[0].register_forward_hook(track)
    opt = torch.optim.SGD(bn.parameters(), lr=0.05, momentum=0.9)
    for s in range(30):
        xb, yb = torch.from_numpy(X[s * 16:(s + 1) * 16]), torch.from_numpy(Y[s * 16:(s + 1) * 16])
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(bn(xb), yb)
        loss.backward()
        opt.step()
        ref.append(loss.item())
    hook.remove()
    trained = os.path.join(work, "bn_trained.onnx")
    subprocess.run([tandem, "train", os.path.join(work, "bn.onnx"), "--x", os.path.join(work, "bn_x.npy"),
                    "--y", os.path.join(work, "bn_y.npy"), "--loss", "cross_entropy", "--optimizer",
                    "momentum", "--momentum", "0.9", "--lr", "0.05", "--epochs", "1", "--batch-size", "16",
                    "--no-shuffle", "--threads", "2", "--quiet", "--step-log",
                    os.path.join(work, "bn_steps.csv"), "--export", trained], check=True)
    with open(os.path.join(work, "bn_steps.csv")) as f:
        got = np.array([float(r["loss"]) for r in csv.DictReader(f)])
    ok &= compare("BN CNN, SGD momentum 0.9 lr 0.05, batch 16", got, np.array(ref))
    import onnx
    inits = {t.name: numpy_helper.to_array(t) for t in onnx.load(trained).graph.initializer}
    bn_mod = bn[1]
    for name, want in (("running_mean", bn_mod.running_mean), ("running_var", onnx_running_var)):
        have = [v for k, v in inits.items() if k.endswith(name)]
        diff = np.abs(have[0] - want.numpy()).max() if have else float("inf")
        print(f"BN CNN {name} after 30 steps: max |tandem - torch| = {diff:.2e}")
        ok &= diff <= 1e-4 * max(1.0, float(np.abs(want.numpy()).max()))

    # Sequence models, exported at opset 17 (LayerNormalization). nn.TransformerEncoder
    # deep-copies its layer, so both layers start equal and the exporter would store the
    # shared values once (tying weights PyTorch trains apart): each parameter is nudged first.
    torch.manual_seed(5)
    encoder = EncoderClassifier()
    with torch.no_grad():
        for p in encoder.parameters():
            p.add_(0.05 * torch.randn_like(p))
    export(encoder, (2, 10, 32), os.path.join(work, "encoder.onnx"), opset=17)
    X = rng.standard_normal((30 * 16, 10, 32)).astype(np.float32)
    Y = rng.integers(0, 5, 30 * 16).astype(np.int64)
    ok &= adam_race(tandem, work, "transformer encoder, Adam lr 1e-3, batch 16", "encoder", encoder.train(),
                    os.path.join(work, "encoder.onnx"), X, Y, torch.nn.functional.cross_entropy, "cross_entropy",
                    1e-3, 16)

    torch.manual_seed(7)
    lstm = LstmModel()
    export(lstm, (2, 12, 8), os.path.join(work, "lstm.onnx"), opset=17)
    X = rng.standard_normal((30 * 16, 12, 8)).astype(np.float32)
    Y = np.sin(np.cumsum(X[:, :, :3], axis=1)).astype(np.float32)  # depends on the history
    ok &= adam_race(tandem, work, "LSTM sequence model, Adam lr 1e-2, batch 16", "lstm", lstm.train(),
                    os.path.join(work, "lstm.onnx"), X, Y, torch.nn.functional.mse_loss, "mse", 1e-2, 16)

    class TwoInputs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.out = torch.nn.Linear(6, 16), torch.nn.Linear(3, 16), torch.nn.Linear(16, 4)

        def forward(self, a, b):
            return torch.log_softmax(self.out(torch.tanh(self.a(a) + self.b(b))), dim=1)

    torch.manual_seed(8)
    two = TwoInputs()
    torch.onnx.export(two, (torch.randn(2, 6), torch.randn(2, 3)), os.path.join(work, "two.onnx"),
                      input_names=["a", "b"], output_names=["y"], opset_version=13,
                      dynamic_axes={"a": {0: "n"}, "b": {0: "n"}, "y": {0: "n"}})
    A = rng.standard_normal((30 * 16, 6)).astype(np.float32)
    B = rng.standard_normal((30 * 16, 3)).astype(np.float32)
    Y = rng.integers(0, 4, 30 * 16).astype(np.int64)
    ok &= adam_race(tandem, work, "two inputs, LogSoftmax + nll, Adam lr 1e-2, batch 16", "two", two,
                    os.path.join(work, "two.onnx"), {"a": A, "b": B}, Y, torch.nn.functional.nll_loss, "nll", 1e-2, 16)
    ok &= kfold_race(tandem, work)
    sys.exit(0 if ok else 1)


def kfold_race(tandem, work):
    torch.manual_seed(3)
    mlp = peaks_mlp()
    export(mlp, (1, 2), os.path.join(work, "kfold.onnx"))
    start = {k: v.clone() for k, v in mlp.state_dict().items()}
    X, Y = peaks()
    X, Y = X[::100].copy(), Y[::100].copy()  # 400 points across the grid
    np.save(os.path.join(work, "kfold_x.npy"), X)
    np.save(os.path.join(work, "kfold_y.npy"), Y)
    k, n, epochs = 4, len(X), 30
    want = []
    for f in range(k):
        a, b = f * n // k, (f + 1) * n // k
        mlp.load_state_dict(start)
        xt = torch.from_numpy(np.concatenate([X[b:], X[:a]]))
        yt = torch.from_numpy(np.concatenate([Y[b:], Y[:a]]))
        torch_losses(mlp.train(), xt, yt, torch.nn.functional.mse_loss, 0.01, epochs, len(xt))
        with torch.no_grad():
            want.append(torch.nn.functional.mse_loss(mlp(torch.from_numpy(X[a:b])), torch.from_numpy(Y[a:b])).item())
    out = subprocess.run([tandem, "train", os.path.join(work, "kfold.onnx"), "--x", os.path.join(work, "kfold_x.npy"),
                          "--y", os.path.join(work, "kfold_y.npy"), "--k-fold", str(k), "--epochs", str(epochs),
                          "--batch-size", str(n), "--lr", "0.01", "--no-shuffle", "--threads", "2", "--device", "cpu"],
                         check=True, capture_output=True, text=True).stdout
    got = [float(v) for v in re.findall(r"val_loss ([0-9.eE+-]+)\n", out)]
    if len(got) != k:
        print(f"k-fold: expected {k} fold lines, got:\n{out}")
        return False
    rel = np.abs(np.array(got) - np.array(want)) / np.array(want)
    ok = rel.max() <= 1e-4
    print(f"k-fold, 4 folds x {epochs} full-batch Adam epochs: validation MSE per fold "
          f"{', '.join(f'{g:.6g}' for g in got)} (tandem) vs {', '.join(f'{w:.6g}' for w in want)} (PyTorch); "
          f"max relative difference {rel.max():.2e} -> {'OK' if ok else 'MISMATCH'}")
    return ok


if __name__ == "__main__":
    main()
