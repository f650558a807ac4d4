#!/usr/bin/env bash
# The whole test suite: installs what is missing, makes the Python environments from their
# locks (tools/python_envs; the packages of each are printed first), builds, then runs every test through
# ctest (GoogleTest units, the ONNX conformance suites, PyTorch 1.13 and 2.x parity, bad-input, fault,
# soak and CLI tests), then the sanitizer and fuzzing leg (tests/sanitize.sh: a second,
# clang ASan+UBSan build; TANDEM_SKIP_SANITIZE=1 skips it for a quick local run).
# Usage: bash tests/run_all.sh [extra ctest args]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# A clean run writes ~11 GiB (two builds, the Python environments, exported models), a
# re-run in a built tree a few; say so up front rather than fail half-way with
# "No space left on device".
default_need=12
[ -d "${BUILD_DIR:-$root/build}" ] && default_need=3
need_gib=${TANDEM_NEED_FREE_GIB:-$default_need}
build_fs=${BUILD_DIR:-$root}
while [ ! -d "$build_fs" ]; do build_fs=$(dirname "$build_fs"); done
free_gib=$(( $(df -Pk "$root" "$build_fs" | awk 'NR > 1 && (min == "" || $4 < min) {min = $4} END {print min}') / 1048576 ))
if [ "$free_gib" -lt "$need_gib" ]; then
  echo "run_all.sh: only ${free_gib} GiB free under $root; the suite needs about ${need_gib} GiB" \
       "(set TANDEM_NEED_FREE_GIB to override)" >&2
  exit 1
fi
bash "$root/tools/setup.sh" --tests
# Every Python environment from its committed lock, with the packages each holds printed.
bash "$root/tools/python_envs/make_all.sh"
bash "$root/tools/build.sh"
(cd "${BUILD_DIR:-$root/build}" && ctest --output-on-failure --timeout 1800 "$@")
if [ "${TANDEM_SKIP_SANITIZE:-0}" != 1 ]; then
  bash "$root/tests/sanitize.sh"
fi
