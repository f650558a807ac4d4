#!/usr/bin/env bash
# Training that meets a fault stops cleanly and keeps the last good checkpoint.
#   1. NaN/Inf loss (--lr 1e30 after a resume): exit status 1, an error naming the step,
#      epoch and batch and the last good checkpoint, which still holds the finite weights
#      of its step and resumes. A run that diverges before its first checkpoint writes none,
#      and weights that turn NaN/Inf after a finite loss are not written over it either.
#   2. A checkpoint write that fails (a file-size limit, `ulimit -f`, below the checkpoint's
#      size: write() fails with EFBIG like on a full disk): exit status 1 without a signal,
#      one error line naming the file and errno's text, no temporary file left, the
#      previous checkpoint unchanged, and resuming from it still matches an uninterrupted run.
# usage: tests/train_faults_test.sh path/to/tandem WORK_DIR
set -euo pipefail
tandem=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
/usr/bin/python3 "$(dirname "$0")/sincos_data.py" "$work"
model=$(dirname "$0")/../models/peaks_mlp.onnx
common=(--x "$work/x.npy" --y "$work/y.npy" --loss mse --optimizer adam --seed 7 --threads 1 --quiet)
fail() { echo "FAIL $*"; exit 1; }
# The checkpoint's step if every tensor in it is finite, else a failure.
finite_step() {
  /usr/bin/python3 - "$1" <<'PY'
import sys, numpy as np, onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
for t in m.graph.initializer:
    if not np.isfinite(numpy_helper.to_array(t)).all(): sys.exit(t.name + " is not finite")
print({p.key: p.value for p in m.metadata_props}["step"])
PY
}

# Trains 2 good epochs at batch size $3 into checkpoint dir $work/$2, then resumes with the
# diverging lr $4 up to epoch $5: the run must exit 1 with the one error line matching the
# extended regex $6 and leave the good checkpoint byte-identical. $1 names the case in
# failures. Sets ck to the checkpoint dir.
diverge_after_two_good_epochs() {
  local what=$1 name=$2 batch=$3 lr=$4 epochs=$5 pattern=$6 rc=0
  ck=$work/$name
  "$tandem" train "$model" "${common[@]}" --batch-size "$batch" --lr 0.01 --epochs 2 --checkpoint-dir "$ck" >/dev/null
  cp "$ck/checkpoint.tdm" "$work/good.tdm"
  "$tandem" train "$model" "${common[@]}" --batch-size "$batch" --lr "$lr" --epochs "$epochs" --checkpoint-dir "$ck" \
    --resume >/dev/null 2>"$work/$name.err" || rc=$?
  cat "$work/$name.err"
  [ "$rc" = 1 ] || fail "$what: exit status $rc, expected 1"
  grep -Eq "$pattern" "$work/$name.err" || fail "$what: unexpected message"
  cmp -s "$ck/checkpoint.tdm" "$work/good.tdm" || fail "$what: the checkpoint was overwritten"
}

# 1. A diverging run: 2 good epochs (32 steps each), then resumed with lr 1e30.
diverge_after_two_good_epochs "diverged run" nan 64 1e30 4 \
  "^error: \[train\] step [0-9]+ \(epoch 3, batch [0-9]+\): loss is (nan|inf); stopping\. The last good checkpoint is $work/nan/checkpoint.tdm \(step 64\)\.$"
step=$(finite_step "$ck/checkpoint.tdm") || fail "diverged run: checkpoint: $step"
[ "$step" = 64 ] || fail "diverged run: the checkpoint is at step $step, expected 64"
"$tandem" train "$model" "${common[@]}" --batch-size 64 --lr 0.01 --epochs 3 --checkpoint-dir "$ck" --resume >/dev/null ||
  fail "diverged run: the kept checkpoint does not resume"
echo "PASS NaN loss: stops at the bad step, checkpoint of step 64 kept (finite) and resumes"

rc=0
"$tandem" train "$model" "${common[@]}" --batch-size 64 --lr 1e30 --epochs 2 --checkpoint-dir "$work/nan0" \
  >/dev/null 2>"$work/nan0.err" || rc=$?
[ "$rc" = 1 ] || fail "diverged first epoch: exit status $rc, expected 1"
grep -q "loss is .*; stopping. No checkpoint has been written yet.$" "$work/nan0.err" ||
  fail "diverged first epoch: unexpected message: $(cat "$work/nan0.err")"
[ ! -e "$work/nan0/checkpoint.tdm" ] || fail "diverged first epoch: a checkpoint was written"
echo "PASS NaN loss in the first epoch: no checkpoint written"

# Full batch, lr 3.4e38 (the largest float is 3.40282e38): step 3's loss is finite, the
# update overflows, so the weights it leaves are not.
diverge_after_two_good_epochs "diverged weights" nan_weights 2000 3.4e38 3 \
  "^error: \[train\] epoch 3, step 3: parameter '[^']+' holds NaN or Inf; no checkpoint written; stopping\. The last good checkpoint is $work/nan_weights/checkpoint.tdm \(step 2\)\.$"
echo "PASS NaN weights after a finite loss: no checkpoint written over the good one"

# 2. A failing checkpoint write. ulimit -f counts 1024-byte blocks; the error message
# itself must still fit (it goes to a file under the same limit).
ck=$work/full
"$tandem" train "$model" "${common[@]}" --batch-size 64 --lr 0.01 --epochs 4 --export "$work/straight.onnx" >/dev/null
"$tandem" train "$model" "${common[@]}" --batch-size 64 --lr 0.01 --epochs 2 --checkpoint-dir "$ck" >/dev/null
cp "$ck/checkpoint.tdm" "$work/good.tdm"
blocks=$(( $(stat -c %s "$ck/checkpoint.tdm") / 1024 / 2 ))
[ "$blocks" -ge 1 ] || fail "disk full: the checkpoint is too small for this test"
rc=0
( ulimit -f "$blocks"
  exec "$tandem" train "$model" "${common[@]}" --batch-size 64 --lr 0.01 --epochs 4 --checkpoint-dir "$ck" --resume \
    >/dev/null 2>"$work/full.err" ) || rc=$?
cat "$work/full.err"
[ "$rc" = 1 ] || fail "disk full: exit status $rc, expected 1 (>128 means a signal)"
[ "$(grep -c . "$work/full.err" | tr -d ' ')" -le 2 ] || fail "disk full: more than one error line"
grep -q "^error: \[checkpoint\] cannot write $ck/checkpoint.tdm: File too large (epoch 3, step 96); stopping. The last good checkpoint is $ck/checkpoint.tdm (step 64).$" \
  "$work/full.err" || fail "disk full: unexpected message"
! ls "$ck" | grep -q '\.tmp\.' || fail "disk full: a temporary file was left: $(ls "$ck")"
cmp -s "$ck/checkpoint.tdm" "$work/good.tdm" || fail "disk full: the previous checkpoint changed"
"$tandem" train "$model" "${common[@]}" --batch-size 64 --lr 0.01 --epochs 4 --checkpoint-dir "$ck" --resume \
  --export "$work/resumed.onnx" >/dev/null || fail "disk full: the previous checkpoint does not resume"
cmp -s "$work/straight.onnx" "$work/resumed.onnx" || fail "disk full: resuming differs from an uninterrupted run"
echo "PASS failed checkpoint write: clean error, no temporary file, previous checkpoint resumes bit-identically"
