#!/usr/bin/env bash
# The bodies of run_gpu_checks.sh's steps, one function each, run as
#   bash gpu_check_steps.sh FUNCTION ARGS...
# so that `timeout` can bound them (it runs programs, not shell functions). They read what
# run_gpu_checks.sh exports: TANDEM, CUDA_TESTS, LIBTANDEM, PLUGIN, ONNX_DIR, MODELS,
# CHECKS_DIR (this folder), ROOT (the repository), WORK (scratch), OUT (results), DRY_RUN,
# PYTHON.
# In a dry run (DRY_RUN=1, no GPU, TANDEM_REQUIRE_GPU unset) every command line runs as on
# the GPU, `--device cuda` falling back to the CPU; the assertions only a GPU can meet are
# named in the log as skipped.
set -uo pipefail

# The models the steps below train and profile (the CUDA tests name theirs in tests/cuda).
STEP_MODELS="peaks_mlp ode_mlp fashion_cnn"

dry() { [ "${DRY_RUN:-0}" = 1 ]; }
gpu_only() { echo "dry run: skipped the GPU-only assertion: $*"; }

# Every file the steps and the CUDA tests read, present before anything runs (models: the
# committed ones, as the repository travels).
inputs_present() {
  local missing=0 f m
  for f in "$TANDEM" "$CUDA_TESTS" "$LIBTANDEM" "$PLUGIN" "$ONNX_DIR/node/test_relu/model.onnx" "$ONNX_DIR/simple" \
    "$ROOT/tests/conformance/expected_failures.txt" "$ROOT/python/tandem/__init__.py" \
    "$ROOT/bench/gpu_bench.py" "$CHECKS_DIR/dlpack_cuda_check.py"; do
    [ -e "$f" ] || { echo "missing: $f"; missing=1; }
  done
  for m in $STEP_MODELS $(grep -ho 'ModelPath("[^"]*")' "$ROOT"/tests/cuda/*.cc | sed 's/ModelPath("\(.*\)")/\1/;s/\.onnx$//' | sort -u); do
    [ -f "$MODELS/$m.onnx" ] || { echo "missing: $MODELS/$m.onnx (a GPU check reads it; only committed models travel with the repository)"; missing=1; }
  done
  [ $missing = 0 ] && echo "every file the checks read is present (models in $MODELS)"
  return $missing
}

# The GPU, the libraries, and one node run on the GPU with TANDEM_REQUIRE_GPU=1. On
# failure it says why: the plugin's unresolved libraries and the dynamic linker's search.
preflight() {
  echo "-- GPU"
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1 || echo "(nvidia-smi failed)"
  echo "-- library path (LD_LIBRARY_PATH, in order)"
  tr ':' '\n' <<<"${LD_LIBRARY_PATH:-}" | sed 's/^/   /'
  echo "-- files"
  inputs_present || return 1
  echo "-- ldd $PLUGIN"
  local ldd_out
  ldd_out=$(ldd "$PLUGIN" 2>&1)
  echo "$ldd_out"
  echo "-- one-node smoke run: tandem run test_relu --device cuda"
  local trace=$WORK/ld-debug rc
  LD_DEBUG=libs LD_DEBUG_OUTPUT=$trace "$TANDEM" run "$ONNX_DIR/node/test_relu/model.onnx" --device cuda --repeat 3 \
    --profile >"$WORK/smoke.out" 2>&1
  rc=$?
  cat "$WORK/smoke.out"
  echo "-- CUDA libraries the smoke run loaded"
  "$PYTHON" "$CHECKS_DIR/cuda_library_versions.py" $(cat "$trace".* 2>/dev/null | sed -n 's/.*calling init: //p' |
    grep -E '/lib(cuda|cudart|cublas|cublasLt|cudnn[a-z_]*|nccl|nvrtc|nvJitLink)\.so' | sort -u) | tee "$WORK/libraries.txt"
  if [ $rc -ne 0 ]; then
    echo "-- the smoke run failed (exit $rc); why:"
    grep 'not found' <<<"$ldd_out" | sed 's/^/   unresolved by ldd: /'
    echo "   the dynamic linker's search for the CUDA plugin and CUDA's libraries (LD_DEBUG=libs):"
    cat "$trace".* 2>/dev/null | grep -E 'find library=|trying file=|cannot open|error' |
      grep -E 'tandem_cuda|cuda|cublas|cudnn|nccl' | tail -40 | sed 's/^/   /'
    return 1
  fi
  if dry; then
    gpu_only "the node ran on cuda (a 'device:' line and a profile row on cuda)"
    return 0
  fi
  grep -q '^device: ' "$WORK/smoke.out" && grep -Eq ' Relu +cuda +[0-9]' "$WORK/smoke.out" ||
    { echo "the smoke run passed but did not run its node on the GPU"; return 1; }
}

# The CUDA tests (tests/cuda): on the GPU a skipped test is a failure (TANDEM_REQUIRE_GPU=1).
cuda_tests() {
  "$CUDA_TESTS" --gtest_output="xml:$OUT/cuda_tests.xml" 2>&1 | tee "$WORK/cuda_tests.out"
  local rc=${PIPESTATUS[0]}
  [ $rc -eq 0 ] || return $rc
  if grep -q '^\[  SKIPPED \]' "$WORK/cuda_tests.out"; then
    dry && { gpu_only "no test skipped"; return 0; }
    echo "tests were skipped on the GPU machine"
    return 1
  fi
}

onnx_suite() {
  "$TANDEM" test-onnx --quiet --device cuda --expected-failures "$ROOT/tests/conformance/expected_failures.txt" \
    "$ONNX_DIR/node" "$ONNX_DIR/simple" | tee "$WORK/onnx_suite.out"
  local rc=${PIPESTATUS[0]}
  [ $rc -eq 0 ] || return $rc
  if dry; then
    gpu_only "nodes ran on cuda"
  else
    grep -Eq '^nodes run per provider:.* cuda=[1-9]' "$WORK/onnx_suite.out" || { echo "no node ran on cuda"; return 1; }
  fi
}

# Appends a --step-log CSV to OUT/losses.csv as rows run,device,step,loss.
keep_losses() {  # keep_losses RUN DEVICE FILE.csv
  [ -s "$OUT/losses.csv" ] || echo "run,device,step,loss" >"$OUT/losses.csv"
  tail -n +2 "$3" | sed "s/^/$1,$2,/" >>"$OUT/losses.csv"
}

# The same training run on each device (same data, seed and steps), per-step losses
# compared within LIMIT (relative). GPU_FLAGS (one word-split string, may be empty) go to
# the GPU run alone, e.g. "--precision tf32"; FLAGS to both.
parity() {  # parity NAME MODEL X Y LOSS LIMIT GPU_FLAGS [FLAGS...]
  local name=$1 model=$2 x=$3 y=$4 loss=$5 limit=$6 gpu_flags=$7 d
  shift 7
  for d in cpu cuda; do
    "$TANDEM" train "$MODELS/$model.onnx" --x "$WORK/$x.npy" --y "$WORK/$y.npy" --loss "$loss" --batch-size 128 \
      --device "$d" --quiet --step-log "$WORK/$name-$d.csv" $([ $d = cuda ] && echo "$gpu_flags") "$@" || return 1
    keep_losses "$name" "$d" "$WORK/$name-$d.csv"
  done
  "$PYTHON" "$CHECKS_DIR/compare_losses.py" "$WORK/$name-cpu.csv" "$WORK/$name-cuda.csv" "$limit" "$name, GPU vs CPU"
}

# The same steps replayed from a CUDA Graph and launched one by one: equal losses.
graph_vs_launch() {  # graph_vs_launch NAME MODEL X Y LOSS BATCH
  local name=$1 model=$2 x=$3 y=$4 loss=$5 batch=$6 mode
  for mode in replayed launched; do
    "$TANDEM" train "$MODELS/$model.onnx" --x "$WORK/$x.npy" --y "$WORK/$y.npy" --loss "$loss" --epochs 1 \
      --batch-size "$batch" --device cuda --no-shuffle --step-log "$WORK/$name-$mode.csv" \
      $([ $mode = launched ] && echo --no-cuda-graph) >"$WORK/$name-$mode.out" || { cat "$WORK/$name-$mode.out"; return 1; }
    echo "$mode: $(grep -E '^done:|^CUDA graph:' "$WORK/$name-$mode.out" | tr '\n' ' ')"
    keep_losses "$name" "cuda-$mode" "$WORK/$name-$mode.csv"
  done
  if dry; then
    gpu_only "the step was replayed from a CUDA Graph"
  else
    grep -Eq '^CUDA graph: [1-9][0-9]* of [0-9]+ runs replayed' "$WORK/$name-replayed.out" ||
      { echo "the step was not replayed"; return 1; }
  fi
  "$PYTHON" "$CHECKS_DIR/compare_losses.py" "$WORK/$name-launched.csv" "$WORK/$name-replayed.csv" 1e-6 \
    "$name, replayed vs launched"
}

# DLPack with PyTorch CUDA tensors; a dry run imports everything and runs a CPU session.
dlpack() {
  PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" TANDEM_LIBRARY="$LIBTANDEM" PYTHONUNBUFFERED=1 \
    "$PYTHON" "$CHECKS_DIR/dlpack_cuda_check.py" $(dry && echo --dry-run) "$MODELS/ode_mlp.onnx"
}

profile_sweep() {  # profile_sweep MODEL CHART: inference, CPU vs GPU, over batch sizes
  "$TANDEM" profile "$MODELS/$1.onnx" --compare cpu,cuda --batch-sizes 1,16,256,4096 --repeat 5 --chart "$2"
}

profile_train() {  # profile_train MODEL: a training step on cpu, cuda and auto
  "$TANDEM" profile "$MODELS/$1.onnx" --train --compare cpu,cuda,auto --batch-size 128 --repeat 5 \
    $([ "$1" = fashion_cnn ] && echo --loss cross_entropy)
}

gpu_bench() {  # gpu_bench ROUNDS [EXTRA FLAGS...]: Tandem CPU, Tandem GPU and PyTorch CUDA
  local rounds=$1
  shift
  PYTHONUNBUFFERED=1 "$PYTHON" "$ROOT/bench/gpu_bench.py" --tandem "$TANDEM" --models "$MODELS" \
    --rounds "$rounds" --out "$OUT/gpu_bench.md" "$@"
}

"$@"
