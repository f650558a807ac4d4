#!/usr/bin/env bash
# The GPU checks' scripts tested without a GPU, as they travel to a GPU machine: the
# repository's tracked and untracked-but-not-ignored files (what the device tool copies)
# into a scratch folder, packed from BUILD_DIR by that copy's pack_gpu_checks.sh, unpacked,
# and run_gpu_checks.sh run from it against a stand-in nvidia-smi:
#   1. --quick --dry-run: every step of the plan runs and passes (no exit 127, no missing
#      file; the GPU-only assertions logged as skipped), results and CSVs in OUT_DIR;
#   2. a short --deadline: later steps are recorded as skipped, none is killed, exit 2;
#   3. killed (SIGKILL) after its first step: the rows written so far stay in OUT_DIR;
#   4. not a dry run, and no GPU behind the stand-in: the preflight fails saying why, no
#      other step starts, exit 1;
#   5. a planted broken `import torch` is a failure showing the import's error, and pip's
#      CUDA library folders come first on the library path.
# usage: dry_run_test.sh BUILD_DIR      (exit 77, a skip, outside a git checkout)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: dry_run_test.sh BUILD_DIR}" && pwd)
git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# row_count FILE PATTERN: the results table's rows whose result matches PATTERN.
row_count() { grep -cE "^\| [^|]+ \| $2" "$1"; }

tree=$tmp/tree
mkdir -p "$tree"
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done | tar --null -T - -cf -) | tar -C "$tree" -xf -
BUILD_DIR=$build XZ_OPT=-0 bash "$tree/tests/gpu/pack_gpu_checks.sh" "$tmp/pack" || { echo "FAIL: the pack"; exit 1; }
tar -C "$tmp" -xJf "$tmp/pack/gpu-checks.tar.xz"
pack=$tmp/gpu-checks

mkdir -p "$tmp/bin"
cat >"$tmp/bin/nvidia-smi" <<'SH'
#!/bin/sh
# A stand-in for nvidia-smi: one GPU with made-up properties.
case "$*" in
  *-L*) echo "GPU 0: Stand-in GPU (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
  *query-gpu=name,*) printf 'name, driver_version, memory.total [MiB], compute_cap\nStand-in GPU, 0.0, 0 MiB, 0.0\n' ;;
  *query-gpu=name*) echo "Stand-in GPU" ;;
  *query-gpu=driver_version*) echo "0.0" ;;
  *) echo "Stand-in GPU" ;;
esac
SH
chmod +x "$tmp/bin/nvidia-smi"
export PATH=$tmp/bin:$PATH
export PYTHON=/usr/bin/python3  # Debian's, with NumPy and PyTorch (tools/setup.sh)
checks="bash $tree/tests/gpu/run_gpu_checks.sh"

echo "== 1. the quick mode, dry run"
plan=$($checks --plan --quick)
must=$(sed -n 's/^  \([0-9]*\)s in all for the steps that must run.*/\1/p' <<<"$plan")
deadline=$(sed -n 's/.*deadline \([0-9]*\)s.*/\1/p' <<<"$plan")
[[ -n $must && $must -le $deadline ]] || fail "the quick mode's steps that must run take up to ${must}s, over its ${deadline}s deadline"
out=$tmp/out1
$checks --quick --dry-run --deadline 3000 "$pack" "$out"  # case 2 tests the deadline
rc=$?
[ $rc -eq 0 ] || fail "the quick dry run exited $rc"
md=$out/gpu-checks.md
if [ -f "$md" ]; then
  cat "$md"
  planned=$(grep -c '^  [0-9]*s  ' <<<"$plan")
  [ "$(row_count "$md" pass)" -eq "$planned" ] || fail "$(row_count "$md" pass) steps passed, the plan has $planned"
  [ "$(row_count "$md" '(FAIL|skipped|not run|STOPPED)')" -eq 0 ] || fail "a step did not pass"
  for f in gpu-checks.log cuda_tests.xml onnx_suite.log losses.csv profile_fashion_cnn.svg; do
    [ -s "$out/$f" ] || fail "OUT_DIR has no $f"
  done
  grep -E 'command not found|No such file|unbound variable' "$out/gpu-checks.log" && fail "the log shows a script fault"
  for run in peaks fashion_shuffled fashion_tf32 ode; do
    grep -q "^$run,cuda" "$out/losses.csv" || fail "losses.csv has no GPU-side losses of $run"
  done
  [ "$(ls "$out" | wc -l)" -le 8 ] || fail "more files in OUT_DIR than the device tool brings back (8)"
