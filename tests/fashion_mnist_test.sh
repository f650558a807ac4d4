#!/usr/bin/env bash
# Real data: `tandem train` of the Fashion-MNIST CNN (models/fashion_cnn.onnx) must reach
# at least 90% accuracy on the 10,000 test images (Debian's dataset-fashion-mnist).
# usage: tests/fashion_mnist_test.sh path/to/tandem WORK_DIR
set -euo pipefail
tandem=$1
work=$2
mkdir -p "$work"
model=$(dirname "$0")/../models/fashion_cnn.onnx
"$tandem" train "$model" --fashion-mnist --loss cross_entropy --optimizer adam --lr 2e-3 \
  --schedule cosine --epochs 8 --batch-size 64 --seed 1 --threads 2 \
  --history "$work/fashion_loss.csv" --export "$work/fashion_trained.onnx" | tee "$work/train.log"
acc=$(sed -n 's/.*validation accuracy \([0-9.]*\)%.*/\1/p' "$work/train.log" | tail -1)
if [ -z "$acc" ]; then echo "FAIL: no validation accuracy reported"; exit 1; fi
if awk -v a="$acc" 'BEGIN { exit !(a >= 90.0) }'; then
  echo "PASS: Fashion-MNIST test accuracy $acc% >= 90%"
else
  echo "FAIL: Fashion-MNIST test accuracy $acc% < 90%"; exit 1
fi
