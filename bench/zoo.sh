#!/bin/bash
# One command for the model zoo benchmark (bench/zoo.py): installs what is missing
# (tools/setup.sh), builds Tandem, makes the environment (bench/setup_torch2_env.sh: PyTorch
# 2.x, timm, transformers, ONNX Runtime and OpenVINO from PyPI) and runs the zoo with the
# given options (--help lists them; --list the models).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case " $* " in
  *" --help "*|*" -h "*|*" --list "*) ;;
  *) bash "$ROOT/tools/setup.sh" >&2; bash "$ROOT/tools/build.sh" >&2 ;;
esac
PY="$(bash "$ROOT/bench/setup_torch2_env.sh" | tail -1)"
exec "$PY" "$ROOT/bench/zoo.py" "$@"
