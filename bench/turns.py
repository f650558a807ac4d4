"""Engines timed side by side, taking turns: what cpu_bench.py and zoo.py share.

Each engine runs one model in its own process (no two thread pools spinning against each
other), loaded once and warmed up. serve() is that process's loop; Worker is the driver's
handle on it; take_turns() lets the engines run in slices of a few tenths of a second,
each slice starting once the last engine's process is quiet, the first engine rotating
from turn to turn, so a machine whose speed drifts slows every engine alike.
"""
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np


def serve(run, out_path):
    """The worker process's loop: writes run()'s output to out_path (.npy), warms up and
    says "ready"; then each line on stdin, a number of seconds S, runs one slice (untimed
    calls for 20 ms, at least one, then single calls timed for S seconds, at least 3) and
    answers a JSON list of the calls' times in ms. Ends at the end of stdin."""
    np.save(out_path, run())
    start = time.perf_counter()
    while time.perf_counter() - start < 0.3:  # first warm-up: primitives, caches, pages
        run()
    print("ready", flush=True)
    for line in sys.stdin:
        seconds = float(line)
        start = time.perf_counter()
        run()
        while time.perf_counter() - start < 0.02:
            run()
        times = []
        start = time.perf_counter()
        while time.perf_counter() - start < seconds or len(times) < 3:
            t0 = time.perf_counter()
            run()
            times.append((time.perf_counter() - t0) * 1e3)
        print(json.dumps(times), flush=True)


def onnx_runner(engine, onnx_path, feeds, threads):
    """A call of the ONNX engine `engine` (tandem, ort or openvino) on the model, loaded once
    with `threads` threads, returning its output "y" for `feeds` (name -> array)."""
    if engine == "tandem":
        import tandem
        session = tandem.Session(onnx_path, threads=threads)
        return lambda: session.run(feeds)["y"]
    if engine == "ort":
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        session = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
        return lambda: session.run(["y"], feeds)[0]
    if engine == "openvino":  # float32 even where the CPU has bf16
        import openvino as ov
        compiled = ov.Core().compile_model(onnx_path, "CPU", {
            "INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY"})
        request = compiled.create_infer_request()

        def run():
            request.infer(feeds)
            return request.get_output_tensor(0).data.copy()
        return run
    raise ValueError(f"unknown ONNX engine {engine}")


class WorkerFailed(RuntimeError):
    """A worker process ended before answering; the message quotes its stderr."""


class Worker:
    """One engine's worker process (argv runs serve()); its stderr goes to err_path, which
    a failure quotes (WorkerFailed)."""

    def __init__(self, argv, name, err_path, env=None):
        self.name = name
        self.err_path = err_path
        with open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                                         env=env)
        while self._answer().strip() != "ready":  # a library may print while it loads
            pass
        self.settle()

    def _answer(self):
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            with open(self.err_path) as f:
                raise WorkerFailed(f"{self.name} failed (exit status {self.proc.returncode}):\n{f.read().strip()}")
        return line

    def slice(self, seconds):
        """The call times (ms) of one slice of `seconds`, returned once the process has gone
        quiet (see settle)."""
        self.proc.stdin.write(f"{seconds}\n")
        self.proc.stdin.flush()
        times = json.loads(self._answer())
        self.settle()
        return times

    def cpu_ns(self):
        """CPU time of all the process's threads so far (ns, /proc/PID/task/*/schedstat)."""
        total = 0
        task_dir = f"/proc/{self.proc.pid}/task"
        for tid in os.listdir(task_dir):
            try:
                with open(f"{task_dir}/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (FileNotFoundError, ProcessLookupError):
                pass  # a thread that just ended
        return total

    def settle(self, timeout=1.0):
        """Waits until the process uses under 10% of a core over 10 ms: thread pools spin for
        a while after their last job (ONNX Runtime's for ~50 ms of CPU), which would slow
        the engine whose turn is next."""
        deadline = time.perf_counter() + timeout
        before = self.cpu_ns()
        while time.perf_counter() < deadline:
            time.sleep(0.01)
            now = self.cpu_ns()
            if now - before < 1_000_000:
                return
            before = now

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def take_turns(workers, rounds, seconds, slices, on_round=None):
    """Runs every worker (engine name -> Worker) for `seconds` per round in `slices` slices,
    the engines taking turns. Returns (p50, turns): p50[engine] is the list of each round's
    median call time, turns the list of each turn's {engine: median of its slice}."""
    engines = list(workers)
    p50 = {e: [] for e in engines}
    turns = []
    turn = 0
    for r in range(rounds):
        times = {e: [] for e in engines}
        for _ in range(slices):
            turn_p50 = {}
            for engine in engines[turn % len(engines):] + engines[:turn % len(engines)]:
                calls = workers[engine].slice(seconds / slices)
                times[engine] += calls
                turn_p50[engine] = statistics.median(calls)
            turns.append(turn_p50)
            turn += 1
        for engine in engines:
            p50[engine].append(statistics.median(times[engine]))
        if on_round:
            on_round(r)
    return p50, turns


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def vector_isa():
    """The widest vector instruction set /proc/cpuinfo reports (AMX, AVX-512, AVX2, ...),
    and ONEDNN_MAX_CPU_ISA when it caps oneDNN and Tandem's own kernels."""
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    if "amx_tile" in flags:
        isa = "AMX + AVX-512"
    elif "avx512f" in flags:
        isa = "AVX-512" + (" (VNNI, BF16)" if "avx512_bf16" in flags else "")
    elif "avx2" in flags:
        isa = "AVX2"
    else:
        isa = "SSE4.1 or older"
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA") or os.environ.get("DNNL_MAX_CPU_ISA")
    return isa + (f", capped by ONEDNN_MAX_CPU_ISA={cap}" if cap else "")


def fmt_ms(v):
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"
