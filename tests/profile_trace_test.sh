#!/bin/bash
# tandem profile --trace: the Chrome trace parses as JSON and holds, per device, one
# "step" event and one complete event per executed node with name, ph, ts, dur, pid, tid
# and args {op, shapes, provider}; the node events lie inside the step's span, follow each
# other in order on each thread (one after the other, or nested inside a control-flow
# node), and their durations add up to no more than the step. What share of the step the
# nodes cover is printed, not asserted: it is a timing, and timings belong in benchmarks.
# Without a GPU, --compare cpu,cuda says so in one line. The batch sweep writes a
# parseable SVG. All of it for inference and for training steps (--train: forward,
# backward and update nodes).
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
runs = re.findall(r"trace (\S+): step event \+ (\d+) node events \((\d+) nodes\), ([\d.]+) us in nodes of a ([\d.]+) us step", log)
assert runs, "no trace summary printed"
assert sum(1 + int(count) for _, count, _, _, _ in runs) == len(events), "the file holds other events than the steps"
SLACK = 0.002  # us: the file rounds ts and dur to 0.001
first = 0
for device, count, nodes, in_nodes, step_us in runs:  # the devices' steps follow each other in the file
    step, mine = events[first], events[first + 1:first + 1 + int(count)]
    first += 1 + int(count)
    assert step["name"] == "step" and step["args"]["op"] == "step", f"{device}: no step event first: {step}"
    assert int(count) == int(nodes), f"{device}: {count} events for {nodes} nodes"
    begin, end = step["ts"], step["ts"] + step["dur"]
    for e in mine:
        assert begin - SLACK <= e["ts"] and e["ts"] + e["dur"] <= end + SLACK, f"{device}: {e} outside the step {step}"
    outer = 0.0
    for key in sorted({(e["pid"], e["tid"]) for e in mine}):  # in order on each thread
        open_events = []  # the events enclosing the current one
        prev_ts = None
        for e in (e for e in mine if (e["pid"], e["tid"]) == key):
            assert prev_ts is None or e["ts"] >= prev_ts - SLACK, f"{device}: {e} starts before the event written before it"
            prev_ts = e["ts"]
            while open_events and e["ts"] >= open_events[-1]["ts"] + open_events[-1]["dur"] - SLACK:
                open_events.pop()
            if open_events:  # it must lie inside the enclosing one
                o = open_events[-1]
                assert e["ts"] + e["dur"] <= o["ts"] + o["dur"] + SLACK, f"{device}: {e} overlaps {o}"
            else:
                outer += e["dur"]
            open_events.append(e)
    assert outer <= step["dur"] + SLACK * len(mine), f"{device}: nodes {outer} us in a {step['dur']} us step"
    assert abs(outer - float(in_nodes)) <= 0.01 * float(in_nodes) + 0.1, f"{device}: file {outer} us, printed {in_nodes} us"
    print(f"{device}: {count} node events inside the step, {outer:.1f} us = "
          f"{100 * outer / step['dur']:.1f}% of the {step['dur']:.1f} us step (printed, not asserted)")
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
