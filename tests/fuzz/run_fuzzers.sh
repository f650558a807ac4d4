#!/usr/bin/env bash
# Runs every fuzz target (built with -DTANDEM_FUZZ=ON, see tests/sanitize.sh) for RUNS
# executions, starting from seed corpora built here: the reference models and the ONNX
# suite's node models (import, run), .npy files of every dtype (npy), checkpoints
# written by `tandem train` (checkpoint), small CSVs (csv), IDX files plain and gzipped
# (idx) and command lines with their words split by NULs (flags). A crash fails the script; libFuzzer leaves the
# input in BUILD/fuzz_artifacts/<target>/ — copy it to tests/fuzz/regressions/<target>/,
# fix the bug, and FuzzRegressions.EveryRecordedCrashNowReturns re-runs it from then on.
# FUZZ_SEED (default 1) makes a run repeatable — CI must not fail on the luck of a random
# seed; pass FUZZ_SEED=0 for a fresh random seed when hunting.
# usage: tests/fuzz/run_fuzzers.sh BUILD_DIR RUNS [TARGET...]   (default: all seven)
set -euo pipefail
build=$1
runs=$2
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(import run npy checkpoint csv idx flags)
root=$(cd "$(dirname "$0")/../.." && pwd)
seeds=$build/fuzz_seeds
rm -rf "$seeds" && mkdir -p "$seeds"/{models,npy,checkpoint,csv,idx,flags}

# Models: the ONNX suite's node tests (small single-op models) and the small reference models.
for m in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
  cp "$m" "$seeds/models/$(basename "$(dirname "$m")").onnx"
done
find "$root/models" -name '*.onnx' -size -64k -exec cp {} "$seeds/models/" \;
/usr/bin/python3 - "$seeds/npy" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(0)
for t in ["<f4", "<f8", "<f2", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "|b1"]:
    for shape in [(), (3,), (2, 3), (1, 2, 2, 2)]:
        np.save(f"{d}/{t[1:]}_{len(shape)}.npy", (rng.uniform(-5, 5, shape)).astype(np.dtype(t)))
PY
/usr/bin/python3 - "$seeds" <<'PY'
import gzip, struct, sys
d = sys.argv[1]
open(f"{d}/csv/header.csv", "w").write("a,b,label\n0.5,-1e-3,1\n2,3,0\n")
open(f"{d}/csv/plain.csv", "w").write("1,2,3\n4,5,6\n\n7,8,9\n")
images = struct.pack(">BBBBIII", 0, 0, 8, 3, 2, 2, 2) + bytes(range(8))
open(f"{d}/idx/images.idx", "wb").write(images)
open(f"{d}/idx/images.idx.gz", "wb").write(gzip.compress(images))
open(f"{d}/idx/labels.idx.gz", "wb").write(gzip.compress(struct.pack(">BBBBI", 0, 0, 8, 1, 2) + bytes([3, 7])))
for i, line in enumerate(["--batch-size\x0032\x00--lr=1e-3\x00m.onnx", "--epochs\x000\x00--val-split\x00nan",
                          "--input\x00x=a.npy\x00--input\x00y=b.npy\x00--quiet", "--max-memory\x0064M\x00--help"]):
    open(f"{d}/flags/{i}.argv", "w").write(line)
PY
x=$build/fuzz_seeds/peaks_x.npy
/usr/bin/python3 -c "import numpy as np; np.save('$x', np.ones((8, 2), np.float32)); np.save('${x%_x.npy}_y.npy', np.ones((8, 1), np.float32))"
for opt in sgd adam; do
  "$build/tandem" train "$root/models/peaks_mlp.onnx" --x "$x" --y "${x%_x.npy}_y.npy" --loss mse \
    --optimizer $opt --epochs 1 --batch-size 8 --threads 1 --quiet \
    --checkpoint-dir "$build/fuzz_seeds/ckpt_$opt" >/dev/null
  cp "$build/fuzz_seeds/ckpt_$opt/checkpoint.tdm" "$seeds/checkpoint/peaks_$opt.tdm"
done

declare -A corpus=([import]=models [run]=models [npy]=npy [checkpoint]=checkpoint [csv]=csv [idx]=idx [flags]=flags)
for t in "${targets[@]}"; do
  work=$build/fuzz_corpus/$t
  artifacts=$build/fuzz_artifacts/$t/
  mkdir -p "$work" "$artifacts"
  echo "[fuzz] $t: $runs executions from $(ls "$seeds/${corpus[$t]}" | wc -l) seeds"
  start=$(date +%s)
  if ! "$build/tests/fuzz/fuzz_$t" -runs="$runs" -seed="${FUZZ_SEED:-1}" -timeout=30 -rss_limit_mb=2560 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$artifacts" "$work" "$seeds/${corpus[$t]}" \
       >"$build/fuzz_$t.log" 2>&1; then
    tail -40 "$build/fuzz_$t.log"
    echo "[fuzz] $t FAILED: the input is in $artifacts (copy it to tests/fuzz/regressions/$t/)"
    exit 1
  fi
  echo "[fuzz] $t: $(grep -E '^stat::number_of_executed_units' "$build/fuzz_$t.log" | awk '{print $2}') executions, 0 crashes, $(( $(date +%s) - start )) s"
done
