"""Compares two per-step loss logs of `tandem train --step-log` (CSV: step,loss): the same
number of steps, and every step's losses within LIMIT of each other relative to the first
log's value. Prints one line; exits 1 when they differ.

usage: compare_losses.py REFERENCE.csv OTHER.csv LIMIT LABEL
"""
import csv
import math
import sys


def losses(path):
    with open(path, newline="") as f:
        return [float(row["loss"]) for row in csv.DictReader(f)]


def main(reference, other, limit, label):
    a, b = losses(reference), losses(other)
    if not a or len(a) != len(b):
        print(f"{label}: {len(a)} steps against {len(b)}: the runs did not take the same steps")
        return 1
    worst = max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a, b))
    finite = all(math.isfinite(v) for v in a + b)
    print(f"{label}: {len(a)} steps, max relative difference {worst:.2e} (limit {limit:g})"
          + ("" if finite else ", a loss is not finite"))
    return 0 if finite and worst <= limit else 1


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]))
