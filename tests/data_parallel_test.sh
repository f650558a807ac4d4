#!/usr/bin/env bash
# Data-parallel training (docs/DISTRIBUTED.md) trains the same model as one process with
# the same global batch: `mpirun -n 2` and `-n 3` (uneven shares) against a plain run, on
#   1. the peaks MLP, full batch of 40,000 points, Adam: 20 steps;
#   2. the CIFAR CNN, cross-entropy, batch 64 of 256 random images, momentum SGD: 8 steps.
#      (Not Adam here: on random labels it turns the last-bit differences of summing in
#      another order into whole updates of weights whose gradient is ~0, ~10x per step:
#      1e-8 of the loss after 1 step, 4e-5 after 8, 3e-4 of a weight's scale after 4.)
#   3. an MLP with two training-mode Dropout nodes, batch 100 of 2,000 points, momentum
#      SGD: 2 epochs (each rank draws its rows' part of the one-process mask).
# Every step's loss must agree within 1e-5 relative, and the exported weights within
# 1e-4 of each tensor's scale. Then:
#   - a checkpoint written by a 2-rank run resumes under 1 and under 3 ranks to the model
#     an uninterrupted run trains;
#   - a rank killed (SIGKILL) or hung (SIGSTOP) mid-training ends the job within 30 s with
#     a line naming a rank and the step, and the checkpoint left behind loads;
#   - --distributed without a launcher, and several processes without --distributed, are
#     refused with a message saying how to launch.
# usage: tests/data_parallel_test.sh path/to/tandem WORK_DIR
set -euo pipefail
tandem=$1
work=$2
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work" && mkdir -p "$work"
command -v mpirun >/dev/null || { echo "FAIL: mpirun not found (tools/setup.sh installs openmpi-bin)"; exit 1; }
# As root Open MPI wants its consent; 3 ranks on a 2-core machine need oversubscription.
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none)

/usr/bin/python3 "$root/models/peaks_data.py" "$work/peaks" >/dev/null
/usr/bin/python3 "$root/models/export_models.py" "$work/models" >/dev/null  # cifar_cnn.onnx is not committed
/usr/bin/python3 "$root/tests/sincos_data.py" "$work" >/dev/null
/usr/bin/python3 "$root/tests/dropout_mlp_model.py" "$work/dropout_mlp.onnx"
/usr/bin/python3 "$root/models/random_images.py" "$work" cifar 256 3 32 32 3

# compare NAME REFERENCE_DIR OTHER_DIR: step losses and exported weights.
compare() { /usr/bin/python3 "$root/tests/data_parallel_compare.py" "$@"; }

# run CASE RANKS ARGS...: 0 ranks = a plain process.
run() {
  local case=$1 ranks=$2; shift 2
  local out=$work/$case-$ranks
  mkdir -p "$out"
  if [ "$ranks" = 0 ]; then
    "$tandem" train "$@" --threads 1 --quiet --step-log "$out/steps.csv" --export "$out/model.onnx" >"$out/log" 2>&1
  else
    "${mpi[@]}" -n "$ranks" "$tandem" train "$@" --threads 1 --quiet --distributed \
      --step-log "$out/steps.csv" --export "$out/model.onnx" >"$out/log" 2>&1 || { cat "$out/log"; exit 1; }
  fi
}

peaks=("$root/models/peaks_mlp.onnx" --x "$work/peaks/X.npy" --y "$work/peaks/Y.npy" --loss mse --optimizer adam
       --lr 0.08 --batch-size 40000 --epochs 20 --seed 1)
cifar=("$work/models/cifar_cnn.onnx" --x "$work/cifar_x.npy" --y "$work/cifar_y.npy" --loss cross_entropy
       --optimizer momentum --lr 0.01 --batch-size 64 --epochs 2 --seed 2)
dropout=("$work/dropout_mlp.onnx" --x "$work/x.npy" --y "$work/y.npy" --loss mse --optimizer momentum --lr 0.05
         --batch-size 100 --epochs 2 --seed 7)
