#!/usr/bin/env bash
# The wheel on a clean Debian (issue 31's "better still"): a minimal Debian 12 root made
# with debootstrap (minbase, plus python3 and python3-venv: none of oneDNN, protobuf,
# libonnx, Abseil or libgomp), in which a venv installs the wheel and NumPy from local
# files only (no index), then tests/python/wheel_check.py runs in it under chroot
# (/proc mounted: the CLI's $ORIGIN needs it). Reuses the wheel and PyTorch's numbers of
# ctest python_wheel (WHEEL_WORK_DIR). The root is cached as a tarball in build/.
# Root only, with debootstrap (tools/setup.sh --tests); exits 77 (skipped) otherwise.
# usage: tests/python/wheel_debian_root_test.sh WHEEL_WORK_DIR WORK_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
from=$(realpath "$1")
work=$(realpath -m "$2")
[ "$(id -u)" -eq 0 ] || { echo "SKIP: chroot needs root"; exit 77; }
command -v debootstrap >/dev/null || { echo "SKIP: debootstrap not found (tools/setup.sh --tests installs it)"; exit 77; }
wheel=$(ls "$from"/wheelhouse/tandem_engine-*.whl)
rm -rf "$work" && mkdir -p "$work"
cache=$root/build/debian-bookworm-minbase-python.tar
if [ ! -f "$cache" ]; then
  mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
  echo "debootstrap bookworm from ${mirror:=http://deb.debian.org/debian} (cached in $cache)"
  debootstrap --variant=minbase --include=python3,python3-venv bookworm "$work/new" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log"; echo "FAIL: debootstrap"; exit 1; }
  tar -C "$work/new" -cf "$cache.part" . && mv "$cache.part" "$cache" && rm -rf "$work/new"
fi
rootfs=$work/rootfs
mkdir -p "$rootfs" && tar -C "$rootfs" -xf "$cache"
found=$(find "$rootfs/usr/lib" "$rootfs/lib" -name 'libdnnl*' -o -name 'libprotobuf*' -o -name 'libabsl*' \
        -o -name 'libonnx*' -o -name 'libgomp*' 2>/dev/null | head -5)
[ -z "$found" ] || { echo "FAIL: the root is not clean: $found"; exit 1; }
echo "PASS  the Debian root has none of the libraries the wheel carries"

mkdir -p "$rootfs/w"
cp "$wheel" "$from"/{cnn.onnx,cnn_x.npy,cnn_y.npy,mlp.onnx,mlp_x.npy,mlp_y.npy,mlp_adam_losses.json} "$rootfs/w/"
cp "$root/tests/python/wheel_check.py" "$rootfs/w/"
numpy_pin=$(grep -i '^numpy==' "$root/tools/python_envs/wheel.lock")
"$root/.venv-wheel/bin/pip" download -q --only-binary=:all: --python-version 3.11 -d "$rootfs/w" "$numpy_pin"
mount -t proc proc "$rootfs/proc"
trap 'umount "$rootfs/proc" 2>/dev/null || true' EXIT
chroot "$rootfs" /bin/bash -c 'set -e
  python3 -m venv /venv
  /venv/bin/pip install -q --no-index --find-links /w tandem_engine
  cd /w && /venv/bin/python -I wheel_check.py /w'
echo "PASS  the wheel works on a clean Debian 12 with only python3, venv, NumPy and itself"
