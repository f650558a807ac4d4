#!/usr/bin/env bash
# Runs an export script of tests/parity in its own virtual environment, once per version
# of the exporting packages: makes the environment (ENV_SCRIPT prints its python last),
# then runs `python EXPORT_SCRIPT OUT_DIR` unless OUT_DIR/STAMP already names the same
# package versions and script. SENTINEL, a file the script writes last, must exist after.
# Usage: tests/parity/export_in_venv.sh ENV_SCRIPT EXPORT_SCRIPT "pkg1 pkg2" OUT_DIR SENTINEL
#   the third argument names the installed packages whose versions make the stamp (read
#   from their metadata, without importing them).
set -euo pipefail
env_script=$1 export_script=$2 packages=$3 out=$4 sentinel=$5
python=$(bash "$env_script" | tail -1)
versions=$("$python" -c "import sys; from importlib.metadata import version; print(*(version(p) for p in sys.argv[1:]))" $packages)
stamp="$versions $(sha1sum "$export_script" | cut -c1-12)"
if [ -f "$out/STAMP" ] && [ "$(cat "$out/STAMP")" = "$stamp" ]; then
  echo "exports of $(basename "$export_script") ($stamp) already in $out"
  exit 0
fi
rm -rf "$out"
mkdir -p "$out"
# Exporter chatter (progress lines, TensorFlow's start-up warnings) is dropped.
"$python" -W ignore "$export_script" "$out" 2>&1 |
  grep -v '^\[torch.onnx\]\|^Applied\|^$\|^WARNING\|^I0000\|cpu_feature_guard\|oneDNN custom' || true
test -f "$out/$sentinel"  # the script ran to its end
echo "$stamp" > "$out/STAMP"
