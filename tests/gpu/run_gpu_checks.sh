#!/usr/bin/env bash
# Every GPU check of the CUDA provider in one command (issue 28), meant for the short time a
# GPU machine is lent. From the repository root, with a bundle made by pack_gpu_checks.sh
# (or the build tree where Tandem was built on that machine):
#   bash tests/gpu/run_gpu_checks.sh BUNDLE_DIR [RESULTS_DIR]
# Without an NVIDIA GPU it says so in one line and exits 0. With one it runs, each step
# bounded in time and recorded whether it passes or not (a failing step does not stop the
# others), with TANDEM_REQUIRE_GPU=1 so that a plugin that cannot load fails instead of
# falling back to the CPU:
#   1. the CUDA tests against the CPU (tests/cuda; skips would be failures), the NCCL
#      all-reduce of data-parallel training on one rank among them (NCCL: the machine's
#      libnccl.so.2, e.g. PyTorch's nvidia/nccl/lib, which env.sh puts on the path);
#   2. the ONNX suite's node and simple tests with --device cuda (nodes per provider);
#   3. GPU-vs-CPU training parity: the same tandem train runs on each device, losses compared
#      (peaks MLP, Fashion CNN; shuffled batches gathered on the device); a --precision tf32 run;
#   4. tandem profile --compare cpu,cuda with the batch sweep and crossover per model;
#   5. --device auto against both devices on the same runs;
#   6. tools/bench/gpu_bench.py against PyTorch CUDA (when PyTorch sees the GPU);
#   7. DLPack with PyTorch CUDA tensors through the Python module (dlpack_cuda_check.py).
# It writes RESULTS_DIR/<date>-<gpu>.md (default bench/results) and a log beside it, and
# exits 1 when any step failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "run_gpu_checks: no NVIDIA GPU here (nvidia-smi finds none): nothing to check"
  exit 0
fi
bundle=${1:?usage: run_gpu_checks.sh BUNDLE_DIR [RESULTS_DIR]}
results=${2:-$root/bench/results}
if [ -f "$bundle/env.sh" ]; then
  # shellcheck disable=SC1091
  source "$bundle/env.sh"
  tandem=$bundle/bin/tandem cuda_tests=$bundle/bin/tandem_cuda_tests onnx=$bundle/onnx libtandem=$bundle/lib/libtandem.so
  export TANDEM_PLUGIN_PATH=$bundle/lib
else  # a build tree
  tandem=$bundle/tandem cuda_tests=$bundle/tests/tandem_cuda_tests onnx=/usr/share/libonnx-testdata/data
fi
export TANDEM_REQUIRE_GPU=1 TANDEM_SOURCE_DIR=$root
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
tag=$(date +%F)-$(echo "$gpu" | tr -cs 'A-Za-z0-9' '-' | sed 's/-$//')
mkdir -p "$results"
md=$results/$tag.md log=$results/$tag.log
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: >"$log"
failed=0
{
  echo "# GPU checks, $(date +%F), $gpu"
  echo
  echo "driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); host CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  echo
  echo "NCCL: $( (ldconfig -p; find ${LD_LIBRARY_PATH//:/ } -maxdepth 1 -name 'libnccl.so*' 2>/dev/null) | grep -m1 -o '/[^ ]*libnccl.so[.0-9]*' || echo 'none found (the data-parallel GPU tests will say so)')"
  echo
  echo "| step | result | seconds |"
  echo "|---|---|---|"
} >"$md"

# step NAME LIMIT_SECONDS COMMAND...: runs it, logs its output, adds a table row.
step() {
  local name=$1 limit=$2; shift 2
  echo "== $name" | tee -a "$log"
  local t0=$SECONDS rc
  timeout "$limit" "$@" >>"$log" 2>&1
  rc=$?
  local verdict=pass
  if [ $rc -eq 124 ]; then verdict="FAIL (over ${limit}s)"; elif [ $rc -ne 0 ]; then verdict="FAIL (exit $rc)"; fi
  [ "$verdict" = pass ] || failed=1
  echo "| $name | $verdict | $((SECONDS - t0)) |" >>"$md"
  echo "   $verdict" | tee -a "$log"
}

step "CUDA tests (tests/cuda, TANDEM_REQUIRE_GPU=1)" 300 "$cuda_tests" --gtest_output="xml:$work/cuda_tests.xml"
step "ONNX suite, --device cuda" 300 "$tandem" test-onnx --quiet --device cuda \
  --expected-failures "$root/tests/conformance/expected_failures.txt" "$onnx/node" "$onnx/simple"