for ranks in 0 2 3; do
  run peaks "$ranks" "${peaks[@]}"
  run cifar "$ranks" "${cifar[@]}"
  run dropout "$ranks" "${dropout[@]}"
done
for ranks in 2 3; do
  compare "peaks MLP, full batch, $ranks ranks" "$work/peaks-0" "$work/peaks-$ranks"
  compare "CIFAR CNN, batch 64, $ranks ranks" "$work/cifar-0" "$work/cifar-$ranks"
  compare "Dropout MLP, batch 100, $ranks ranks" "$work/dropout-0" "$work/dropout-$ranks"
done

# Resume under another number of ranks: 2 ranks write a checkpoint after epoch 2 of 4; 1 and
# 3 ranks finish the run. Each must end where an uninterrupted 2-rank run ends.
resume=("$root/models/peaks_mlp.onnx" --x "$work/x.npy" --y "$work/y.npy" --loss mse --optimizer momentum
        --lr 0.02 --batch-size 64 --seed 3)
run resume-straight 2 "${resume[@]}" --epochs 4
run resume-first 2 "${resume[@]}" --epochs 2 --checkpoint-dir "$work/ckpt"
for ranks in 0 3; do
  cp -r "$work/ckpt" "$work/ckpt-$ranks"
  run "resume-$ranks" "$ranks" "${resume[@]}" --epochs 4 --checkpoint-dir "$work/ckpt-$ranks" --resume
  /usr/bin/python3 - "$work/resume-straight-2" "$work/resume-$ranks-$ranks" "$ranks" <<'PY'
import csv, sys, numpy as np, onnx
from onnx import numpy_helper
straight, resumed, ranks = sys.argv[1:4]
a = [float(r["loss"]) for r in csv.DictReader(open(straight + "/steps.csv"))]
b = [float(r["loss"]) for r in csv.DictReader(open(resumed + "/steps.csv"))]
a = np.array(a[len(a) - len(b):])  # the resumed run logs the epochs after the checkpoint
rel = np.abs(a - np.array(b)) / np.abs(a)
assert len(b) > 0 and rel.max() <= 1e-5, f"FAIL resume under {ranks} ranks: {rel.max():.2e}"
wa = {t.name: numpy_helper.to_array(t) for t in onnx.load(straight + "/model.onnx").graph.initializer}
wb = {t.name: numpy_helper.to_array(t) for t in onnx.load(resumed + "/model.onnx").graph.initializer}
worst = max(np.abs(wa[k].astype(np.float64) - wb[k]).max() / max(np.abs(wa[k]).max(), 1e-6) for k in wa)
assert worst <= 1e-4, f"FAIL resume under {ranks} ranks: weights differ by {worst:.2e}"
where = "one process" if ranks == "0" else f"{ranks} ranks"
print(f"PASS a 2-rank checkpoint resumed by {where}: {len(b)} steps within {rel.max():.1e}, weights within {worst:.1e}")
PY
done

