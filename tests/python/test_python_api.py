#!/usr/bin/python3
"""Tests of the `tandem` Python module (python/tandem) against PyTorch and the CLI.

  1. inference: a Linear(4,16)-Tanh-Linear(16,3) exported from PyTorch (opset 13, dynamic
     batch) run with tandem.Session matches PyTorch (rtol 1e-4, atol 1e-5) and
     `tandem run` (same engine, same settings: equal), from a file and from bytes, from
     many threads at once; metadata and profiling.
  2. training: 5 full-batch Adam steps with tandem.TrainingSession give the per-step
     losses of `tandem train --step-log` (1e-5 relative) and of PyTorch's Adam (first step
     1e-5, all 5 within 1e-4); fit(), eval_step, learning rate, checkpoints; the exported
     model differs from the untrained one and matches TrainingSession.predict.
  3. errors: a missing model, a wrong input name, dtype or shape, an unknown output or
     option, a bad model, a closed session each raise tandem.Error (or ValueError when
     closed) naming the problem; handles are released (no growth over many calls).
  4. library lookup: TANDEM_LIBRARY, the installed layout, the source tree, and the
     ImportError that lists where it looked.

usage: test_python_api.py TANDEM_CLI WORK_DIR
Run with Debian's /usr/bin/python3 (numpy, torch, onnx), with PYTHONPATH pointing at the
source tree's python/ and TANDEM_LIBRARY at libtandem.so (ctest sets both).
Prints one PASS/FAIL line per check and a summary; exits 1 on any failure.
"""
import csv
import gc
import os
import subprocess
import sys
import threading

import numpy as np
import torch

import tandem
from checks import check, expect_error, rel_diff, section, summary
from torch_models import export, mlp

def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@section
def basics(cli, work):
    v = tandem.version()
    check("version() is a non-empty string", isinstance(v, str) and v and v[0].isdigit(), v)
    check("api_version() >= 1", tandem.api_version() >= 1, str(tandem.api_version()))
    cpu = tandem.provider_available("cpu")
    check("provider_available('cpu') is (True, ...)", cpu[0] is True, repr(cpu))
    cuda = tandem.provider_available("cuda")
    check("provider_available('cuda') is (bool, str)",
          isinstance(cuda[0], bool) and isinstance(cuda[1], str) and (cuda[0] or cuda[1]),
          repr(cuda))
    check("tandem.Error subclasses RuntimeError", issubclass(tandem.Error, RuntimeError))
    check("module and public API have docstrings",
          all(o.__doc__ for o in (tandem, tandem.Session, tandem.Session.run,
                                  tandem.TrainingSession, tandem.TrainingSession.fit,
                                  tandem.TrainingSession.train_step, tandem.version)))


