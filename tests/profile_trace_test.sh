#!/bin/bash
# tandem profile --trace: the Chrome trace parses as JSON, holds one complete event per
# executed node with name, ph, ts, dur, pid, tid and args {op, shapes, provider}, and the
# node durations sum to within 10% of the measured step. Without a GPU, --compare
# cpu,cuda says so in one line. The batch sweep writes a parseable SVG. All of it for
# inference and for training steps (--train: forward, backward and update nodes).
# usage: profile_trace_test.sh TANDEM MODEL
set -euo pipefail
tandem=$1 model=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for mode in inference train; do
  extra=(--dim batch=64)
  [ "$mode" = train ] && extra=(--train --loss cross_entropy --batch-size 16)
  echo "== $mode"
  "$tandem" profile "$model" --compare cpu,cuda "${extra[@]}" --repeat 5 --trace "$out/trace.json" \
    --batch-sizes 1,16,64 --chart "$out/batches.svg" | tee "$out/log"
  /usr/bin/python3 - "$out/log" "$out/trace.json" "$out/batches.svg" "$mode" <<'PY'
import json, re, sys
import xml.etree.ElementTree as ET
log = open(sys.argv[1]).read()
events = [e for e in json.load(open(sys.argv[2]))["traceEvents"] if e["ph"] == "X"]
runs = re.findall(r"trace (\S+): (\d+) node events \((\d+) nodes\), [\d.]+ us in nodes of a ([\d.]+) us step", log)
assert runs, "no trace summary printed"
assert sum(int(count) for _, count, _, _ in runs) == len(events), "the file holds other events than the steps"
first = 0
for device, count, nodes, step in runs:  # the devices' steps follow each other in the file
    mine, first = events[first:first + int(count)], first + int(count)
    assert int(count) == int(nodes), f"{device}: {count} events for {nodes} nodes"
    total = sum(e["dur"] for e in mine)
    assert abs(total - float(step)) <= 0.1 * float(step), f"{device}: nodes {total} us vs step {step} us"
    print(f"{device}: {count} events, node durations {total:.1f} us = {100 * total / float(step):.1f}% of the {step} us step")
for e in events:
    assert {"name", "ph", "ts", "dur", "pid", "tid", "args"} <= e.keys(), e
    assert {"op", "shapes", "provider"} <= e["args"].keys(), e
if "no GPU present" not in log:
    assert "crossover:" in log, "a GPU ran but no crossover was printed"
if sys.argv[4] == "train":
    ops = {e["args"]["op"] for e in events}
    assert "training step:" in log, "no training-step line"
    assert {"ConvGrad", "AdamUpdate"} <= ops, f"no backward or update nodes traced: {sorted(ops)}"
ET.parse(sys.argv[3])
print(f"profile trace test passed ({sys.argv[4]})")
PY
done
