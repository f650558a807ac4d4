#!/usr/bin/env bash
# Builds Tandem and installs it for embedding: headers (include/tandem), libtandem.so, the
# CUDA plugin where built, the CMake package (find_package(Tandem)), tandem.pc, the
# `tandem` CLI and the Python module (`import tandem`, for Debian's python3).
# usage: bash tools/install.sh [PREFIX]     (default /usr/local; run as root for it)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-/usr/local}
bash "$root/tools/setup.sh"
bash "$root/tools/build.sh"
build=${BUILD_DIR:-$root/build}
cmake --install "$build" --prefix "$prefix"
pydir=$(cmake -L -N "$build" 2>/dev/null | sed -n 's/^TANDEM_PYTHON_INSTALL_DIR:STRING=//p')
echo "[install] Tandem installed under $prefix"
echo "[install] C/C++: find_package(Tandem) -> Tandem::tandem, or pkg-config --cflags --libs tandem"
echo "[install] Python: $prefix/$pydir/tandem (on Debian python3's path when the prefix is /usr/local;"
echo "          otherwise PYTHONPATH=$prefix/$pydir)"
