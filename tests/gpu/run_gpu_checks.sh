#!/usr/bin/env bash
# Every GPU check of the CUDA provider in one command, sized for the short time a GPU
# machine is lent (tests/gpu/README.md has the prepared command). From the repository:
#
#   bash tests/gpu/run_gpu_checks.sh [--quick|--full] [--deadline S] [--steps REGEX] [--dry-run] DIR OUT_DIR
#   bash tests/gpu/run_gpu_checks.sh --plan [--quick|--full]      (the steps and their limits)
#
# DIR is an unpacked pack_gpu_checks.sh pack (bin/ lib/ onnx/) or a build tree made
# on the GPU machine. Every result goes into OUT_DIR as it is produced, so a run killed at
# its limit keeps all it measured (7 files at most, within what the device tool brings back):
#   gpu-checks.md    a row per step as it ends (pass, FAIL, skipped, not run; seconds; limit),
#                    then the libraries loaded and a summary
#   gpu-checks.log   every step's output;   cuda_tests.xml   the CUDA tests' gtest report
#   onnx_suite.log   the ONNX suite, --device cuda;   losses.csv   run,device,step,loss
#   profile_fashion_cnn.svg, gpu_bench.md    the optional steps' outputs
#
# --quick (the default; deadline 420 s), in value order: preflight (the GPU, the CUDA
# libraries loaded and their versions, ldd of the plugin, one node run on the GPU: if it
# fails, why, and nothing else runs); the ONNX node and simple suites with --device cuda
# (in the background from here on); the CUDA tests; GPU-vs-CPU training parity (peaks MLP,
# Fashion CNN with shuffled batches gathered on the device); tf32; the 3-100-3 step from a
# CUDA Graph vs launched; DLPack with PyTorch CUDA tensors; if time is left, one batch
# sweep (profile --compare cpu,cuda) and one round of gpu_bench.py.
# --full (deadline 1800 s): the same, and the Fashion CNN's parity without shuffling, its
# CUDA Graph check at batch 32, profile sweeps and --train --compare cpu,cuda,auto of three
# models, and gpu_bench.py's three rounds.
# --deadline S: a step whose limit exceeds the time left is recorded as skipped, not
# started, so no step is killed by the deadline. --steps REGEX: only the steps whose title
# matches (and the preflight), e.g. to rerun the failed ones.
# --dry-run: for testing this script without a GPU (tests/gpu/dry_run_test.sh): the same
# steps and command lines, TANDEM_REQUIRE_GPU unset so `--device cuda` falls back to the
# CPU, the GPU-only assertions logged as skipped; nvidia-smi is whatever is on PATH.
# $PYTHON (default python3: on the GPU machine the one with PyTorch) runs the Python steps.
# Exit status: 0 every step passed, 1 a step failed, 2 none failed but some were skipped,
# 77 no GPU here (not a dry run), 64 bad arguments.
set -uo pipefail
checks_dir=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$checks_dir/../.." && pwd)
usage() { sed -n '5,6s/^# \{0,3\}//p' "$0" >&2; exit 64; }

mode=quick dry=0 plan_only=0 deadline="" only=""
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --quick | --full) mode=${1#--} ;;
    --dry-run) dry=1 ;;
    --plan) plan_only=1 ;;
    --deadline) deadline=${2:?--deadline needs seconds}; shift ;;
    --steps) only=${2:?--steps needs a regular expression}; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d;s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run_gpu_checks: unknown option $1" >&2; usage ;;
    *) args+=("$1") ;;
  esac
  shift
done
[ -n "$deadline" ] || deadline=$([ $mode = quick ] && echo 420 || echo 1800)
[[ $deadline =~ ^[0-9]+$ ]] || { echo "run_gpu_checks: --deadline takes whole seconds, not '$deadline'" >&2; exit 64; }

