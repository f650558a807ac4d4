#!/usr/bin/env bash
# Packs what run_gpu_checks.sh needs on a GPU machine that has the NVIDIA driver, CUDA's
# libraries and PyTorch but none of Tandem's Debian libraries, as one .tar.xz:
#   bin/     tandem and tandem_cuda_tests, stripped
#   lib/     libtandem.so (for the Python module's DLPack check) and libtandem_cuda.so,
#            stripped, with every shared library the four load except the C and C++
#            runtimes and CUDA's own libraries (the GPU machine has its own, newer ones)
#   onnx/    the ONNX suite's node and simple tests
# The repository travels beside it (the scripts, the committed models, tests/conformance,
# python/).
# usage: [BUILD_DIR=build] bash tests/gpu/pack_gpu_checks.sh [OUT_DIR]   (default .gpu-pack, git-ignored)
# Writes OUT_DIR/gpu-checks.tar.xz; run it after tools/build.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${BUILD_DIR:-$root/build}" 2>/dev/null && pwd) ||
  { echo "pack_gpu_checks: no build folder ${BUILD_DIR:-$root/build} (set BUILD_DIR, or run tools/build.sh)" >&2; exit 2; }
out=${1:-$root/.gpu-pack}
files=(tandem tests/tandem_cuda_tests libtandem.so libtandem_cuda.so)
for f in "${files[@]}"; do
  [ -f "$build/$f" ] || { echo "pack_gpu_checks: $build/$f is missing: build it first (tools/build.sh)" >&2; exit 2; }
done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pack=$stage/gpu-checks
mkdir -p "$pack/bin" "$pack/lib" "$pack/onnx"
# Not packed: the C/C++ runtime (the GPU machine's is newer) and CUDA's libraries.
system='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libgcc_s|libstdc\+\+)'
cuda='^(libcuda\.so|libcudart|libcublas|libcudnn|libnvrtc|libnvJitLink|libcupti|libnccl|libcurand|libcufft|libcusparse|libcusolver)'
for f in "${files[@]}"; do
  case $f in *.so) dest=$pack/lib ;; *) dest=$pack/bin ;; esac
  cp "$build/$f" "$dest/"
  strip --strip-unneeded "$dest/$(basename "$f")"
  ldd "$build/$f" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ $name =~ $system || $name =~ $cuda || -e $pack/lib/$name ]] || cp -L "$path" "$pack/lib/$name"
  done
done
cp -r /usr/share/libonnx-testdata/data/node /usr/share/libonnx-testdata/data/simple "$pack/onnx/"
mkdir -p "$out"
tar -C "$stage" -cJf "$out/gpu-checks.tar.xz" gpu-checks
echo "wrote $out/gpu-checks.tar.xz ($(du -h "$out/gpu-checks.tar.xz" | cut -f1); $(du -sh "$pack" | cut -f1) unpacked)"
