#!/bin/bash
# Makes the benchmarks' environment (default .venv-bench in the source tree, or
# $TANDEM_BENCH_VENV) from its lock: Debian's python3 with its system packages visible
# (torch 1.13, onnx, numpy: the tests' own) plus ONNX Runtime (tools/python_envs/bench.in).
# Prints the python on its last line.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/../tools/python_env.sh" bench
