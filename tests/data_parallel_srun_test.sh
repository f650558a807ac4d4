#!/usr/bin/env bash
# Data-parallel training launched by Slurm's srun instead of mpirun (docs/DISTRIBUTED.md):
# a one-node Slurm of its own (munged, slurmctld and slurmd in a temporary folder, on free
# ports, stopped on exit) runs `srun --mpi=pmix -n 2` and `-n 3` (uneven shares) of the
# peaks MLP (full batch, Adam) and the Dropout MLP (batch 100), which must train what one
# process trains (tests/data_parallel_compare.py); srun -n 2 without --distributed is
# refused. Root only (the daemons); exits 77 (skipped) without root or Slurm
# (tools/setup.sh --tests installs slurmctld, slurmd, slurm-client and munge).
# usage: tests/data_parallel_srun_test.sh path/to/tandem WORK_DIR
set -euo pipefail
tandem=$1
work=$2
root=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "SKIP: the Slurm daemons need root"; exit 77; }
for tool in slurmctld slurmd srun sinfo munged mungekey; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not found (tools/setup.sh --tests installs Slurm and munge)"; exit 77; }
done
rm -rf "$work" && mkdir -p "$work"/{munge,state,spool}
chmod 700 "$work/munge"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# Three free TCP ports: slurmctld's, slurmd's, and srun's range start.
read -r ctld_port d_port srun_port < <(/usr/bin/python3 -c '
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])')
node=$(hostname -s)
mungekey -c -f -k "$work/munge/key"
munged -F --force --socket="$work/munge/socket" --key-file="$work/munge/key" --pid-file="$work/munge/pid" \
  --log-file="$work/munge/log" --seed-file="$work/munge/seed" >/dev/null 2>&1 &
pids+=($!)
cat >"$work/slurm.conf" <<CONF
ClusterName=tandemtest
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SrunPortRange=$srun_port-$((srun_port + 20))
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=pmix
ReturnToService=2
NodeName=$node CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
export SLURM_CONF=$work/slurm.conf
for _ in $(seq 50); do [ -S "$work/munge/socket" ] && break; sleep 0.1; done
slurmctld -D -i >/dev/null 2>&1 &
pids+=($!)
sleep 1
slurmd -D >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 60); do
  [ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && break
  sleep 0.5
done
state=$(sinfo -h -o %T 2>/dev/null || true)
[ "$state" = idle ] || { echo "FAIL: the test's Slurm node is '$state', not idle"; tail -n 20 "$work"/slurm*.log; exit 1; }
echo "Slurm $(sinfo -V | cut -d' ' -f2) up on $node (ports $ctld_port, $d_port)"

/usr/bin/python3 "$root/models/peaks_data.py" "$work/peaks" >/dev/null
/usr/bin/python3 "$root/tests/sincos_data.py" "$work" >/dev/null
/usr/bin/python3 "$root/tests/dropout_mlp_model.py" "$work/dropout_mlp.onnx"
peaks=("$root/models/peaks_mlp.onnx" --x "$work/peaks/X.npy" --y "$work/peaks/Y.npy" --loss mse --optimizer adam
       --lr 0.08 --batch-size 40000 --epochs 20 --seed 1)
dropout=("$work/dropout_mlp.onnx" --x "$work/x.npy" --y "$work/y.npy" --loss mse --optimizer momentum --lr 0.05
         --batch-size 100 --epochs 2 --seed 7)

# run CASE RANKS ARGS...: 0 ranks = a plain process, else srun -n RANKS.
run() {
  local case=$1 ranks=$2; shift 2
  local out=$work/$case-$ranks
  mkdir -p "$out"
  local launch=()
  [ "$ranks" = 0 ] || launch=(timeout 300 srun --mpi=pmix --overcommit -n "$ranks")
  "${launch[@]}" "$tandem" train "$@" --threads 1 ${launch:+--distributed} \
    --step-log "$out/steps.csv" --export "$out/model.onnx" >"$out/log" 2>&1 || { cat "$out/log"; exit 1; }
}
for ranks in 0 2 3; do
  run peaks "$ranks" "${peaks[@]}"
  run dropout "$ranks" "${dropout[@]}"
done
for ranks in 2 3; do
  /usr/bin/python3 "$root/tests/data_parallel_compare.py" "peaks MLP, srun -n $ranks" "$work/peaks-0" "$work/peaks-$ranks"
  /usr/bin/python3 "$root/tests/data_parallel_compare.py" "Dropout MLP, srun -n $ranks" "$work/dropout-0" "$work/dropout-$ranks"
done
grep -q "^data-parallel: 3 ranks" "$work/peaks-3/log" || { echo "FAIL: the 3-rank run does not say it has 3 ranks"; cat "$work/peaks-3/log"; exit 1; }
[ "$(grep -c "no accelerator" "$work/peaks-3/log")" -le 1 ] || { echo "FAIL: every rank printed the device notice"; exit 1; }

# Two processes from srun without --distributed: refused, not two copies trained.
if timeout 120 srun --mpi=pmix -n 2 "$tandem" train "${peaks[@]}" --epochs 1 --quiet >"$work/refused.log" 2>&1; then
  echo "FAIL: srun -n 2 without --distributed trained"; exit 1
fi
grep -q -- "--distributed" "$work/refused.log" || { echo "FAIL: the refusal does not say --distributed"; cat "$work/refused.log"; exit 1; }
echo "PASS srun: 2 and 3 ranks train the one-process model; without --distributed it is refused"
