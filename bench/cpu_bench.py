#!/usr/bin/env python3
"""CPU inference latency: Tandem vs ONNX Runtime vs PyTorch, side by side in one run.

usage: bench/cpu_bench.sh [--threads 2] [--rounds 3] [--seconds 1.5] [--slice 0.25]
                                [--cases NAME,...] [--markdown FILE] [--no-torch2]
(the .sh sets up the environments and passes --torch2-python; this script runs inside
the ONNX Runtime one)

Every case is one model file exported by Debian's PyTorch (opset 13, dynamic batch) and
one seeded input, given to every engine: Tandem through its Python API, ONNX Runtime's
CPUExecutionProvider (all graph optimizations, as shipped), PyTorch eager on the module
the file was exported from (torch.inference_mode; same weights), once as Debian's 1.13
with OpenBLAS and, given --torch2-python, once as PyTorch 2.x from PyPI (oneDNN
convolutions, MKL matrix products: the stronger reference). Each engine runs in its
own process (no two thread pools spinning against each other), with the same thread
count, loaded once per case and warmed up. The engines take turns in slices of --slice
seconds (the next slice starts once the last engine's process is quiet, its thread pool
done spinning, and with untimed calls for 20 ms; the first engine of each turn rotates),
until each has run --seconds in the round; a shared machine whose speed drifts from one
second to the next (VMs on a busy host do) then slows every engine alike. A round's
figure for an engine is the median (p50) of its single calls in that round. The table
gives min and median over rounds of those p50s, and Tandem / ORT and Tandem / each
PyTorch of the medians (< 1: Tandem is faster); "paired by turn" is Tandem / ORT of the
two engines' p50s within each turn (one slice each, under a second apart), as the median over
every turn of every round with its quartiles in brackets: a slow spell of the machine
then moves only the turns it falls in, and the brackets say how far the ratio strays
from turn to turn; and the largest difference between Tandem's and ONNX Runtime's
outputs as a check that they computed the same thing.
"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys

import numpy as np

from scratch import scratch_dir
from turns import Worker, WorkerFailed, cpu_model, fmt_ms, onnx_runner, serve, take_turns, vector_isa

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# reference_models (models/) and `import tandem` from the source tree (python/).
sys.path[:0] = [os.path.join(ROOT, "models"), os.path.join(ROOT, "python")]


# -- the cases ----------------------------------------------------------------------------

def transformer_encoder():
    """A small transformer encoder: 2 layers, d_model 128, 4 heads, feed-forward 256."""
    from torch import nn
    layer = nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)


def vision(name):
    import torchvision
    return lambda: getattr(torchvision.models, name)(weights=None)


def reference(name):
    from reference_models import MODELS
    return MODELS[name][0]


# case name -> (model name, module constructor, input shape)
CASES = {
    "cifar_cnn_b1": ("cifar_cnn", lambda: reference("cifar_cnn")(), (1, 3, 32, 32)),
    "cifar_cnn_b128": ("cifar_cnn", lambda: reference("cifar_cnn")(), (128, 3, 32, 32)),
    "resnet18_b1": ("resnet18", lambda: vision("resnet18")(), (1, 3, 224, 224)),
    "mobilenet_v2_b1": ("mobilenet_v2", lambda: vision("mobilenet_v2")(), (1, 3, 224, 224)),
    "densenet121_b1": ("densenet121", lambda: vision("densenet121")(), (1, 3, 224, 224)),
    "squeezenet1_1_b1": ("squeezenet1_1", lambda: vision("squeezenet1_1")(), (1, 3, 224, 224)),
    "transformer_b1": ("transformer", transformer_encoder, (1, 64, 128)),
    "peaks_mlp_40000": ("peaks_mlp", lambda: reference("peaks_mlp")(), (40000, 2)),
    "ode_mlp_b1": ("ode_mlp", lambda: reference("ode_mlp")(), (1, 3)),
}
ENGINE_NAMES = {"tandem": "Tandem", "ort": "ORT", "torch": "PyTorch 1.13", "torch2": "PyTorch 2.x"}


def prepare(case, work):
    """Exports the case's model once (seeded weights) and writes its weights (a state dict,
    which every torch version loads into the case's module) and input; returns paths."""
    import torch
    from reference_models import export
    model_name, make, shape = CASES[case]
    onnx_path = os.path.join(work, model_name + ".onnx")
    state_path = os.path.join(work, model_name + ".state.pt")
    if not os.path.exists(onnx_path):
        torch.manual_seed(0)
        module = make().eval()
        export(module, (1,) + tuple(shape[1:]), onnx_path)
        torch.save(module.state_dict(), state_path)
    x_path = os.path.join(work, case + ".npy")
    np.save(x_path, np.random.default_rng(1).standard_normal(shape, dtype=np.float32))
    return onnx_path, state_path, x_path


# -- one engine, one case, in its own process ----------------------------------------------

def make_runner(engine, case, onnx_path, state_path, x, threads):
    if engine in ("tandem", "ort"):
        return onnx_runner(engine, onnx_path, {"x": x}, threads)
    import torch  # Debian's 1.13 or PyTorch 2.x, whichever python runs this worker
    torch.set_num_threads(threads)
    module = CASES[case][1]().eval()
    module.load_state_dict(torch.load(state_path))
    tx = torch.from_numpy(x)

    def run():
        with torch.inference_mode():
            return module(tx).numpy()
    return run


def worker(engine, case, onnx_path, state_path, x_path, threads, out_path):
    """The engine's process for one case: turns.serve() over its runner."""
    x = np.load(x_path)
    serve(make_runner(engine, case, onnx_path, state_path, x, threads), out_path)


