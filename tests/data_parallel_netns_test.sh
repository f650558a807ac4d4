#!/usr/bin/env bash
# Data-parallel training across two "machines" on one box (docs/DISTRIBUTED.md): two
# network namespaces with their own addresses, joined by a veth pair, act as two hosts;
# mpirun, started in the first, launches rank 1 in the second through an rsh agent that
# runs the command inside that namespace, and Open MPI's TCP transport is restricted to
# the veth addresses (no shared memory between the ranks). The 2-rank runs must train to
# the one-process losses (1e-5 relative per step) for the peaks MLP (full batch, Adam)
# and the CIFAR CNN (batch 64, momentum); the bytes that crossed the veth per step are
# printed beside the bytes of gradients all-reduced per step.
# Needs root (network namespaces); elsewhere it is skipped (exit 77) saying so.
# usage: tests/data_parallel_netns_test.sh path/to/tandem WORK_DIR
set -euo pipefail
tandem=$1
work=$2
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work" && mkdir -p "$work"
suffix=$$
ns_a=tdm_a_$suffix ns_b=tdm_b_$suffix veth_a=tdm${suffix}a veth_b=tdm${suffix}b
cleanup() { ip netns del "$ns_a" 2>/dev/null || true; ip netns del "$ns_b" 2>/dev/null || true; }
trap cleanup EXIT
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! ip netns add "$ns_a" 2>"$work/netns.err"; then
  echo "SKIP: needs root and network namespaces ($(cat "$work/netns.err" 2>/dev/null))"; exit 77
fi
ip netns add "$ns_b"
ip link add "$veth_a" type veth peer name "$veth_b"
ip link set "$veth_a" netns "$ns_a"
ip link set "$veth_b" netns "$ns_b"
ip netns exec "$ns_a" ip addr add 10.77.0.1/24 dev "$veth_a"
ip netns exec "$ns_b" ip addr add 10.77.0.2/24 dev "$veth_b"
for ns in "$ns_a" "$ns_b"; do ip netns exec "$ns" ip link set lo up; done
ip netns exec "$ns_a" ip link set "$veth_a" up
ip netns exec "$ns_b" ip link set "$veth_b" up
cat >"$work/agent.sh" <<AGENT
#!/bin/bash
# Open MPI's rsh agent here: "agent HOST COMMAND..." runs COMMAND in HOST's namespace.
host=\$1; shift
case "\$host" in
  10.77.0.1) ns=$ns_a ;;
  10.77.0.2) ns=$ns_b ;;
  *) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" /bin/sh -c "\$*"
AGENT
chmod +x "$work/agent.sh"
mpi=(ip netns exec "$ns_a" mpirun --allow-run-as-root --oversubscribe --bind-to none --host 10.77.0.1,10.77.0.2
     --mca plm_rsh_agent "$work/agent.sh" --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24
     --mca oob_tcp_if_include 10.77.0.0/24)
veth_bytes() { ip netns exec "$ns_a" cat /proc/net/dev | awk -v d="$veth_a:" '$1 == d {print $2 + $10}'; }

/usr/bin/python3 "$root/models/peaks_data.py" "$work/peaks" >/dev/null
/usr/bin/python3 "$root/models/export_models.py" "$work/models" >/dev/null  # cifar_cnn.onnx is not committed
/usr/bin/python3 "$root/models/random_images.py" "$work" cifar 256 3 32 32 3
peaks=("$root/models/peaks_mlp.onnx" --x "$work/peaks/X.npy" --y "$work/peaks/Y.npy" --loss mse --optimizer adam
       --lr 0.08 --batch-size 40000 --epochs 20 --seed 1)
cifar=("$work/models/cifar_cnn.onnx" --x "$work/cifar_x.npy" --y "$work/cifar_y.npy" --loss cross_entropy
       --optimizer momentum --lr 0.01 --batch-size 64 --epochs 2 --seed 2)
for case in peaks cifar; do
  declare -n flags=$case
  mkdir -p "$work/$case-1" "$work/$case-2"
  "$tandem" train "${flags[@]}" --threads 1 --quiet --step-log "$work/$case-1/steps.csv" >/dev/null 2>&1
  before=$(veth_bytes)
  "${mpi[@]}" -n 2 "$tandem" train "${flags[@]}" --threads 1 --quiet --distributed \
    --step-log "$work/$case-2/steps.csv" --export "$work/$case-2/model.onnx" >"$work/$case-2/log" 2>&1 ||
    { cat "$work/$case-2/log"; exit 1; }
  moved=$(( $(veth_bytes) - before ))
  /usr/bin/python3 - "$case" "$work/$case-1/steps.csv" "$work/$case-2/steps.csv" "$moved" "$work/$case-2/model.onnx" <<'PY'
import csv, sys, numpy as np, onnx
case, one, two, moved, model = sys.argv[1:6]
a = np.array([float(r["loss"]) for r in csv.DictReader(open(one))])
b = np.array([float(r["loss"]) for r in csv.DictReader(open(two))])
rel = np.abs(a - b) / np.abs(a)
assert len(a) == len(b) > 0 and rel.max() <= 1e-5, f"FAIL {case} across namespaces: {rel.max():.2e}"
params = sum(int(np.prod(t.dims)) for t in onnx.load(model).graph.initializer if t.data_type == 1)
print(f"PASS {case} across two network namespaces: {len(a)} steps within {rel.max():.1e} of one process; "
      f"{int(moved) / len(a) / 1e3:.1f} kB crossed the veth per step for {params * 4 / 1e3:.1f} kB of gradients all-reduced")
PY
done
