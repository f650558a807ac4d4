#!/usr/bin/env bash
# Regenerates expected_failures.txt from a run of the ONNX backend suite.
# Each failing test is listed with a reason: a known category where one applies,
# otherwise the runner's own failure message. Review the diff before committing.
# Usage: tests/conformance/update_expected_failures.sh [path/to/tandem]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tandem=${1:-$here/../../build/tandem}
data=/usr/share/libonnx-testdata/data
out=$here/expected_failures.txt
{
  echo "# ONNX backend tests that Tandem fails today, one per line: <test> <reason>."
  echo "# The onnx_conformance ctest fails if any other test fails or a listed one passes."
  echo "# Regenerate with tests/conformance/update_expected_failures.sh."
  "$tandem" test-onnx --quiet "$data/node" "$data/pytorch-converted" "$data/pytorch-operator" "$data/simple" \
    | grep -E '^test_[^ ]+ +FAIL' \
    | sed -E 's/^(test_[^ ]+) +FAIL: (.*)$/\1\t\2/' \
    | awk -F'\t' '
        $1 ~ /^test_castlike_.*BFLOAT16/ { print $1 "\tsuite data contradicts the model: input like is stored as [1], the model declares [3,4]"; next }
        $1 == "test_adam_multiple" { print $1 "\tsuite data computed with epsilon=1e-2 while the node omits epsilon (spec default 1e-6); ours matches the spec"; next }
        $1 ~ /bernoulli|training_dropout/ { print $1 "\trandom output: the suite stores one draw of a random generator"; next }
        $2 ~ /no provider can run it \(no kernel for op/ { match($2, /no kernel for op [A-Za-z.]+/); print $1 "\tnot implemented: " substr($2, RSTART + 17, RLENGTH - 17); next }
        { r = $2; if (length(r) > 160) r = substr(r, 1, 157) "..."; print $1 "\t" r }'
} > "$out"
echo "wrote $(grep -vc '^#' "$out") expected failures to $out"