# ---- the plan: every step, in order, with its limit in seconds --------------------------
# The limits of the quick mode's steps that must run add up to less than its deadline, so
# each of them starts even if every one before it takes its whole limit.
# step TITLE LIMIT FUNCTION ARGS...   (FUNCTION of gpu_check_steps.sh)
# background TITLE LIMIT FUNCTION ARGS...; collect_background   (one step at a time)
plan() {
  step "preflight: GPU, libraries, one node on the GPU" 45 preflight
  background "ONNX node + simple suites, --device cuda" 180 onnx_suite
  step "CUDA tests (tests/cuda, none may skip)" 150 cuda_tests
  step "training parity GPU vs CPU: peaks MLP" 30 parity peaks peaks_mlp peaks_x peaks_y mse 1e-4 "" --epochs 2 \
    --no-shuffle
  [ $mode = full ] && step "training parity GPU vs CPU: Fashion CNN" 45 parity fashion fashion_cnn img_x img_y \
    cross_entropy 1e-4 "" --epochs 2 --no-shuffle
  # Shuffled: on the GPU the batches are gathered on the device (training/resident_batches.h).
  step "training parity GPU vs CPU: Fashion CNN, shuffled batches" 45 parity fashion_shuffled fashion_cnn \
    img_x img_y cross_entropy 1e-4 "" --epochs 2 --seed 3
  # tf32's 10-bit mantissas in the GPU's products keep the losses within 1e-2 of float32's.
  step "tf32: Fashion CNN on the GPU vs float32 on the CPU" 30 parity fashion_tf32 fashion_cnn img_x img_y \
    cross_entropy 1e-2 "--precision tf32" --epochs 1 --no-shuffle
  step "CUDA Graph vs launches: 3-100-3 step, batch 1" 45 graph_vs_launch ode ode_mlp ode_x ode_y mse 1
  [ $mode = full ] && step "CUDA Graph vs launches: Fashion CNN, batch 32" 45 graph_vs_launch fashion_graph \
    fashion_cnn img_x img_y cross_entropy 32
  step "DLPack with PyTorch CUDA tensors" 60 dlpack
  collect_background
  if [ $mode = quick ]; then
    step "(if time is left) profile --compare cpu,cuda: Fashion CNN batch sweep" 60 profile_sweep fashion_cnn \
      "$OUT/profile_fashion_cnn.svg"
    step "(if time is left) gpu_bench.py, one round" 150 gpu_bench 1 --peaks-epochs 500 --cifar-steps 20
  else
    local m
    for m in peaks_mlp ode_mlp fashion_cnn; do
      step "profile --compare cpu,cuda: $m" 120 profile_sweep $m \
        "$([ $m = fashion_cnn ] && echo "$OUT/profile_fashion_cnn.svg" || echo "$WORK/$m.svg")"
      step "profile --train --compare cpu,cuda,auto: $m" 120 profile_train $m
    done
    step "gpu_bench.py against PyTorch CUDA, 3 rounds" 400 gpu_bench 3
  fi
}

# Whether --steps selects the step TITLE running FUNCTION (the preflight always runs).
selected() { [[ -z $only || $1 =~ $only || $2 = preflight ]]; }

if [ $plan_only = 1 ]; then
  total=0 OUT=OUT_DIR WORK=WORK
  step() {
    selected "$1" "$3" || return 0
    echo "  ${2}s  $1"
    [[ $1 == "(if time is left)"* ]] || total=$((total + $2))
  }
  background() { selected "$1" "$3" && echo "  ${2}s  $1 (in the background)"; }
  collect_background() { :; }
  echo "run_gpu_checks --$mode: deadline ${deadline}s; limits in order:"
  plan
  echo "  ${total}s in all for the steps that must run (in the foreground)"
  exit 0
