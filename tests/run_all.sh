#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, then runs every test through
# ctest (GoogleTest units, the ONNX conformance suites, PyTorch 1.13 and 2.x parity, bad-input, fault,
# soak and CLI tests), then the sanitizer and fuzzing leg (tests/sanitize.sh: a second,
# clang ASan+UBSan build; TANDEM_SKIP_SANITIZE=1 skips it for a quick local run).
# Usage: bash tests/run_all.sh [extra ctest args]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/tools/setup.sh" --tests
bash "$root/tools/build.sh"
(cd "${BUILD_DIR:-$root/build}" && ctest --output-on-failure --timeout 1800 "$@")
if [ "${TANDEM_SKIP_SANITIZE:-0}" != 1 ]; then
  bash "$root/tests/sanitize.sh"
fi
