#!/bin/bash
# One command for the transformer training benchmark (bench/transformer_training_bench.py):
# installs what is missing (tools/setup.sh), builds Tandem, makes the environment
# (bench/setup_torch2_env.sh: PyTorch 2.x and transformers from PyPI) and runs it with the
# given options (--help lists them).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case " $* " in
  *" --help "*|*" -h "*) ;;
  *) bash "$ROOT/tools/setup.sh" >&2; bash "$ROOT/tools/build.sh" >&2 ;;
esac
PY="$(bash "$ROOT/bench/setup_torch2_env.sh" | tail -1)"
exec "$PY" "$ROOT/bench/transformer_training_bench.py" "$@"
