#!/usr/bin/python3
"""Tandem's OpenMP waiting default (runtime/openmp_wait.h) as libgomp itself reports it.

libgomp prints the settings it loaded with when OMP_DISPLAY_ENV=verbose; the last block a
process prints is what the command ran under. Checks:
  1. the CLI runs a command with GOMP_SPINCOUNT at runtime/openmp_wait.h's default when the
     user set no waiting policy (it executes itself once more for that), and its arguments
     and exit status survive the second start;
  2. a GOMP_SPINCOUNT or OMP_WAIT_POLICY the user set is kept (one start, their value);
  3. `import tandem` in a fresh Python loads libgomp with the same default
     (python/tandem/_lib.py) and leaves no trace of it in the environment its children
     inherit; it keeps the user's.

usage: openmp_wait_test.py TANDEM_CLI LIBTANDEM SOURCE_DIR
Prints one PASS/FAIL line per check; exits 1 on any failure.
"""
import os
import re
import subprocess
import sys

tandem_cli, libtandem, source = sys.argv[1:4]
failures = 0


def check(ok, what):
    global failures
    print(("PASS " if ok else "FAIL ") + what)
    failures += not ok


def header_default():
    text = open(os.path.join(source, "runtime", "openmp_wait.h")).read()
    return re.search(r'kDefaultGompSpinCount\[\] = "(\d+)"', text).group(1)


def spin_counts(argv, **env_changes):
    """(exit status, stdout, the GOMP_SPINCOUNT of every libgomp start, in order)."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(OMP_DISPLAY_ENV="verbose", TANDEM_LIBRARY=libtandem,
               PYTHONPATH=os.path.join(source, "python"), PYTHONDONTWRITEBYTECODE="1", **env_changes)
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, re.findall(r"GOMP_SPINCOUNT = '(\d+)'", r.stderr)


default = header_default()
model = os.path.join(source, "models", "peaks_mlp.onnx")

rc, out, counts = spin_counts([tandem_cli, "inspect", model])
check(rc == 0 and f"model: {model}" in out, f"tandem inspect runs after the second start, its arguments intact (exit {rc})")
check(counts[-1:] == [default], f"the CLI's command runs with GOMP_SPINCOUNT={default} (libgomp saw {counts})")
check(len(counts) == 2, f"the CLI started twice to set it ({len(counts)} starts)")

rc, _, counts = spin_counts([tandem_cli, "inspect", "/nonexistent.onnx"])
rc_one_start, _, _ = spin_counts([tandem_cli, "inspect", "/nonexistent.onnx"], GOMP_SPINCOUNT=default)
check(rc != 0 and rc == rc_one_start and counts[-1:] == [default],
      f"a failing command's exit status survives the second start ({rc}, one start: {rc_one_start})")

rc, _, counts = spin_counts([tandem_cli, "inspect", model], GOMP_SPINCOUNT="7")
check(rc == 0 and counts == ["7"], f"the user's GOMP_SPINCOUNT=7 is kept, one start (libgomp saw {counts})")

rc, _, counts = spin_counts([tandem_cli, "inspect", model], OMP_WAIT_POLICY="active")
check(rc == 0 and len(counts) == 1 and counts[0] != default,
      f"the user's OMP_WAIT_POLICY=active is kept, one start (libgomp saw {counts})")

python = [sys.executable, "-c", "import tandem, os; print(os.environ.get('GOMP_SPINCOUNT', 'unset'))"]
rc, out, counts = spin_counts(python)
check(rc == 0 and counts == [default], f"import tandem loads libgomp with GOMP_SPINCOUNT={default} (libgomp saw {counts})")
check(out.strip() == "unset", f"and leaves it out of the environment children inherit ({out.strip()})")
rc, out, counts = spin_counts(python, GOMP_SPINCOUNT="7")
check(rc == 0 and counts == ["7"] and out.strip() == "7",
      f"import tandem keeps the user's GOMP_SPINCOUNT=7 (libgomp saw {counts})")

print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