# Training parity: the same data, seed and steps on each device; per-step losses compared.
python3 - "$work" <<'PY' >>"$log" 2>&1
import sys, numpy as np
rng = np.random.default_rng(7)
w = sys.argv[1]
np.save(f"{w}/peaks_x.npy", rng.standard_normal((4096, 2)).astype(np.float32))
np.save(f"{w}/peaks_y.npy", rng.standard_normal((4096, 1)).astype(np.float32))
np.save(f"{w}/img_x.npy", rng.standard_normal((512, 1, 28, 28)).astype(np.float32))
np.save(f"{w}/img_y.npy", rng.integers(0, 10, 512).astype(np.int64))
np.save(f"{w}/ode_x.npy", rng.standard_normal((2000, 3)).astype(np.float32))
np.save(f"{w}/ode_y.npy", rng.standard_normal((2000, 3)).astype(np.float32))
PY
parity() {  # parity NAME MODEL X Y LOSS [EXTRA FLAGS...]
  local name=$1 model=$2 x=$3 y=$4 loss=$5
  shift 5
  for d in cpu cuda; do
    "$tandem" train "$root/models/$model" --x "$work/$x" --y "$work/$y" --loss "$loss" --epochs 2 --batch-size 128 \
      --device "$d" --quiet --step-log "$work/$name-$d.csv" "$@" || return 1
  done
  python3 - "$work/$name-cpu.csv" "$work/$name-cuda.csv" <<'PY'
import csv, sys
a, b = ([float(r["loss"]) for r in csv.DictReader(open(f))] for f in sys.argv[1:3])
worst = max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a, b))
print(f"{len(a)} steps, max relative difference {worst:.2e} (limit 1e-4)")
sys.exit(0 if len(a) == len(b) and worst <= 1e-4 else 1)
PY
}
step "training parity GPU vs CPU: peaks MLP" 120 parity peaks peaks_mlp.onnx peaks_x.npy peaks_y.npy mse --no-shuffle
step "training parity GPU vs CPU: Fashion CNN" 120 parity fashion fashion_cnn.onnx img_x.npy img_y.npy cross_entropy \
  --no-shuffle
# Shuffled: on the GPU the batches are gathered on the device (training/resident_batches.h).
step "training parity GPU vs CPU: Fashion CNN, shuffled batches" 120 parity fashion_shuffled fashion_cnn.onnx \
  img_x.npy img_y.npy cross_entropy --seed 3
step "tandem train --precision tf32 runs: Fashion CNN" 120 "$tandem" train "$root/models/fashion_cnn.onnx" \
  --x "$work/img_x.npy" --y "$work/img_y.npy" --loss cross_entropy --epochs 1 --batch-size 128 --device cuda \
  --precision tf32

for m in peaks_mlp ode_mlp fashion_cnn; do
  step "profile --compare cpu,cuda: $m" 120 "$tandem" profile "$root/models/$m.onnx" --compare cpu,cuda \
    --batch-sizes 1,16,256,4096 --repeat 5 --chart "$work/$m.svg"
  step "profile --train --compare cpu,cuda,auto: $m" 120 "$tandem" profile "$root/models/$m.onnx" --train \
    --compare cpu,cuda,auto --batch-size 128 --repeat 5 \
    $([ "$m" = fashion_cnn ] && echo --loss cross_entropy)
done
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  step "gpu_bench.py against PyTorch CUDA" 400 python3 "$root/tools/bench/gpu_bench.py" --tandem "$tandem" \
    --rounds 3 --out "$work/gpu_bench.md"
  [ -f "$work/gpu_bench.md" ] && { echo; cat "$work/gpu_bench.md"; } >>"$md"
else
  echo "| gpu_bench.py | not run: PyTorch sees no GPU | 0 |" >>"$md"
fi
# CUDA Graphs: the same steps replayed and launched (losses equal), and the time per step.
graph_vs_launch() {  # graph_vs_launch NAME MODEL X Y LOSS BATCH
  local name=$1 model=$2 x=$3 y=$4 loss=$5 batch=$6
  for mode in replayed launched; do
    "$tandem" train "$root/models/$model" --x "$work/$x" --y "$work/$y" --loss "$loss" --epochs 1 \
      --batch-size "$batch" --device cuda --no-shuffle --step-log "$work/$name-$mode.csv" \
      $([ $mode = launched ] && echo --no-cuda-graph) >"$work/$name-$mode.out" || return 1
    echo "$mode: $(grep -E '^done:|^CUDA graph:' "$work/$name-$mode.out" | tr '\n' ' ')"
  done
  grep -q '^CUDA graph: .* runs replayed' "$work/$name-replayed.out" || { echo "the step was not replayed"; return 1; }
  python3 - "$work/$name-launched.csv" "$work/$name-replayed.csv" <<'PY'
import csv, sys
a, b = ([float(r["loss"]) for r in csv.DictReader(open(f))] for f in sys.argv[1:3])
worst = max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a, b))
print(f"{len(a)} steps, replayed vs launched: max relative difference {worst:.2e} (limit 1e-6)")
sys.exit(0 if len(a) == len(b) and worst <= 1e-6 else 1)
PY
}
step "CUDA Graph vs launches: 3-100-3 step, batch 1" 180 graph_vs_launch ode ode_mlp.onnx ode_x.npy ode_y.npy mse 1
step "CUDA Graph vs launches: Fashion CNN, batch 32" 180 graph_vs_launch fashion_graph fashion_cnn.onnx img_x.npy \
  img_y.npy cross_entropy 32
# DLPack with CUDA memory: PyTorch CUDA tensors in and out of the Python module.
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  step "DLPack with PyTorch CUDA tensors (python)" 180 env PYTHONPATH="$root/python" \
    TANDEM_LIBRARY="${libtandem:-$bundle/libtandem.so}" python3 "$root/tests/gpu/dlpack_cuda_check.py" \
    "$root/models/ode_mlp.onnx"
else
  echo "| DLPack with PyTorch CUDA tensors | not run: PyTorch sees no GPU | 0 |" >>"$md"
fi
{
  echo
  echo "Failing steps' output is in $(basename "$log")."
  grep -E '^\[  (PASSED|FAILED|SKIPPED) \]|passed, .* failed|^nodes run per provider|crossover|max relative difference|^(replayed|launched): ' "$log" | sed 's/^/    /'
} >>"$md"
echo "wrote $md and $log"
exit $failed
