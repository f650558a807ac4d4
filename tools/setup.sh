#!/usr/bin/env bash
# Installs every Debian package Tandem needs to build, test and run its demo.
# Idempotent and non-interactive; run as root (or with sudo available).
# usage: bash tools/setup.sh [--tests]
#   --tests also installs what only tests use: a one-node Slurm with munge (the srun test
#   starts its own daemons from a temporary folder) and debootstrap (the wheel's clean
#   Debian root). tests/run_all.sh passes it; the demo, install and wheel scripts do not.
set -euo pipefail
packages=(
  build-essential cmake ninja-build ccache pkg-config clang libclang-rt-dev
  libprotobuf-dev protobuf-compiler libonnx-dev
  libdnnl-dev libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev
  zlib1g-dev
  python3 python3-dev python3-numpy python3-onnx python3-torch python3-torchvision python3-venv
  libopenblas0-openmp
  libonnx-testdata dataset-fashion-mnist
  openmpi-bin libopenmpi-dev
)
if [ "${1:-}" = --tests ]; then
  packages+=(slurmctld slurmd slurm-client munge debootstrap)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "[setup] all ${#packages[@]} packages present"
  exit 0
fi
echo "[setup] installing: ${missing[*]}"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