@section
def inference(cli, work):
    torch.set_num_threads(1)
    model = mlp(0)
    path = os.path.join(work, "mlp.onnx")
    export(model, path)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 4)).astype(np.float32)
    with torch.no_grad():
        ref = model(torch.from_numpy(x)).numpy()

    with tandem.Session(path, threads=1) as s:
        i, o = s.inputs, s.outputs
        check("Session.inputs: x float32 ['batch', 4]",
              len(i) == 1 and i[0].name == "x" and i[0].dtype == np.float32
              and i[0].shape == ["batch", 4], repr(i))
        check("Session.outputs: y float32 [batch, 3]",
              len(o) == 1 and o[0].name == "y" and o[0].dtype == np.float32
              and len(o[0].shape) == 2 and o[0].shape[1] == 3
              and isinstance(o[0].shape[0], (str, type(None))), repr(o))
        out = s.run({"x": x})
        y = out["y"]
        check("run() returns {'y': float32 (7, 3)}",
              list(out) == ["y"] and y.dtype == np.float32 and y.shape == (7, 3),
              f"{list(out)} {y.dtype} {y.shape}")
        ok = np.allclose(y, ref, rtol=1e-4, atol=1e-5)
        check("Session.run matches PyTorch (rtol 1e-4, atol 1e-5)", ok,
              f"max abs diff {np.max(np.abs(y - ref)):.3g}")
        y2 = s.run({"x": np.asfortranarray(x)}, output_names=["y"])["y"]
        check("non-contiguous input and output_names give the same result",
              np.array_equal(y, y2))
        check("output_names=[] runs and returns nothing", s.run({"x": x}, output_names=[]) == {})
        y3 = s.run(x, output_names="y")["y"]
        check("single-input model accepts a bare array", np.array_equal(y, y3))
        y1 = s.run({"x": x[2:3]})["y"]
        check("another batch size (1) works", y1.shape == (1, 3) and
              np.allclose(y1, ref[2:3], rtol=1e-4, atol=1e-5))
        check("outputs are fresh, writable arrays", y.flags.writeable and y.flags.owndata
              and not np.shares_memory(y, y2))

        # many threads at once on one session
        results = [None] * 8
        batches = [rng.standard_normal((1 + k, 4)).astype(np.float32) for k in range(8)]
        expected = [s.run({"x": b})["y"] for b in batches]

        def worker(k):
            for _ in range(20):
                r = s.run({"x": batches[k]})["y"]
                if not np.array_equal(r, expected[k]):
                    results[k] = False
                    return
            results[k] = True
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        check("Session.run from 8 threads at once equals sequential runs", all(results),
              repr(results))

    with open(path, "rb") as f:
        blob = f.read()
    with tandem.Session(blob, threads=1) as s:
        check("Session from bytes gives the same outputs",
              np.array_equal(s.run({"x": x})["y"], y))

    # the CLI on the same input, same engine settings
    x_path = os.path.join(work, "x.npy")
    np.save(x_path, x)
    out_dir = os.path.join(work, "run_out")
    os.makedirs(out_dir, exist_ok=True)
    cmd = [cli, "run", path, "--input", f"x={x_path}", "--output-dir", out_dir,
           "--repeat", "1", "--threads", "1", "--device", "cpu"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if not check("`tandem run --output-dir` succeeds", proc.returncode == 0,
                 proc.stderr.strip()[-500:]):
        return
    y_cli = np.load(os.path.join(out_dir, "y.npy"))
    check("Session.run equals `tandem run` (bit for bit)",
          y_cli.shape == y.shape and np.array_equal(y_cli, y),
          f"max abs diff {np.max(np.abs(y_cli - y)) if y_cli.shape == y.shape else y_cli.shape}")

    with tandem.Session(path, threads=1, profiling=True) as s:
        s.run({"x": x})
        s.run({"x": x})
        prof = s.profile()
        nodes = prof.get("nodes", [])
        check("profile() returns parsed JSON with timed nodes",
              isinstance(prof, dict) and len(nodes) > 0
              and all("op" in n and "total_us" in n for n in nodes),
              f"{len(nodes)} nodes, e.g. {nodes[:1]}")

    plain = tandem.Session(path, threads=1, optimization_level=0)
    fin = plain._finalizer
    check("optimization_level=0 gives the PyTorch result too",
          np.allclose(plain.run({"x": x})["y"], ref, rtol=1e-4, atol=1e-5))
    del plain
    gc.collect()
    check("a dropped Session is released", not fin.alive)

    # An output of rank 20 (more dims than the one-call tensor view has room for).
    import onnx
    from onnx import helper, TensorProto
    shape = [1] * 18 + [2, 3]
    node = helper.make_node("Neg", ["a"], ["b"])
    graph = helper.make_graph([node], "rank20", [helper.make_tensor_value_info("a", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("b", TensorProto.FLOAT, shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    a = np.arange(6, dtype=np.float32).reshape(shape)
    with tandem.Session(model.SerializeToString()) as s:
        b = s.run({"a": a})["b"]
    check("a rank-20 output comes back whole", b.shape == tuple(shape) and np.array_equal(b, -a),
          f"shape {b.shape}")


@section
def training(cli, work):
    torch.set_num_threads(1)
    model = mlp(1)
    path = os.path.join(work, "train.onnx")
    export(model, path)
    rng = np.random.default_rng(1)
    n = 64
    X = rng.standard_normal((n, 4)).astype(np.float32)
    W = rng.standard_normal((4, 3)).astype(np.float32)
    Y = (np.sin(X @ W) + 0.1 * rng.standard_normal((n, 3))).astype(np.float32)
    x_path, y_path = os.path.join(work, "train_x.npy"), os.path.join(work, "train_y.npy")
    np.save(x_path, X)
    np.save(y_path, Y)
    steps, lr = 5, 0.01

    # PyTorch: the independent reference
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    ref = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(torch.from_numpy(X)), torch.from_numpy(Y))
        loss.backward()
        opt.step()
        ref.append(loss.item())

    # the CLI
    log = os.path.join(work, "steps.csv")
    cmd = [cli, "train", path, "--x", x_path, "--y", y_path, "--loss", "mse",
           "--optimizer", "adam", "--lr", str(lr), "--epochs", str(steps),
           "--batch-size", str(n), "--no-shuffle", "--step-log", log, "--threads", "1",
           "--device", "cpu", "--quiet"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    cli_losses = None
    if check("`tandem train --step-log` succeeds", proc.returncode == 0,
             proc.stderr.strip()[-500:]):
        with open(log) as f:
            cli_losses = [float(r["loss"]) for r in csv.DictReader(f)]

    # Python
    untrained = tandem.Session(path, threads=1).run({"x": X})["y"]
    ts = tandem.TrainingSession(path, loss="mse", optimizer="adam", lr=lr, threads=1,
                                device="cpu")
    check("TrainingSession.input_names == ['x']", ts.input_names == ["x"], repr(ts.input_names))
    ours = [ts.train_step({"x": X}, Y) for _ in range(steps)]
    print(f"      losses: python {ours}\n              cli    {cli_losses}\n"
          f"              torch  {ref}")
    check("train_step returns floats that decrease",
          all(isinstance(v, float) for v in ours) and ours[-1] < ours[0])
    if cli_losses is not None:
        check(f"{steps} losses equal `tandem train`'s step log (1e-5 relative)",
              len(cli_losses) == steps and rel_diff(ours, cli_losses) <= 1e-5,
              f"max rel diff {rel_diff(ours, cli_losses) if len(cli_losses) == steps else '-'}")
    check("first-step loss equals PyTorch's mse (1e-5 relative)",
          rel_diff(ours[0], ref[0]) <= 1e-5, f"{ours[0]} vs {ref[0]}")
    check(f"all {steps} Adam losses follow PyTorch's (1e-4 relative)",
          rel_diff(ours, ref) <= 1e-4, f"max rel diff {rel_diff(ours, ref):.2e}")
    check("steps == 5", ts.steps == steps, str(ts.steps))
    # (the library keeps the rate in float32: 0.01 reads back as 0.0099999998)
    check("learning_rate reads the configured rate", rel_diff(ts.learning_rate, lr) < 1e-6,
          str(ts.learning_rate))
    ts.learning_rate = 0.005
    check("learning_rate setter", rel_diff(ts.learning_rate, 0.005) < 1e-6, str(ts.learning_rate))
    expect_error("a negative learning rate is refused",
                 lambda: setattr(ts, "learning_rate", -1.0), code=tandem.Code.INVALID_ARGUMENT)
    ts.learning_rate = lr

    pred = ts.predict(X)
    check("predict returns one (64, 3) float32 array",
          isinstance(pred, list) and len(pred) == 1 and pred[0].shape == (n, 3)
          and pred[0].dtype == np.float32)
    loss, acc = ts.eval_step(X, Y)
    mse = float(np.mean((pred[0].astype(np.float64) - Y) ** 2))
    check("eval_step: mse of predict's outputs, accuracy None (regression)",
          acc is None and rel_diff(loss, mse) <= 1e-5, f"{loss} vs {mse}, accuracy {acc}")
    check("eval_step makes no update", ts.steps == steps)

    ck = os.path.join(work, "ck.tdm")
    ts.save_checkpoint(ck)
    after = [ts.train_step(X, Y) for _ in range(2)]
    ts.load_checkpoint(ck)
    check("load_checkpoint restores the step count", ts.steps == steps, str(ts.steps))
    again = [ts.train_step(X, Y) for _ in range(2)]
    check("steps after load_checkpoint repeat those after save_checkpoint",
          rel_diff(again, after) <= 1e-6, f"{after} vs {again}")
    ts.load_checkpoint(ck)

    trained_path = os.path.join(work, "trained.onnx")
    ts.export(trained_path)
    pred = ts.predict({"x": X})[0]
    with tandem.Session(trained_path, threads=1) as s:
        y = s.run({"x": X})["y"]
    check("exported model differs from the untrained one",
          float(np.max(np.abs(y - untrained))) > 1e-4,
          f"max abs change {np.max(np.abs(y - untrained)):.3g}")
    check("exported model matches TrainingSession.predict",
          np.allclose(y, pred, rtol=1e-5, atol=1e-6), f"max abs diff {np.max(np.abs(y - pred)):.3g}")
    ts.close()
    check("TrainingSession.close() is idempotent", (ts.close() or True) and ts.closed)

    # fit(): full batch, no shuffle = one step per epoch = the losses above
    with tandem.TrainingSession(path, loss="mse", optimizer="adam", lr=lr, threads=1,
                                device="cpu") as ts2:
        seen = []
        hist = ts2.fit(X, Y, epochs=steps, batch_size=n, shuffle=False,
                       callback=lambda e, l: seen.append(e))
        check("fit(full batch, no shuffle) gives the train_step losses",
              len(hist) == steps and rel_diff(hist, ours) <= 1e-6 and seen == list(range(steps)),
              f"{hist}")
        hist = ts2.fit({"x": X}, Y, epochs=3, batch_size=10, shuffle=True, seed=3,
                       callback=lambda e, l: e < 1)
        check("fit(mini-batches, shuffled) steps and early stop by callback",
              len(hist) == 2 and ts2.steps == steps + 2 * 7, f"{hist}, steps {ts2.steps}")

    # a classification loss: accuracy from eval_step matches predict's argmax
    labels = rng.integers(0, 3, n).astype(np.int64)
    with tandem.TrainingSession(path, loss="cross_entropy", optimizer="sgd", lr=0.1,
                                threads=1, device="cpu") as ce:
        ce.train_step(X, labels)
        logits = ce.predict(X)[0]
        loss, acc = ce.eval_step(X, labels)
        want = float(np.mean(np.argmax(logits, axis=1) == labels))
        check("cross_entropy eval_step accuracy = argmax accuracy of predict",
              acc is not None and abs(acc - want) < 1e-9 and loss > 0, f"{acc} vs {want}")


@section
def errors(cli, work):
    path = os.path.join(work, "mlp.onnx")
    missing = os.path.join(work, "no_such_model.onnx")
    expect_error("missing model file: Error naming it", lambda: tandem.Session(missing),
                 code=tandem.Code.NOT_FOUND, substrings=["no_such_model.onnx"])
    expect_error("TrainingSession on a missing file: Error naming it",
                 lambda: tandem.TrainingSession(missing), code=tandem.Code.NOT_FOUND,
                 substrings=["no_such_model.onnx"])
    expect_error("bytes that are not a model: INVALID_MODEL",
                 lambda: tandem.Session(b"this is not an onnx model"),
                 code=tandem.Code.INVALID_MODEL)
    expect_error("unknown provider: Error naming it",
                 lambda: tandem.Session(path, providers=["nosuchprovider"]),
                 substrings=["nosuchprovider"])
    x = np.zeros((3, 4), np.float32)
    s = tandem.Session(path, threads=1)
    # a misspelt name: the message names the unknown name or the model input it lacks
    expect_error("wrong input name: Error naming the problem",
                 lambda: s.run({"bogus_input": x}), any_of=["bogus_input", "'x'"])
    expect_error("an extra, unknown input: Error naming it",
                 lambda: s.run({"x": x, "bogus_input": x}), substrings=["bogus_input"])
    expect_error("an input missing: Error naming it",
                 lambda: s.run({}), substrings=["'x'"])
    expect_error("wrong dtype (float64): Error naming the input",
                 lambda: s.run({"x": x.astype(np.float64)}),
                 code=tandem.Code.INVALID_ARGUMENT, substrings=["'x'"])
    expect_error("wrong shape [3,7]: Error naming the input",
                 lambda: s.run({"x": np.zeros((3, 7), np.float32)}),
                 code=tandem.Code.INVALID_ARGUMENT, substrings=["'x'"])
    expect_error("wrong rank: Error naming the input",
                 lambda: s.run({"x": np.zeros((12,), np.float32)}), substrings=["'x'"])
    expect_error("unknown output name: Error naming it",
                 lambda: s.run({"x": x}, output_names=["no_such_output"]),
                 substrings=["no_such_output"])
    expect_error("unsupported NumPy dtype (complex): Error",
                 lambda: s.run({"x": x.astype(np.complex64)}), substrings=["'x'"])
    check("session still works after errors", s.run({"x": x})["y"].shape == (3, 3))
    s.close()
    expect_error("run on a closed Session: ValueError", lambda: s.run({"x": x}),
                 exc_type=ValueError, substrings=["closed"])
    expect_error("unknown training option: Error naming it",
                 lambda: tandem.TrainingSession(path, bogus_option=1),
                 code=tandem.Code.INVALID_ARGUMENT, substrings=["bogus_option"])
    expect_error("malformed training option value: Error naming it",
                 lambda: tandem.TrainingSession(path, optimizer="nosuchopt"),
                 code=tandem.Code.INVALID_ARGUMENT, substrings=["nosuchopt"])
    with tandem.TrainingSession(path, threads=1, device="cpu") as ts:
        expect_error("train_step with a wrong target shape: Error",
                     lambda: ts.train_step(x, np.zeros((3, 5), np.float32)))
        expect_error("train_step with a wrong input name: Error naming the problem",
                     lambda: ts.train_step({"bogus_input": x}, np.zeros((3, 3), np.float32)),
                     any_of=["bogus_input", "'x'"])
        expect_error("predict with an extra, unknown input: Error naming it",
                     lambda: ts.predict({"x": x, "bogus_input": x}), substrings=["bogus_input"])
        expect_error("load_checkpoint of a missing file: Error naming it",
                     lambda: ts.load_checkpoint(os.path.join(work, "no_such.tdm")),
                     substrings=["no_such.tdm"])
        check("training session still works after errors",
              ts.train_step(x, np.zeros((3, 3), np.float32)) >= 0 and ts.steps == 1)


@section
def lookup(cli, work):
    """Where `import tandem` finds the library, in a fresh interpreter each time."""
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(tandem.__file__)))
    real = os.path.realpath(tandem.library_path)

    def probe(pythonpath, library=None):
        env = {k: v for k, v in os.environ.items() if k != "TANDEM_LIBRARY"}
        env.update(PYTHONPATH=pythonpath, PYTHONDONTWRITEBYTECODE="1")
        if library is not None:
            env["TANDEM_LIBRARY"] = library
        return subprocess.run([sys.executable, "-c",
                               "import tandem; print(tandem.library_path)"],
                              capture_output=True, text=True, env=env, cwd=work)

    bad = os.path.join(work, "no_such_dir", "libtandem.so")
    p = probe(pkg_parent, bad)
    check("a TANDEM_LIBRARY that does not load: ImportError naming it",
          p.returncode != 0 and "ImportError" in p.stderr and bad in p.stderr,
          p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "")

    # installed layout: PREFIX/lib/libtandem.so.0 + PREFIX/lib/python3.X/dist-packages/tandem
    import shutil
    prefix = os.path.join(work, "prefix")
    shutil.rmtree(prefix, ignore_errors=True)
    site = os.path.join(prefix, "lib", f"python3.{sys.version_info[1]}", "dist-packages")
    shutil.copytree(os.path.join(pkg_parent, "tandem"), os.path.join(site, "tandem"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    os.symlink(real, os.path.join(prefix, "lib", "libtandem.so.0"))
    p = probe(site)
    want = os.path.join(prefix, "lib", "libtandem.so.0")
    check("installed layout: finds PREFIX/lib/libtandem.so.0",
          p.returncode == 0 and os.path.normpath(p.stdout.strip()) == want,
          (p.stdout + p.stderr).strip()[-300:])

    # nothing anywhere: the ImportError lists the places it tried
    os.remove(want)
    p = probe(site)
    import ctypes.util
    system = ctypes.util.find_library("tandem")
    if system:  # installed system-wide: the last resort finds it
        check(f"no library beside the package: falls back to find_library ({system})",
              p.returncode == 0 and p.stdout.strip() == system, (p.stdout + p.stderr)[-300:])
    else:
        check("no library anywhere: ImportError listing where it looked",
              p.returncode != 0 and want in p.stderr and "TANDEM_LIBRARY" in p.stderr
              and "find_library" in p.stderr,
              p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "")

    source_tree = os.path.join(os.path.dirname(pkg_parent), "build", "libtandem.so")
    if os.path.exists(source_tree):
        p = probe(pkg_parent)
        check("source tree: finds build/libtandem.so without TANDEM_LIBRARY",
              p.returncode == 0 and os.path.normpath(p.stdout.strip()) == source_tree,
              (p.stdout + p.stderr).strip()[-300:])


@section
def leaks(cli, work):
    """Handles are released: memory stays flat over many sessions, runs and errors."""
    path = os.path.join(work, "mlp.onnx")
    x = np.ones((64, 4), np.float32)

    def churn(k):
        for _ in range(k):
            with tandem.Session(path, threads=1) as s:
                for _ in range(20):
                    s.run({"x": x})
                try:
                    s.run({"x": x.astype(np.float64)})
                except tandem.Error:
                    pass
            try:
                tandem.Session(os.path.join(work, "missing.onnx"))
            except tandem.Error:
                pass
        gc.collect()
    churn(20)  # warm up allocator caches
    before = rss_bytes()
    churn(100)
    grown = rss_bytes() - before
    check("no memory growth over 100 sessions, 2000 runs, 200 errors (< 8 MiB)",
          grown < 8 << 20, f"RSS grew {grown / 1024:.0f} KiB")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    cli, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    print(f"tandem {tandem.version()} (C API {tandem.api_version()}) from {tandem.library_path}")
    # The build says whether it made the compiled run path (cmake/python_fastrun.cmake);
    # TANDEM_PYTHON_FASTRUN=0 runs every check through the ctypes path instead.
    from tandem import _fastrun
    want = os.environ.get("TANDEM_EXPECT_FASTRUN") == "1" and os.environ.get("TANDEM_PYTHON_FASTRUN") != "0"
    check(f"Session.run goes through {'the compiled path' if want else 'ctypes'}",
          (_fastrun.module is not None) == want, f"module {_fastrun.module}")
    for group in (basics, inference, training, errors, lookup, leaks):
        print(f"-- {group.__name__}")
        group(cli, work)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
