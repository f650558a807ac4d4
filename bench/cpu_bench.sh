#!/bin/bash
# One command for the CPU inference comparison (bench/cpu_bench.py): installs what
# is missing (tools/setup.sh), builds Tandem, makes the benchmark environments
# (bench/setup_bench_env.sh: onnxruntime from PyPI over Debian's torch;
# bench/setup_torch2_env.sh: PyTorch 2.x from PyPI, left out with --no-torch2) and
# runs the benchmark with the given options (--help lists them).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/tools/setup.sh" >&2
bash "$ROOT/tools/build.sh" >&2
PY="$(bash "$ROOT/bench/setup_bench_env.sh" | tail -1)"
args=() torch2=1
for a in "$@"; do
  if [ "$a" = --no-torch2 ]; then torch2=0; else args+=("$a"); fi
done
if [ $torch2 = 1 ]; then
  args+=(--torch2-python "$(bash "$ROOT/bench/setup_torch2_env.sh" | tail -1)")
fi
exec "$PY" "$ROOT/bench/cpu_bench.py" "${args[@]}"
