#!/bin/bash
# Tandem's and ONNX Runtime's CPU profiles side by side, per op type, on one cpu_bench.py
# case (tools/bench/profile_vs_ort.py; --help lists the options). Makes the benchmark
# environment (tools/bench/setup_bench_env.sh) and builds Tandem first.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bash "$ROOT/tools/build.sh" >&2
PY="$(bash "$ROOT/tools/bench/setup_bench_env.sh" | tail -1)"
exec "$PY" "$ROOT/tools/bench/profile_vs_ort.py" "$@"