else
  fail "no $md"
fi

echo "== 2. a deadline too short for the plan"
out=$tmp/out2
$checks --quick --dry-run --deadline 70 "$pack" "$out" >/dev/null
rc=$?
cat "$out/gpu-checks.md"
[ $rc -eq 2 ] || fail "exit $rc with steps skipped for the deadline (expected 2)"
grep -q '^| preflight.* | pass |' "$out/gpu-checks.md" || fail "the preflight did not run"
[ "$(row_count "$out/gpu-checks.md" 'skipped \(needs')" -ge 1 ] || fail "no step was skipped for the deadline"
[ "$(row_count "$out/gpu-checks.md" 'FAIL')" -eq 0 ] || fail "a step failed or was killed"

echo "== 3. killed after its first step"
out=$tmp/out3
setsid bash "$tree/tests/gpu/run_gpu_checks.sh" --quick --dry-run "$pack" "$out" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 600); do  # until the first row is written (at most a minute)
  grep -q '^| preflight' "$out/gpu-checks.md" 2>/dev/null && break
  sleep 0.1
done
pkill -KILL -s "$pid"  # its whole session: the steps under `timeout` have process groups of their own
wait "$pid" 2>/dev/null
grep -q '^| preflight.* | pass |' "$out/gpu-checks.md" || fail "the preflight's row is not in OUT_DIR after the kill"
grep -q '^== preflight' "$out/gpu-checks.log" || fail "the log is not in OUT_DIR after the kill"

echo "== 4. not a dry run, no GPU behind nvidia-smi"
out=$tmp/out4
$checks --quick "$pack" "$out" >/dev/null
rc=$?
cat "$out/gpu-checks.md"
[ $rc -eq 1 ] || fail "exit $rc when the preflight fails (expected 1)"
grep -q '^| preflight.* | FAIL' "$out/gpu-checks.md" || fail "the preflight did not fail"
[ "$(row_count "$out/gpu-checks.md" 'not run \(the preflight failed\)')" -ge 5 ] || fail "steps ran after a failed preflight"
grep -q 'TANDEM_REQUIRE_GPU=1 and cuda is not available' "$out/gpu-checks.log" || fail "the log does not say why"
grep -q "the dynamic linker's search" "$out/gpu-checks.log" || fail "the log does not show the library search"

echo "== 5. a broken torch, and pip's CUDA libraries"
out=$tmp/out5
mkdir -p "$tmp/site/torch" "$tmp/site/nvidia/cu13/lib"
echo 'raise ImportError("planted: this torch is broken")' >"$tmp/site/torch/__init__.py"
PYTHONPATH=$tmp/site $checks --quick --dry-run --steps DLPack "$pack" "$out" >/dev/null
rc=$?
cat "$out/gpu-checks.md"
[ $rc -eq 1 ] || fail "exit $rc with a broken torch (expected 1)"
grep -q '^| DLPack.* | FAIL' "$out/gpu-checks.md" || fail "the DLPack step did not fail"
grep -q 'planted: this torch is broken' "$out/gpu-checks.log" || fail "the import's error is not in the log"
path=$(sed -n 's/^library path: //p' "$out/gpu-checks.md")
[[ $path == "$pack/lib:$tmp/site/nvidia/cu13/lib"* ]] || fail "pip's CUDA folder is not first after the pack's: $path"

if ((failures)); then
  echo "dry run test: $failures failure(s)"
  exit 1
fi
echo "dry run test: every case as expected"
