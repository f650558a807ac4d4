#!/usr/bin/env python3
"""Where the CPU time goes, Tandem beside ONNX Runtime, op type by op type, on any ONNX
model: a case of cpu_bench.py (its exported model and input) or an .onnx file.

usage: bench/profile_vs_ort.sh CASE|MODEL.onnx [--input NAME=FILE.npy]... [--dim NAME=N]...
                               [--threads 2] [--runs 200] [--nodes N]
(the .sh makes the benchmark environment and passes this script's python)

An .onnx file's inputs not given by --input are made from the model's declared types and
shapes (seeded): floats standard normal, integers in [0, 100), booleans true; a symbolic
dimension takes its --dim value, else 1. Both engines get the same arrays and return every
output of the model.

Each engine runs in its own process with the same thread count: Tandem with per-node
profiling (Session(profiling=True)), ONNX Runtime with enable_profiling (its own
"kernel_time" events; all graph optimizations, as cpu_bench.py). Per node the mean time
per call over the runs after the warm-up (the first tenth of --runs, at least one, left out
for both: Tandem makes its oneDNN primitives, JIT code, on its first run, where ORT makes
them while loading), summed by op type:
ms per run. ORT's fused and layout ops keep ORT's names (FusedConv, ReorderInput, ...),
so read the table by what each op type does, not by name alone. ORT's profiler slows ORT
itself: ~4.5% on resnet18_b1 end to end (~25 us a node, 2026-11-26), which its node
times carry, so a few percent in Tandem's favour here is no lead end to end (cpu_bench).
Each engine's header line therefore also gives the median run end to end, profiled and
then (in the same process, with a second session) without profiling: the gap between the
two is what profiling costs that engine; compare the engines end to end with cpu_bench,
which alternates them (here they run one after the other, on a machine whose speed may
have changed in between).
--nodes N adds each engine's N slowest nodes by name (ORT's fused nodes carry a suffix
such as "_fused"). Then the op types where Tandem spends more than ORT, largest excess first:
where a model's gap comes from. Op types doing one job under two names are joined
(FusedConv and Conv, Upsample and Resize, the layout reorders: SAME_JOB); each engine's
fusions still move time between op types (a Conv that absorbed an Add), so read a small
excess with its neighbours.
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cpu_bench  # noqa: E402  (the cases, their export and cpu_bench's module paths)
from scratch import scratch_dir  # noqa: E402
import turns  # noqa: E402


def summary(nodes):
    """[(name, op, calls, total_us)] -> {"ops": {op: ms per run}, "nodes": [[name, op, ms per run]]}
    (the mean per call of each node)."""
    ops = collections.defaultdict(float)
    per_node = []
    for name, op, calls, total_us in nodes:
        if calls:
            ops[op] += total_us / calls / 1e3
            per_node.append([name, op, total_us / calls / 1e3])
    return {"ops": dict(ops), "nodes": per_node}


def timed_runs(run, runs):
    """Median wall time of `runs` calls of run() (ms)."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def end_to_end(profiled_ms, plain_run, runs):
    """The profiled runs' median beside a session without profiling, timed right after in
    the same process: what the profiler itself costs the engine."""
    for _ in range(max(3, runs // 10)):
        plain_run()
    return {"profiled": profiled_ms, "plain": timed_runs(plain_run, runs)}


def warm_up_runs(runs):
    """The runs of `runs` left out of the node times: the first tenth, at least one."""
    return max(1, runs // 10)


def tandem_worker(onnx_path, feeds, threads, runs):
    import tandem
    session = tandem.Session(onnx_path, threads=threads, profiling=True)
    for _ in range(warm_up_runs(runs)):
        session.run(feeds)
    warm = {n["node"]: (n["calls"], n["total_us"]) for n in session.profile()["nodes"]}
    profiled = timed_runs(lambda: session.run(feeds), runs - warm_up_runs(runs))
    result = summary((n["node"], n["op"], n["calls"] - warm.get(n["node"], (0, 0))[0],
                      n["total_us"] - warm.get(n["node"], (0, 0))[1]) for n in session.profile()["nodes"])
    del session
    plain = tandem.Session(onnx_path, threads=threads)
    result["end_to_end"] = end_to_end(profiled, lambda: plain.run(feeds), runs)
    return result


def ort_worker(onnx_path, feeds, threads, runs):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(scratch_dir("ort_profile_"), "ort")
    session = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    for _ in range(warm_up_runs(runs)):
        session.run(None, feeds)
    profiled = timed_runs(lambda: session.run(None, feeds), runs - warm_up_runs(runs))
    with open(session.end_profiling()) as f:
        events = json.load(f)
    del session
    so.enable_profiling = False
    plain = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    per_node = collections.defaultdict(lambda: [None, None, 0, 0.0])
    seen = collections.Counter()  # each node's events so far: its first ones are the warm-up's
    for e in sorted((e for e in events if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time")),
                    key=lambda e: e["ts"]):
        seen[e["name"]] += 1
        if seen[e["name"]] > warm_up_runs(runs):
            n = per_node[e["name"][:-len("_kernel_time")]]
            n[0] = e["name"][:-len("_kernel_time")]
            n[1] = e.get("args", {}).get("op_name", "?")
            n[2] += 1
            n[3] += e["dur"]
    result = summary(per_node.values())
    result["end_to_end"] = end_to_end(profiled, lambda: plain.run(None, feeds), runs)
    return result


NUMPY_TYPES = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
               "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(int8)": np.int8,
               "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_}


def model_feeds(onnx_path, given, dims):
    """{name: array} for every input of the model: `given` (name -> array) and, for the
    rest, seeded arrays of the declared type and shape (symbolic dims from `dims`, else 1)."""
    import onnxruntime as ort
    rng = np.random.default_rng(1)
    feeds = {}
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    for arg in ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"]).get_inputs():
        if arg.name in given:
            feeds[arg.name] = given[arg.name]
            continue
        if arg.type not in NUMPY_TYPES:
            sys.exit(f"error: {onnx_path}: input '{arg.name}' is {arg.type}; give it with --input {arg.name}=FILE.npy")
        shape = [d if isinstance(d, int) else dims.get(d, 1) for d in arg.shape]
        dtype = NUMPY_TYPES[arg.type]
        if dtype == np.bool_:
            feeds[arg.name] = np.ones(shape, dtype)
        elif np.issubdtype(dtype, np.integer):
            feeds[arg.name] = rng.integers(0, 100, shape).astype(dtype)
        else:
            feeds[arg.name] = rng.standard_normal(shape).astype(dtype)
    unknown = set(given) - set(feeds)
    if unknown:
        sys.exit(f"error: {onnx_path} has no input {', '.join(sorted(unknown))}")
    return feeds


def name_values(pairs, what, convert):
    """['NAME=VALUE', ...] as {NAME: convert(VALUE)}."""
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            sys.exit(f"error: {what} {pair!r}: expected NAME=VALUE")
        out[name] = convert(value)
    return out


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        sys.exit(f"error: --dim value {text!r}: expected a positive integer")
    return value


# Op types that do one job under each engine's own name: summed as one in the excess table.
SAME_JOB = {"FusedConv": "Conv", "FusedGemm": "Gemm", "FusedMatMul": "MatMul", "Upsample": "Resize",
            "FromBlocked": "layout reorders", "ReorderInput": "layout reorders", "ReorderOutput": "layout reorders"}


def excess(result):
    """[(job, Tandem ms, ORT ms)] for the op types (SAME_JOB's names joined) where Tandem's
    time exceeds ORT's, largest excess first."""
    per_job = {engine: collections.defaultdict(float) for engine in ("tandem", "ort")}
    for engine, jobs in per_job.items():
        for op, ms in result[engine]["ops"].items():
            jobs[SAME_JOB.get(op, op)] += ms
    rows = [(job, per_job["tandem"].get(job, 0.0), per_job["ort"].get(job, 0.0))
            for job in set(per_job["tandem"]) | set(per_job["ort"])]
    return sorted((r for r in rows if r[1] > r[2]), key=lambda r: r[2] - r[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="a cpu_bench.py case (" + ", ".join(sorted(cpu_bench.CASES)) + ") or an .onnx file")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                    help="an input's value (an .onnx model; the others are made from their types and shapes)")
    ap.add_argument("--dim", action="append", default=[], metavar="NAME=N",
                    help="a symbolic input dimension's value (default 1)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=200, help="runs per engine (the first tenth a warm-up)")
    ap.add_argument("--nodes", type=int, default=0, metavar="N", help="also list each engine's N slowest nodes")
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        engine, onnx_path, feeds_path = args.worker
        fn = tandem_worker if engine == "tandem" else ort_worker
        with np.load(feeds_path) as f:
            feeds = {k: f[k] for k in f.files}
        print(json.dumps(fn(onnx_path, feeds, args.threads, args.runs)))
        return
    if args.threads < 1 or args.runs < 2 or args.nodes < 0:
        sys.exit("error: --threads takes a positive number, --runs 2 or more, --nodes zero or more")
    work = scratch_dir("tandem_profile_vs_ort_")
    if args.model.endswith(".onnx"):
        if not os.path.isfile(args.model):
            sys.exit(f"error: {args.model}: no such file")
        onnx_path = os.path.abspath(args.model)
        given = name_values(args.input, "--input", np.load)
        feeds = model_feeds(onnx_path, given, name_values(args.dim, "--dim", positive_int))
    elif args.model in cpu_bench.CASES:
        if args.input or args.dim:
            sys.exit("error: --input and --dim go with an .onnx model, not a cpu_bench case")
        onnx_path, _, x_path = cpu_bench.prepare(args.model, work)
        feeds = {"x": np.load(x_path)}
    else:
        sys.exit(f"error: {args.model}: neither an .onnx file nor a cpu_bench case ({', '.join(sorted(cpu_bench.CASES))})")
    feeds_path = os.path.join(work, "feeds.npz")
    np.savez(feeds_path, **feeds)
    print(f"{args.model}: {turns.cpu_model()} ({turns.vector_isa()}), {args.threads} threads, "
          f"{args.runs} runs per engine; ms per run, summed per op type; inputs "
          + ", ".join(f"{k} {v.dtype}{list(v.shape)}" for k, v in feeds.items()))
    result = {}
    for engine in ("tandem", "ort"):
        res = subprocess.run([sys.executable, os.path.abspath(__file__), args.model, "--threads", str(args.threads),
                              "--runs", str(args.runs), "--worker", engine, onnx_path, feeds_path],
                             capture_output=True, text=True)
        if res.returncode != 0:
            sys.exit(f"error: {engine} failed:\n{res.stderr.strip()}")
        result[engine] = json.loads(res.stdout.strip().splitlines()[-1])
    width = max(len(op) for r in result.values() for op in r["ops"]) + 2
    for engine, name in (("tandem", "Tandem"), ("ort", "ORT")):
        e2e = result[engine]["end_to_end"]
        print(f"\n{name}: {sum(result[engine]['ops'].values()):.3f} ms in nodes; a run end to end "
              f"{e2e['profiled']:.3f} ms profiled, {e2e['plain']:.3f} ms without profiling (medians)")
        for op, ms in sorted(result[engine]["ops"].items(), key=lambda r: -r[1]):
            print(f"  {op:<{width}}{ms:9.3f}")
    if args.nodes:
        for engine, name in (("tandem", "Tandem"), ("ort", "ORT")):
            print(f"\n{name}: the {args.nodes} slowest nodes, ms per run")
            for node, op, ms in sorted(result[engine]["nodes"], key=lambda r: -r[2])[:args.nodes]:
                print(f"  {ms:9.3f}  {op:<{width}}{node}")
    print("\nWhere Tandem spends more than ORT (ms per run: Tandem, ORT, excess)")
    for op, tandem_ms, ort_ms in excess(result):
        print(f"  {op:<{width}}{tandem_ms:9.3f}{ort_ms:9.3f}{tandem_ms - ort_ms:9.3f}")


if __name__ == "__main__":
    main()
