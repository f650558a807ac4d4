#!/usr/bin/env bash
# Packs what tests/gpu/run_gpu_checks.sh needs on a GPU machine that has CUDA and PyTorch
# but none of Tandem's Debian libraries: the built tandem CLI, libtandem.so (for the Python
# module's DLPack check), CUDA plugin and CUDA tests
# (stripped) with the shared libraries they load (../shared/gpu/bundle), and the ONNX
# suite's node and simple tests. The repository itself travels separately (the models,
# scripts and this folder). Run here, after tools/build.sh.
# usage: bash tests/gpu/pack_gpu_checks.sh [OUT_DIR]   (default .gpu-pack, git-ignored)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
out=${1:-$root/.gpu-pack}
bundle=$root/../shared/gpu/bundle
[ -x "$bundle" ] || { echo "pack_gpu_checks: $bundle not found (the workplace's GPU bundling helper)" >&2; exit 2; }
for f in "$build/tandem" "$build/libtandem_cuda.so" "$build/libtandem.so" "$build/tests/tandem_cuda_tests"; do
  [ -f "$f" ] || { echo "pack_gpu_checks: $f is missing: run tools/build.sh first" >&2; exit 2; }
done
rm -rf "$out" && mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for f in tandem libtandem_cuda.so libtandem.so tests/tandem_cuda_tests; do
  cp "$build/$f" "$stage/$(basename "$f")"
  strip --strip-unneeded "$stage/$(basename "$f")"
done
"$bundle" "$stage/bundle" "$stage/tandem" "$stage/libtandem_cuda.so" "$stage/libtandem.so" "$stage/tandem_cuda_tests" >/dev/null
mkdir -p "$stage/bundle/onnx"
cp -r /usr/share/libonnx-testdata/data/node /usr/share/libonnx-testdata/data/simple "$stage/bundle/onnx/"
tar -C "$stage" -cJf "$out/gpu-checks.tar.xz" bundle
echo "wrote $out/gpu-checks.tar.xz ($(du -h "$out/gpu-checks.tar.xz" | cut -f1)); on the GPU machine, from the repository root:"
echo "  tar -xJf ${out#$root/}/gpu-checks.tar.xz -C /tmp && bash tests/gpu/run_gpu_checks.sh /tmp/bundle"
