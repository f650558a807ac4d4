#!/bin/bash
# Tandem's and ONNX Runtime's CPU profiles side by side, per op type, on a cpu_bench.py
# case or any .onnx file (bench/profile_vs_ort.py; --help lists the options). Makes the benchmark
# environment (bench/setup_bench_env.sh) and builds Tandem first.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/tools/build.sh" >&2
PY="$(bash "$ROOT/bench/setup_bench_env.sh" | tail -1)"
exec "$PY" "$ROOT/bench/profile_vs_ort.py" "$@"
