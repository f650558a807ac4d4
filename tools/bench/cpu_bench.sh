#!/bin/bash
# One command for the CPU inference comparison (tools/bench/cpu_bench.py): installs what
# is missing (tools/setup.sh), builds Tandem, makes the benchmark environment
# (tools/bench/setup_bench_env.sh: onnxruntime from PyPI over Debian's torch) and runs
# the benchmark with the given options (--help lists them).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bash "$ROOT/tools/setup.sh" >&2
bash "$ROOT/tools/build.sh" >&2
PY="$(bash "$ROOT/tools/bench/setup_bench_env.sh" | tail -1)"
exec "$PY" "$ROOT/tools/bench/cpu_bench.py" "$@"
