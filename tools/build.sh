#!/usr/bin/env bash
# Configures and builds Tandem (Release, Ninja) into ${BUILD_DIR:-build}.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" ${NINJA_JOBS:+-j$NINJA_JOBS}
