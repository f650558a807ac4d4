#!/bin/bash
# Makes (or reuses) one of the project's Python virtual environments from its committed
# lock, so that every machine gets the same packages whatever PyPI serves today. Nothing
# goes into the system Python.
#
# Usage: tools/python_env.sh NAME [VENV]
#   NAME: an environment of tools/python_envs/: NAME.in says what it is for and lists its
#         top-level packages (a "# venv-options: ..." line passes options to `python3 -m
#         venv`); NAME.lock holds every package it has, dependencies included, at its exact
#         version (tools/python_envs/relock.sh writes it).
#   VENV: where it lives; default $TANDEM_<NAME>_VENV, else .venv-NAME in the source tree.
# An environment whose installed packages (`pip freeze --local`) differ from the lock is
# removed and made anew. Prints the environment's python on its last line.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
name=${1:?usage: tools/python_env.sh NAME [VENV]}
override_var=TANDEM_$(echo "$name" | tr '[:lower:]' '[:upper:]')_VENV
venv=${2:-${!override_var:-$root/.venv-$name}}
requirements=$root/tools/python_envs/$name.in
lock=$root/tools/python_envs/$name.lock
for f in "$requirements" "$lock"; do
  [ -f "$f" ] || { echo "[$name] no ${f#"$root"/}: not an environment of tools/python_envs" >&2; exit 1; }
done
read -r -a venv_options <<<"$(sed -n 's/^# venv-options: *//p' "$requirements")"

# name==version per line, names in PEP 503 normal form, sorted; comments dropped.
normalized() {
  grep -v '^[[:space:]]*\(#\|$\)' |
    awk -F'==' '{ n = tolower($1); gsub(/[-_.]+/, "-", n); print n "==" $2 }' | sort
}
# What differs between the lock and the environment, or nothing when they agree.
differences() {
  local installed
  installed=$("$venv/bin/python" -m pip freeze --local --disable-pip-version-check 2>/dev/null) || true
  diff <(normalized <"$lock") <(normalized <<<"$installed") |
    sed -n 's/^< \(.*\)/lock: \1/p; s/^> \(.*\)/installed: \1/p' | head -6 | paste -sd ';' - || true
}

if [ -x "$venv/bin/python" ]; then
  drift=$(differences)
  if [ -z "$drift" ]; then
    echo "$venv/bin/python"
    exit 0
  fi
  echo "[$name] $venv differs from ${lock#"$root"/} ($drift): making it anew" >&2
  rm -rf "$venv"
fi
echo "[$name] creating $venv from ${lock#"$root"/} (PyPI)" >&2
/usr/bin/python3 -m venv "${venv_options[@]}" "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  -r "$requirements" -c "$lock" >&2
drift=$(differences)
if [ -n "$drift" ]; then
  echo "[$name] installed from ${lock#"$root"/}, $venv still differs from it ($drift):" \
       "the lock misses a package; tools/python_envs/relock.sh $name writes it anew" >&2
  exit 1
fi
echo "$venv/bin/python"
