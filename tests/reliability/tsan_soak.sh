#!/usr/bin/env bash
# Optional: the concurrency soak (tandem_soak_test) under ThreadSanitizer, in its own
# clang build (${TSAN_BUILD_DIR:-build-tsan}). Not part of CI: it costs a third full
# build. oneDNN and libgomp are not instrumented; the session runs with one intra-op
# thread, so every race TSan can see is between callers of Session::Run.
# usage: bash tests/reliability/tsan_soak.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${TSAN_BUILD_DIR:-$root/build-tsan}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DTANDEM_SANITIZE=thread -DTANDEM_WITH_CUDA=OFF >/dev/null
ninja -C "$build" ${NINJA_JOBS:+-j$NINJA_JOBS} tandem_soak_test
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  "$build/tests/reliability/tandem_soak_test"
