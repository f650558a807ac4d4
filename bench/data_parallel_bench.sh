#!/bin/bash
# Data-parallel training throughput on this machine (docs/DISTRIBUTED.md): per reference
# model, ms per step and samples/s for one process with 1 and 2 threads and for 2 ranks of
# 1 thread (mpirun), the bytes each step all-reduces (4 per parameter), and the share of a
# 2-rank step its AllReduceStart/Wait nodes take (rank 0's --profile: packing, and waiting
# for the part of the sum the backward pass did not hide). Builds Tandem and installs
# what is missing first. usage: bench/data_parallel_bench.sh [--markdown FILE]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/tools/setup.sh" >&2
bash "$ROOT/tools/build.sh" >&2
markdown=""
[ "${1:-}" = --markdown ] && markdown=$2
tandem=$ROOT/build/tandem
work=$(mktemp -d /tmp/tandem_dp_bench_XXXX)
trap 'rm -rf "$work"' EXIT  # its data and models (~30 MB); the table is printed and copied first
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
/usr/bin/python3 "$ROOT/models/peaks_data.py" "$work/peaks" >/dev/null
/usr/bin/python3 "$ROOT/models/export_models.py" "$work/models" >/dev/null  # cifar_cnn.onnx is not committed
/usr/bin/python3 "$ROOT/models/random_images.py" "$work" img 2048 3 32 32 0
/usr/bin/python3 "$ROOT/models/random_images.py" "$work" fm 2048 1 28 28 1
declare -A args=(
  [peaks_mlp]="--x $work/peaks/X.npy --y $work/peaks/Y.npy --loss mse --batch-size 40000 --epochs 200 --lr 0.08"
  [cifar_cnn]="--x $work/img_x.npy --y $work/img_y.npy --loss cross_entropy --batch-size 128 --epochs 2"
  [fashion_cnn]="--x $work/fm_x.npy --y $work/fm_y.npy --loss cross_entropy --batch-size 128 --epochs 2"
)
{
  echo "# Data-parallel training on this machine"
  echo
  echo "- $(date +%F), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; Open MPI $(mpirun --version | head -1 | awk '{print $NF}') (shared memory between ranks)"
  echo "- command: \`bench/data_parallel_bench.sh\`; ms per step after the first, best of 3 runs"
  echo
  echo "| model | parameters | all-reduced per step | 1 process, 1 thread | 1 process, 2 threads | 2 ranks x 1 thread | AllReduce share of a 2-rank step |"
  echo "|---|---|---|---|---|---|---|"
} > "$work/table.md"
best() {  # best ms/step after the first over 3 runs of the command
  local b=""
  for _ in 1 2 3; do
    local ms
    ms=$("$@" 2>/dev/null | sed -n 's/.* \([0-9.e+-]*\) after the first.*/\1/p')
    [ -z "$ms" ] && { echo "FAIL: $*" >&2; exit 1; }
    if [ -z "$b" ] || awk "BEGIN{exit !($ms < $b)}"; then b=$ms; fi
  done
  echo "$b"
}
for model in peaks_mlp cifar_cnn fashion_cnn; do
  onnx=$ROOT/models/$model.onnx
  [ -f "$onnx" ] || onnx=$work/models/$model.onnx
  read -r -a a <<<"${args[$model]}"
  params=$(/usr/bin/python3 -c "import onnx, numpy as np, sys; m = onnx.load(sys.argv[1]); print(sum(int(np.prod(t.dims)) for t in m.graph.initializer if t.data_type == 1))" "$onnx")
  one1=$(best "$tandem" train "$onnx" "${a[@]}" --threads 1 --quiet)
  one2=$(best "$tandem" train "$onnx" "${a[@]}" --threads 2 --quiet)
  two=$(best "${mpi[@]}" -n 2 "$tandem" train "$onnx" "${a[@]}" --threads 1 --quiet --distributed)
  share=$("${mpi[@]}" -n 2 "$tandem" train "$onnx" "${a[@]}" --threads 1 --distributed --profile 2>/dev/null |
          awk '$2 ~ /^AllReduce/ {s += $NF + 0} END {printf "%.0f%%", s}')
  echo "| $model | $params | $(awk "BEGIN{b = $params * 4; if (b < 1e6) printf \"%.1f kB\", b / 1e3; else printf \"%.2f MB\", b / 1e6}") | $one1 ms | $one2 ms | $two ms | $share |" >> "$work/table.md"
  echo "[bench] $model done" >&2
done
cat "$work/table.md"
[ -n "$markdown" ] && cp "$work/table.md" "$markdown" && echo "wrote $markdown"
