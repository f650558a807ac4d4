#!/usr/bin/env python3
"""Where the CPU time goes, Tandem beside ONNX Runtime, op type by op type, on one case of
cpu_bench.py (the same exported model and input).

usage: bench/profile_vs_ort.sh CASE [--threads 2] [--runs 200] [--nodes N]
(the .sh makes the benchmark environment and passes this script's python)

Each engine runs in its own process with the same thread count: Tandem with per-node
profiling (Session(profiling=True)), ONNX Runtime with enable_profiling (its own
"kernel_time" events; all graph optimizations, as cpu_bench.py). Per node the mean time
per call over every run (warm-up included, the same number for both), summed by op type:
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
such as "_fused").
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


def tandem_worker(onnx_path, x, threads, runs):
    import tandem
    session = tandem.Session(onnx_path, threads=threads, profiling=True)
    profiled = timed_runs(lambda: session.run({"x": x}), runs)
    result = summary((n["node"], n["op"], n["calls"], n["total_us"]) for n in session.profile()["nodes"])
    del session
    plain = tandem.Session(onnx_path, threads=threads)
    result["end_to_end"] = end_to_end(profiled, lambda: plain.run({"x": x}), runs)
    return result


def ort_worker(onnx_path, x, threads, runs):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(scratch_dir("ort_profile_"), "ort")
    session = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    profiled = timed_runs(lambda: session.run(["y"], {"x": x}), runs)
    with open(session.end_profiling()) as f:
        events = json.load(f)
    del session
    so.enable_profiling = False
    plain = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    per_node = collections.defaultdict(lambda: [None, None, 0, 0.0])
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            n = per_node[e["name"][:-len("_kernel_time")]]
            n[0] = e["name"][:-len("_kernel_time")]
            n[1] = e.get("args", {}).get("op_name", "?")
            n[2] += 1
            n[3] += e["dur"]
    result = summary(per_node.values())
    result["end_to_end"] = end_to_end(profiled, lambda: plain.run(["y"], {"x": x}), runs)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case", choices=sorted(cpu_bench.CASES))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=200, help="runs per engine (warm-up included)")
    ap.add_argument("--nodes", type=int, default=0, metavar="N", help="also list each engine's N slowest nodes")
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        engine, onnx_path, x_path = args.worker
        fn = tandem_worker if engine == "tandem" else ort_worker
        print(json.dumps(fn(onnx_path, np.load(x_path), args.threads, args.runs)))
        return
    work = scratch_dir("tandem_profile_vs_ort_")
    onnx_path, _, x_path = cpu_bench.prepare(args.case, work)
    print(f"{args.case}: {turns.cpu_model()} ({turns.vector_isa()}), {args.threads} threads, "
          f"{args.runs} runs per engine; ms per run, summed per op type")
    result = {}
    for engine in ("tandem", "ort"):
        res = subprocess.run([sys.executable, os.path.abspath(__file__), args.case, "--threads", str(args.threads),
                              "--runs", str(args.runs), "--worker", engine, onnx_path, x_path],
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


if __name__ == "__main__":
    main()
