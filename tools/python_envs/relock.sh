#!/bin/bash
# Writes the locks anew, on purpose: for each NAME (default: every NAME.in here) makes a
# scratch environment, installs NAME.in from today's PyPI without constraints, and writes
# what it got, every package at its exact version, to NAME.lock. The project's
# environments then differ from their locks and tools/python_env.sh remakes each the next
# time it is asked for. Run the whole suite after relocking (bash tests/run_all.sh): a new
# package can change what a test expects (the current ONNX suite is written by the onnx of
# .venv-onnx; tests/conformance/update_expected_failures.sh --current lists its failures).
# Usage: tools/python_envs/relock.sh [NAME...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ $# -eq 0 ]; then
  set -- $(cd "$here" && ls *.in | sed 's/\.in$//')
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for name in "$@"; do
  requirements=$here/$name.in
  [ -f "$requirements" ] || { echo "[relock] no $requirements" >&2; exit 1; }
  read -r -a venv_options <<<"$(sed -n 's/^# venv-options: *//p' "$requirements")"
  echo "[relock] $name: installing $name.in from PyPI into a scratch environment" >&2
  rm -rf "$scratch/venv"
  /usr/bin/python3 -m venv "${venv_options[@]}" "$scratch/venv"
  "$scratch/venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" >&2
  {
    echo "# The lock of $name.in: every package of the environment at its exact version."
    echo "# Written by tools/python_envs/relock.sh on $(date -u +%Y-%m-%d) with $("$scratch/venv/bin/python" -V)" \
         "and pip $("$scratch/venv/bin/python" -m pip --version | cut -d' ' -f2); not edited by hand."
    "$scratch/venv/bin/python" -m pip freeze --local --disable-pip-version-check
  } >"$scratch/$name.lock"
  mv "$scratch/$name.lock" "$here/$name.lock"
  echo "[relock] $name.lock: $(grep -vc '^#' "$here/$name.lock") packages" >&2
done