# Faults: a long run with a checkpoint per epoch; rank 1 is killed or stopped once it runs.
# fault NAME SIGNAL: the job must end within 30 s, saying which rank and which step.
fault() {
  local name=$1 signal=$2 out=$work/fault-$1
  mkdir -p "$out"
  TANDEM_DISTRIBUTED_TIMEOUT=5 "${mpi[@]}" -x TANDEM_DISTRIBUTED_TIMEOUT -n 2 "$tandem" train "${resume[@]}" \
    --epochs 100000 --threads 1 --distributed --checkpoint-dir "$out/ckpt" >"$out/log" 2>&1 &
  local job=$!
  local rank1=""
  for _ in $(seq 100); do  # until rank 1 runs and a checkpoint exists
    for p in $(pgrep -f "tandem train.*fault-$name" || true); do
      if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1; then rank1=$p; fi
    done
    [ -n "$rank1" ] && [ -f "$out/ckpt/checkpoint.tdm" ] && break
    sleep 0.1
  done
  [ -n "$rank1" ] || { kill $job; echo "FAIL $name: rank 1 never started"; exit 1; }
  local start=$SECONDS
  kill "-$signal" "$rank1"
  local ended=0
  for _ in $(seq 300); do kill -0 $job 2>/dev/null || { ended=1; break; }; sleep 0.1; done
  if [ $ended = 0 ]; then kill -9 $job; pkill -9 -f "tandem train.*fault-$name" || true; echo "FAIL $name: the job still runs after 30 s"; exit 1; fi
  if wait $job; then echo "FAIL $name: the job ended with status 0"; exit 1; fi
  grep -Eq "rank [01]: .* at step [0-9]+ \(epoch [0-9]+\)" "$out/log" || { cat "$out/log"; echo "FAIL $name: no line naming the rank and step"; exit 1; }
  # The checkpoint left behind resumes (one process, one more epoch).
  local epoch
  epoch=$(/usr/bin/python3 -c "import onnx, sys; print({p.key: p.value for p in onnx.load(sys.argv[1]).metadata_props}['epoch'])" \
          "$out/ckpt/checkpoint.tdm")
  "$tandem" train "${resume[@]}" --epochs $((epoch + 1)) --checkpoint-dir "$out/ckpt" --resume --threads 1 \
    >"$out/resume.log" 2>&1 || { cat "$out/resume.log"; echo "FAIL $name: the checkpoint left behind does not resume"; exit 1; }
  grep -q "resumed from" "$out/resume.log" || { cat "$out/resume.log"; echo "FAIL $name: not resumed"; exit 1; }
  echo "PASS $name: the job ended $((SECONDS - start)) s after rank 1 was ${name}: $(grep -Em1 'rank [01]: .* at step' "$out/log")"
}
fault killed KILL
fault stopped STOP

# The Python module: each rank steps on a batch of its own (distributed="mpi").
export PYTHONPATH=$root/python TANDEM_LIBRARY=${TANDEM_LIBRARY:-$(dirname "$tandem")/libtandem.so}
/usr/bin/python3 "$root/tests/python/data_parallel_api.py" "$work/api-1.json"
for ranks in 2 3; do
  "${mpi[@]}" -n "$ranks" -x PYTHONPATH -x TANDEM_LIBRARY /usr/bin/python3 "$root/tests/python/data_parallel_api.py" \
    "$work/api-$ranks.json" mpi >"$work/api-$ranks.log" 2>&1 || { cat "$work/api-$ranks.log"; exit 1; }
  /usr/bin/python3 - "$work/api-1.json" "$work/api-$ranks.json" <<'PY'
import json, sys, numpy as np
a, b = (json.load(open(p)) for p in sys.argv[1:3])
la, lb = np.array(a["losses"]), np.array(b["losses"])
rel = np.abs(la - lb) / np.abs(la)
ev = abs(a["eval"][0] - b["eval"][0]) / abs(a["eval"][0])
assert b["ranks"] > 1 and rel.max() <= 1e-5 and ev <= 1e-5, f"FAIL Python API, {b['ranks']} ranks: {rel.max():.2e}, eval {ev:.2e}"
print(f"PASS Python API, {b['ranks']} ranks: 10 steps within {rel.max():.1e} of one process, eval_step loss within {ev:.1e}")
PY
done

# Refusals that say how to launch.
if "$tandem" train "${peaks[@]}" --epochs 1 --distributed >"$work/nolauncher.log" 2>&1; then
  echo "FAIL: --distributed without a launcher trained"; exit 1
fi
grep -q "mpirun -n K" "$work/nolauncher.log" || { cat "$work/nolauncher.log"; echo "FAIL: no launch hint"; exit 1; }
if "${mpi[@]}" -n 2 "$tandem" train "${peaks[@]}" --epochs 1 >"$work/nodistributed.log" 2>&1; then
  echo "FAIL: two processes without --distributed trained"; exit 1
fi
grep -q "add --distributed" "$work/nodistributed.log" || { cat "$work/nodistributed.log"; echo "FAIL: no hint"; exit 1; }
echo "PASS refusals: --distributed without a launcher, and 2 processes without --distributed"
