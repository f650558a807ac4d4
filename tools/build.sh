#!/usr/bin/env bash
# Configures and builds Tandem (Release, Ninja) into ${BUILD_DIR:-build}.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
# Lets ccache share results between clones of the repository.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" ${NINJA_JOBS:+-j$NINJA_JOBS}
