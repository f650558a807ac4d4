#!/usr/bin/env bash
# Resume is bit-identical, and a SIGKILL during checkpoint writing leaves a loadable one.
#   1. 4 epochs straight vs 2 epochs + resume to 4 (shuffled mini-batches): the exported
#      models must be byte-identical — for peaks_mlp.onnx and for an MLP with two
#      training-mode Dropout nodes (one seeded by --seed, one by its seed attribute),
#      whose masks must follow --seed.
#   2. Kill training at random moments while it writes checkpoints every epoch; the
#      checkpoint left behind must load and resume.
# usage: tests/train_resume_test.sh path/to/tandem WORK_DIR
set -euo pipefail
tandem=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
/usr/bin/python3 "$(dirname "$0")/sincos_data.py" "$work"
/usr/bin/python3 "$(dirname "$0")/dropout_mlp_model.py" "$work/dropout_mlp.onnx"
model=$(dirname "$0")/../models/peaks_mlp.onnx
common=(--x "$work/x.npy" --y "$work/y.npy" --loss mse --optimizer adam --lr 0.01 --batch-size 64 --seed 7 --threads 1 --quiet)

"$tandem" train "$model" "${common[@]}" --epochs 4 --export "$work/straight.onnx" >/dev/null
"$tandem" train "$model" "${common[@]}" --epochs 2 --checkpoint-dir "$work/ckpt" >/dev/null
"$tandem" train "$model" "${common[@]}" --epochs 4 --checkpoint-dir "$work/ckpt" --resume --export "$work/resumed.onnx" >/dev/null
if cmp -s "$work/straight.onnx" "$work/resumed.onnx"; then
  echo "PASS resume: 2+2 epochs give the same model bytes as 4 epochs"
else
  echo "FAIL resume: the resumed model differs from the uninterrupted one"; exit 1
fi

# Dropout: masks are a function of (seed, step, element), so resume draws the same ones.
drop=$work/dropout_mlp.onnx
"$tandem" train "$drop" "${common[@]}" --epochs 4 --export "$work/drop_straight.onnx" >/dev/null
"$tandem" train "$drop" "${common[@]}" --epochs 2 --checkpoint-dir "$work/drop_ckpt" >/dev/null
"$tandem" train "$drop" "${common[@]}" --epochs 4 --checkpoint-dir "$work/drop_ckpt" --resume \
  --export "$work/drop_resumed.onnx" >/dev/null
if cmp -s "$work/drop_straight.onnx" "$work/drop_resumed.onnx"; then
  echo "PASS resume with Dropout: 2+2 epochs give the same model bytes as 4 epochs"
else
  echo "FAIL resume with Dropout: the resumed model differs from the uninterrupted one"; exit 1
fi
# Without shuffling, --seed reaches the model only through drop1's masks.
one=(--x "$work/x.npy" --y "$work/y.npy" --lr 0.01 --batch-size 64 --threads 1 --quiet --no-shuffle --epochs 1)
"$tandem" train "$drop" "${one[@]}" --seed 7 --export "$work/drop_7a.onnx" >/dev/null
"$tandem" train "$drop" "${one[@]}" --seed 7 --export "$work/drop_7b.onnx" >/dev/null
"$tandem" train "$drop" "${one[@]}" --seed 8 --export "$work/drop_8.onnx" >/dev/null
if ! cmp -s "$work/drop_7a.onnx" "$work/drop_7b.onnx"; then
  echo "FAIL Dropout: two runs with --seed 7 differ"; exit 1
elif cmp -s "$work/drop_7a.onnx" "$work/drop_8.onnx"; then
  echo "FAIL Dropout: --seed 7 and --seed 8 give the same model (the masks ignore the seed)"; exit 1
fi
echo "PASS Dropout masks: reproducible for one --seed, different for another"

# SIGKILL while checkpoints are being written (one per epoch, 400 tiny epochs).
for trial in 1 2 3 4 5; do
  rm -rf "$work/kill"
  "$tandem" train "$model" "${common[@]}" --batch-size 2000 --epochs 400 --checkpoint-dir "$work/kill" >/dev/null &
  pid=$!
  sleep "0.$((RANDOM % 9 + 1))"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  ls "$work/kill" 2>/dev/null | grep -q '\.tmp\.' && echo "note: trial $trial killed mid-write"
  if [ ! -f "$work/kill/checkpoint.tdm" ]; then
    echo "note: trial $trial was killed before the first checkpoint"; continue
  fi
  if ! "$tandem" train "$model" "${common[@]}" --batch-size 2000 --epochs 401 --checkpoint-dir "$work/kill" --resume >/dev/null; then
    echo "FAIL kill: trial $trial left a checkpoint that does not resume"; exit 1
  fi
  echo "PASS kill trial $trial: checkpoint loads and resumes"
done
