#!/bin/bash
# tools/python_env.sh keeps an environment equal to its lock: a scratch copy of the onnx
# environment (tools/python_envs/onnx.lock) is made, its `pip freeze` compared with the lock
# here, then one package is taken out and one version changed by hand; each time the next
# call must notice, make the environment anew and leave it equal to the lock again.
# Usage: tests/tools/python_env_test.sh WORK_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(realpath -m "${1:?usage: python_env_test.sh WORK_DIR}")
rm -rf "$work" && mkdir -p "$work"
venv=$work/venv
lock=$root/tools/python_envs/onnx.lock
pinned() { grep -v '^#' "$1" | tr '[:upper:]_.' '[:lower:]--' | sort; }
same_as_lock() {
  "$venv/bin/python" -m pip freeze --local --disable-pip-version-check >"$work/freeze"
  if ! diff <(pinned "$lock") <(pinned "$work/freeze") >"$work/diff"; then
    echo "FAIL ($1): pip freeze differs from $lock:"; cat "$work/diff"; exit 1
  fi
  echo "PASS  $1: pip freeze equals the lock ($(grep -vc '^#' "$lock") packages)"
}
TANDEM_ONNX_VENV=$venv bash "$root/tools/python_env.sh" onnx >"$work/log" 2>&1
same_as_lock "made from the lock"

"$venv/bin/python" -m pip uninstall -q -y packaging
TANDEM_ONNX_VENV=$venv bash "$root/tools/python_env.sh" onnx >"$work/log" 2>&1
grep -q "differs from tools/python_envs/onnx.lock (lock: packaging==" "$work/log" ||
  { echo "FAIL: a missing package went unnoticed:"; cat "$work/log"; exit 1; }
same_as_lock "a package removed by hand"

other=$(grep -i '^typing.extensions==' "$lock" | sed 's/==.*//')
"$venv/bin/python" -m pip install -q --disable-pip-version-check "$other==4.12.2"
TANDEM_ONNX_VENV=$venv bash "$root/tools/python_env.sh" onnx >"$work/log" 2>&1
grep -q "installed: typing.extensions==4.12.2" "$work/log" ||
  { echo "FAIL: a changed version went unnoticed:"; cat "$work/log"; exit 1; }
same_as_lock "a version changed by hand"

# An environment equal to its lock is used as it is.
TANDEM_ONNX_VENV=$venv bash "$root/tools/python_env.sh" onnx >"$work/log" 2>&1
[ "$(cat "$work/log")" = "$venv/bin/python" ] ||
  { echo "FAIL: an environment equal to its lock was not reused:"; cat "$work/log"; exit 1; }
echo "PASS  an environment equal to its lock is reused"
rm -rf "$work"
