#!/bin/bash
# Makes every Python environment of tools/python_envs from its lock (tools/python_env.sh:
# one whose packages differ from the lock is made anew) and prints what each holds, one
# line per environment: the first lines of a test run's log say which packages it used.
# Usage: tools/python_envs/make_all.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
for requirements in "$here"/*.in; do
  name=$(basename "$requirements" .in)
  python=$(bash "$here/../python_env.sh" "$name" | tail -1)
  packages=$("$python" -m pip freeze --local --disable-pip-version-check | paste -sd ' ' -)
  echo "[python env] $name ($(dirname "$(dirname "$python")"), matches $name.lock): $packages"
done
