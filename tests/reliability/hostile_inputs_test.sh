#!/usr/bin/env bash
# Hostile files and flags (issue 71's corpus, by class): nothing written outside the
# folder the user named, nothing read from what is not a regular file, no number read
# partly, no checkpoint or archive trusted past its header, every flag checked before work
# starts. Each case must end in its expected exit status with one 'error:' line naming what
# is wrong, or in the right result; never a hang (each runs under `timeout`), a signal or
# memory past a 4 GiB address-space limit (TANDEM_TEST_VMEM_KB; sanitize.sh lifts it).
# usage: tests/reliability/hostile_inputs_test.sh path/to/tandem WORK_DIR
set -uo pipefail
tandem=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
/usr/bin/python3 "$here/make_hostile_inputs.py" "$work" >/dev/null || { echo "FAIL: input generation"; exit 1; }
peaks=$here/../../models/peaks_mlp.onnx
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# expect NAME STATUS SUBSTRING ARGS...: `tandem ARGS` must exit STATUS with one stderr line
# starting "error:" that holds SUBSTRING (expect_error.sh), within 4 GiB and 60 s.
source "$here/expect_error.sh"
VMEM_KB=${TANDEM_TEST_VMEM_KB:-4194304} TIMEOUT_S=60
expect() {
  local name=$1 status=$2 want=$3; shift 3
  expect_error "$name" "$status" "$want" "$tandem" "$@"
}

# --- Paths: a model's output names stay inside --output-dir.
out=$work/out/a/b
if timeout 60 "$tandem" run "$work/climbing_output.onnx" --repeat 0 --output-dir "$out" >"$work/climb.out" 2>&1; then
  outside=$(find "$work/out" -name '*.npy' ! -path "$out/*")
  inside=$(cd "$out" && ls -A | LC_ALL=C sort | paste -sd " " -)
  if [ -n "$outside" ]; then fail "climbing_output: wrote outside --output-dir: $outside"
  elif [ "$inside" != "_.._.._x.npy _.hidden.npy a_b.npy a_b_2.npy" ]; then fail "climbing_output: files '$inside'"
  elif ! grep -q "note: output '../../x' is written as _.._.._x.npy" "$work/climb.out"; then
    fail "climbing_output: no note on the renamed output"; cat "$work/climb.out"
  else echo "PASS climbing_output: $inside, each renamed one noted"; fi
else
  fail "climbing_output: tandem run failed"; cat "$work/climb.out"
fi

# --- Not regular files: a FIFO as external data, as an input, as a dataset.
mkfifo "$work/fifo_weights/weights.bin" "$work/fifo.npy" "$work/fifo.csv"
expect external_fifo 1 "weights.bin' is a named pipe (FIFO), not a regular file" run --repeat 0 "$work/fifo_weights/model.onnx"
ln -s /dev/zero "$work/symlink_weights/weights.bin"
expect external_symlink_out 1 "resolves outside the model's folder (/dev/zero)" run --repeat 0 "$work/symlink_weights/model.onnx"
expect input_fifo 1 "fifo.npy' is a named pipe (FIFO), not a regular file" run --repeat 0 "$peaks" --input "x=$work/fifo.npy"
expect csv_fifo 1 "fifo.csv' is a named pipe (FIFO), not a regular file" train "$peaks" --csv "$work/fifo.csv"
expect input_directory 1 "is a directory, not a regular file" run --repeat 0 "$peaks" --input "x=$work/out"

# --- Numbers read whole: a hex external-data offset, flags out of range or not finite.
expect external_hex_offset 1 "external data offset: '0x18' is not an integer" run --repeat 0 "$work/hex_offset/model.onnx"
train=(train "$peaks" --x "$work/peaks_x.npy" --y "$work/peaks_y.npy" --quiet)
expect batch_zero_kfold 2 "--batch-size: '0' is below 1" "${train[@]}" --batch-size 0 --k-fold 2
expect batch_zero 2 "--batch-size: '0' is below 1" "${train[@]}" --batch-size 0
expect val_split_nan 2 "--val-split: 'nan' is not a finite number" "${train[@]}" --val-split nan
expect val_split_one 2 "--val-split: '1' is not below 1" "${train[@]}" --val-split 1
expect epochs_zero 2 "--epochs: '0' is below 1" "${train[@]}" --epochs 0
expect lr_zero 2 "--lr: '0' is not above 0" "${train[@]}" --lr 0
expect lr_inf 2 "--lr: 'inf' is not a finite number" "${train[@]}" --lr inf
expect kfold_one 2 "--k-fold: '1' is below 2" "${train[@]}" --k-fold 1
expect threads_negative 2 "--threads: '-1' is below 0" run --repeat 0 "$peaks" --threads -1
expect repeat_text 2 "--repeat: '10x' is not an integer" run "$peaks" --repeat 10x
expect seed_overflow 2 "--seed: '99999999999999999999' is above" run --repeat 0 "$peaks" --seed 99999999999999999999

# --- Checkpoints checked field by field before anything resumes.
if timeout 120 "$tandem" "${train[@]}" --epochs 1 --checkpoint-dir "$work/ckpt" >"$work/ckpt.out" 2>&1; then
  for value in -1000000000000 9223372036854775807 12abc; do
    dir=$work/ckpt_epoch_${value}
    mkdir -p "$dir"
    /usr/bin/python3 - "$work/ckpt/checkpoint.tdm" "$dir/checkpoint.tdm" "$value" <<'PY'
import sys, onnx
m = onnx.load(sys.argv[1])
for kv in m.metadata_props:
    if kv.key == "epoch":
        kv.value = sys.argv[3]
onnx.save(m, sys.argv[2])
PY
    expect "checkpoint_epoch_$value" 1 "field 'epoch': '$value' is" "${train[@]}" --epochs 2 --checkpoint-dir "$dir" --resume
  done
else
  fail "checkpoint: the first run failed"; cat "$work/ckpt.out"
fi

# --- Archives read no further than their header declares (2 images, then 512 MiB of zeros).
expect mnist_gzip_bomb 1 "header says 1568 bytes of data, file has more" train "$peaks" --fashion-mnist "$work/mnist_bomb" --max-memory 64M

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
