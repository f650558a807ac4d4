#!/bin/bash
# Makes (or reuses) a Python virtual environment of Debian's python3 and installs packages
# from PyPI into it when a check fails; nothing goes into the system Python. The
# project's environment scripts (bench/setup_*_env.sh, tools/onnx_suite/
# setup_onnx_env.sh, tools/keras/setup_keras_env.sh) are one call of this each.
# Usage: tools/python_env.sh TAG VENV [--system-site-packages] CHECK -- PIP_ARGS...
#   CHECK: Python code that runs without error once the environment is complete.
# Prints the environment's python on its last line.
set -euo pipefail
tag=$1 venv=$2
shift 2
venv_args=()
if [ "${1:-}" = --system-site-packages ]; then
  venv_args+=(--system-site-packages)
  shift
fi
check=$1
shift
[ "${1:-}" = -- ] && shift
if [ ! -x "$venv/bin/python" ]; then
  echo "[$tag] creating $venv" >&2
  /usr/bin/python3 -m venv "${venv_args[@]}" "$venv"
fi
if ! "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "[$tag] installing $* from PyPI" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >&2
fi
echo "$venv/bin/python"