fi
[ ${#args[@]} -eq 2 ] || usage
dir=$(cd "${args[0]}" 2>/dev/null && pwd) || { echo "run_gpu_checks: no folder ${args[0]}" >&2; exit 64; }
mkdir -p "${args[1]}" && OUT=$(cd "${args[1]}" && pwd) || exit 64
if [ $dry = 0 ] && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "run_gpu_checks: no NVIDIA GPU here (nvidia-smi finds none): nothing to check"
  exit 77
fi

# ---- what runs, and the library path: pip's CUDA libraries (PyTorch's) first ------------
export ROOT=$root CHECKS_DIR=$checks_dir OUT DRY_RUN=$dry PYTHON=${PYTHON:-python3}
WORK=$(mktemp -d) && export WORK
if [ -x "$dir/bin/tandem" ]; then  # a pack
  export TANDEM=$dir/bin/tandem CUDA_TESTS=$dir/bin/tandem_cuda_tests LIBTANDEM=$dir/lib/libtandem.so \
    PLUGIN=$dir/lib/libtandem_cuda.so ONNX_DIR=$dir/onnx TANDEM_PLUGIN_PATH=$dir/lib
  bundle_lib=$dir/lib
else  # a build tree
  export TANDEM=$dir/tandem CUDA_TESTS=$dir/tests/tandem_cuda_tests LIBTANDEM=$dir/libtandem.so \
    PLUGIN=$dir/libtandem_cuda.so ONNX_DIR=/usr/share/libonnx-testdata/data
  bundle_lib=""
fi
pip_cuda=$("$PYTHON" - 2>&1 <<'PY'
import glob, os, sys
dirs = []
for p in sys.path:
    for d in sorted(glob.glob(os.path.join(p, "nvidia", "*", "lib"))) if p else []:
        if d not in dirs:
            dirs.append(d)
print(":".join(dirs))
PY
) || { echo "run_gpu_checks: $PYTHON could not list pip's CUDA libraries: $pip_cuda" >&2; pip_cuda=""; }
system_cuda=""
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && system_cuda=$system_cuda:$d
done
LD_LIBRARY_PATH=$(echo "$bundle_lib:$pip_cuda$system_cuda:${LD_LIBRARY_PATH:-}" | tr -s ':' | sed 's/^://;s/:$//')
export LD_LIBRARY_PATH MODELS=$root/models TANDEM_MODELS_DIR=$root/models
if [ $dry = 0 ]; then export TANDEM_REQUIRE_GPU=1; else unset TANDEM_REQUIRE_GPU; fi

# ---- the results file, row by row --------------------------------------------------------
md=$OUT/gpu-checks.md log=$OUT/gpu-checks.log
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
: >"$log"
{
  echo "# GPU checks (--$mode$([ $dry = 1 ] && echo ', DRY RUN: no GPU, --device cuda falls back to the CPU')), $(date +%F), ${gpu:-no GPU}"
  echo
  echo "driver ${driver:-none}; host CPU:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-); deadline ${deadline}s"
  echo
  echo "library path: $LD_LIBRARY_PATH"
  echo
  echo "| step | result | seconds | limit |"
  echo "|---|---|---|---|"
} >"$md"
passed=0 failed=0 skipped=0 stop="" current="" bg_pid="" start=$SECONDS
"$PYTHON" "$checks_dir/make_check_data.py" "$WORK" >>"$log" 2>&1 ||
  echo "the training steps' data could not be written (see above); those steps will fail" | tee -a "$log"

row() {  # row TITLE VERDICT SECONDS LIMIT
  echo "| $1 | $2 | $3 | $4 |" >>"$md"
  echo "   $2" | tee -a "$log"
  case $2 in pass) passed=$((passed + 1)) ;; FAIL*) failed=$((failed + 1)) ;; *) skipped=$((skipped + 1)) ;; esac
}
verdict() {  # verdict EXIT_STATUS LIMIT
  case $1 in
    0) echo pass ;;
    124 | 137) echo "FAIL (over its ${2}s limit)" ;;
    126 | 127) echo "FAIL (exit $1: a command was not found or not executable)" ;;
    *) echo "FAIL (exit $1)" ;;
  esac
}
# Whether TITLE runs now; else its row says why not.
may_start() {  # may_start TITLE LIMIT FUNCTION
  local left=$((deadline - (SECONDS - start)))
  selected "$1" "$3" || return 1
  if [ -n "$stop" ]; then row "$1" "not run ($stop)" 0 "$2"; return 1; fi
  if [ "$2" -gt $left ]; then row "$1" "skipped (needs ${2}s, ${left}s left before the deadline)" 0 "$2"; return 1; fi
}
step() {
  local title=$1 limit=$2 t0=$SECONDS rc
  shift 2
  may_start "$title" "$limit" "$1" || return 0
  current=$title
  echo "== $title (limit ${limit}s)" | tee -a "$log"
  timeout -k 10 "$limit" bash "$checks_dir/gpu_check_steps.sh" "$@" 2>&1 | tee -a "$log" >"$WORK/step.out"
  rc=${PIPESTATUS[0]}
  row "$title" "$(verdict $rc "$limit")" $((SECONDS - t0)) "$limit"
  [ $rc -eq 0 ] || { echo "- $title:"; tail -n 8 "$WORK/step.out" | sed 's/^/      /'; } >>"$WORK/failures.txt"
  [ "$1" = preflight ] && [ $rc -ne 0 ] && stop="the preflight failed"
  current=""
  return 0
}
background() {
  bg_title=$1 bg_limit=$2 bg_t0=$SECONDS
  shift 2
  may_start "$bg_title" "$bg_limit" "$1" || { bg_title=""; return 0; }
  echo "== $bg_title (limit ${bg_limit}s, in the background: its output is in onnx_suite.log)" | tee -a "$log"
  timeout -k 10 "$bg_limit" bash "$checks_dir/gpu_check_steps.sh" "$@" >"$OUT/onnx_suite.log" 2>&1 &
  bg_pid=$!
}
collect_background() {
  [ -n "$bg_pid" ] || return 0
  local rc
  echo "== waiting for: $bg_title" | tee -a "$log"
  wait "$bg_pid"
  rc=$?
  bg_pid=""
  grep -E 'passed, .* failed|^nodes run per provider' "$OUT/onnx_suite.log" | tee -a "$log"
  row "$bg_title" "$(verdict $rc "$bg_limit")" $((SECONDS - bg_t0)) "$bg_limit"
}
finish() {
  {
    [ -n "$current" ] && echo "| $current | STOPPED: the run was killed during this step | | |"
    [ -n "$bg_pid" ] && kill -- "$bg_pid" 2>/dev/null && echo "| $bg_title | STOPPED: the run was killed meanwhile | | |"
    echo
    echo "$passed passed, $failed failed, $skipped skipped or not run, in $((SECONDS - start))s."
    if [ -s "$WORK/failures.txt" ]; then
      echo
      echo "The last lines of each failed step (all of it in gpu-checks.log):"
      cat "$WORK/failures.txt"
    fi
    if [ -s "$WORK/libraries.txt" ]; then
      echo
      echo "CUDA libraries loaded (the smoke run) and NCCL, with the versions they report:"
      sed 's/^/    /' "$WORK/libraries.txt"
    fi
    echo
    echo "Highlights of gpu-checks.log:"
    grep -E '^\[  (PASSED|SKIPPED) +\] [0-9]+ test|^\[  FAILED  \] [A-Z]|passed, .* failed|^nodes run per provider|crossover|max relative difference|^(replayed|launched): |^(PASS|FAIL)  |^dry run: ' "$log" | sed 's/^/    /'
  } >>"$md"
  rm -rf "$WORK"
}
trap 'finish; exit 143' TERM INT

plan
finish
trap - TERM INT
echo "wrote $md and $log: $passed passed, $failed failed, $skipped skipped or not run"
[ $failed -gt 0 ] && exit 1
[ $skipped -gt 0 ] && exit 2
exit 0
