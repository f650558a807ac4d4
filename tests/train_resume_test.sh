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
/usr/bin/python3 - "$work" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
rng = np.random.default_rng(1)
# 2-32-32-1 MLP with Dropout(0.25) after both hidden layers; drop2 has a seed attribute.
def init(name, shape, scale):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)
inits = [init("w1", (2, 32), 0.7), init("b1", (32,), 0.1), init("w2", (32, 32), 0.18),
         init("b2", (32,), 0.1), init("w3", (32, 1), 0.18), init("b3", (1,), 0.0),
         numpy_helper.from_array(np.array(0.25, np.float32), "ratio")]
nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], name="fc1"),
         helper.make_node("Relu", ["h1"], ["r1"], name="relu1"),
         helper.make_node("Dropout", ["r1", "ratio"], ["d1"], name="drop1"),
         helper.make_node("Gemm", ["d1", "w2", "b2"], ["h2"], name="fc2"),
         helper.make_node("Relu", ["h2"], ["r2"], name="relu2"),
         helper.make_node("Dropout", ["r2", "ratio"], ["d2", "m2"], name="drop2", seed=5),
         helper.make_node("Gemm", ["d2", "w3", "b3"], ["y"], name="fc3")]
g = helper.make_graph(nodes, "dropout_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 1])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1] + "/dropout_mlp.onnx")
PY
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