def start_worker(python, engine, case, paths, threads, work):
    onnx_path, state_path, x_path = paths
    return Worker([python, os.path.abspath(__file__), "--worker", engine, case, onnx_path, state_path, x_path,
                   str(threads), os.path.join(work, f"{case}.{engine}.out.npy")],
                  f"{engine} on {case}", os.path.join(work, f"{case}.{engine}.stderr"))


# -- the driver ---------------------------------------------------------------------------

def versions(torch2_python):
    import onnxruntime
    import tandem
    import torch
    from inference_bench import blas_in_use  # imports torch: only here, never in a worker
    found = [f"Tandem {tandem.version()} ({tandem.library_path})", f"ONNX Runtime {onnxruntime.__version__}",
             f"PyTorch {torch.__version__} (BLAS: {blas_in_use()})"]
    if torch2_python:
        found.append(subprocess.run(
            [torch2_python, "-c", "import torch; print(f'PyTorch {torch.__version__} (oneDNN: "
             "{torch.backends.mkldnn.is_available()}, MKL: {torch.backends.mkl.is_available()})')"],
            capture_output=True, text=True, check=True).stdout.strip())
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.5, help="timed seconds per engine, case and round")
    ap.add_argument("--slice", type=float, default=0.25,
                    help="seconds an engine runs before the next takes its turn (--seconds is split into slices)")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated, from: " + ", ".join(CASES))
    ap.add_argument("--markdown", help="also write the table and the machine's details to this file")
    ap.add_argument("--torch2-python", help="python of a PyTorch 2.x environment "
                    "(bench/setup_torch2_env.sh makes one); without it that column is left out")
    ap.add_argument("--worker", nargs=7, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        engine, case, onnx_path, state_path, x_path, threads, out_path = args.worker
        worker(engine, case, onnx_path, state_path, x_path, int(threads), out_path)
        return
    engines = ("tandem", "ort", "torch") + (("torch2",) if args.torch2_python else ())

    cases = [c for c in args.cases.split(",") if c]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        sys.exit(f"error: unknown case(s) {', '.join(unknown)}; choose from {', '.join(CASES)}")
    slices = max(1, round(args.seconds / args.slice))  # per engine and round
    header = [f"{datetime.date.today()}, {cpu_model()} ({vector_isa()}), {os.cpu_count()} cores, {args.threads} threads "
              f"per engine, {args.rounds} rounds of {args.seconds} s per engine and case, "
              f"engines taking turns in slices of {args.seconds / slices:.2g} s",
              *versions(args.torch2_python)]
    for line in header:
        print(line, flush=True)
    if "openblas" not in header[3]:
        print("WARNING: torch is not using OpenBLAS; install libopenblas0-openmp for a fair baseline")

    work = scratch_dir("tandem_cpu_bench_")
    pythons = {e: args.torch2_python if e == "torch2" else sys.executable for e in engines}
    p50 = {(c, e): [] for c in cases for e in engines}
    turn_ratios = {c: [] for c in cases}  # Tandem / ORT of each turn's slice p50s
    for case in cases:
        print(f"[bench] {case}: exporting, loading every engine", file=sys.stderr, flush=True)
        paths = prepare(case, work)
        try:
            workers = {e: start_worker(pythons[e], e, case, paths, args.threads, work) for e in engines}
        except WorkerFailed as failure:
            sys.exit(f"error: {failure}")
        try:
            rounds, turns = take_turns(workers, args.rounds, args.seconds, slices, lambda r: print(
                f"[bench] {case}: round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True))
        except WorkerFailed as failure:
            sys.exit(f"error: {failure}")
        for engine in engines:
            p50[(case, engine)] = rounds[engine]
        turn_ratios[case] = [t["tandem"] / t["ort"] for t in turns]
        for w in workers.values():
            w.close()

    others = engines[1:]
    rows = ["| case | " + " | ".join(f"{ENGINE_NAMES[e]} p50 min / med (ms)" for e in engines) + " | " +
            " | ".join(f"Tandem / {ENGINE_NAMES[e]}" for e in others) + " | Tandem / ORT paired by turn [quartiles] | max abs diff Tandem vs ORT |",
            "|---|" + "---|" * (len(engines) + len(others) + 2)]
    for case in cases:
        cols = []
        for engine in engines:
            v = p50[(case, engine)]
            cols.append(f"{fmt_ms(min(v))} / {fmt_ms(statistics.median(v))}")
        med = {e: statistics.median(p50[(case, e)]) for e in engines}
        diff = np.abs(np.load(os.path.join(work, f"{case}.tandem.out.npy")) -
                      np.load(os.path.join(work, f"{case}.ort.out.npy"))).max()
        ratios = " | ".join(f"{med['tandem'] / med[e]:.2f}" for e in others)
        paired = turn_ratios[case]
        q1, _, q3 = statistics.quantiles(paired, n=4) if len(paired) > 1 else paired * 3
        rows.append(f"| {case} | {' | '.join(cols)} | {ratios} | {statistics.median(paired):.2f} "
                    f"[{q1:.2f}-{q3:.2f}] | {diff:.2g} |")
    print("\n".join(rows))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# CPU inference: Tandem vs ONNX Runtime vs PyTorch\n\n")
            f.write("\n".join(f"- {line}" for line in header) + "\n")
            f.write(f"- command: `bench/cpu_bench.sh {' '.join(sys.argv[1:])}`\n\n")
            f.write("\n".join(rows) + "\n")
        print(f"wrote {args.markdown}")


if __name__ == "__main__":
    main()
