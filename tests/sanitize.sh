#!/usr/bin/env bash
# The sanitizer and fuzzing leg of the test suite (tests/run_all.sh runs it after ctest):
# builds Tandem with clang, AddressSanitizer + UndefinedBehaviorSanitizer (leak checking
# on) and libFuzzer coverage into ${SANITIZE_BUILD_DIR:-build-sanitize}, then runs under
# the sanitizers, failing on any report:
#   - every GoogleTest unit (tandem_tests),
#   - the ONNX conformance suite's node and simple tests (test-onnx, expected failures as
#     in the main run),
#   - the bad-model and hostile-input checks (tests/reliability/bad_models_test.sh,
#     hostile_inputs_test.sh),
#   - each fuzz target for FUZZ_RUNS executions from its seed corpus (run_fuzzers.sh).
# The CUDA plugin, the C API library and the Python/install tests are not built here
# (ASan cannot be preloaded into Python; the C API has its own ASan test in ctest).
# usage: bash tests/sanitize.sh     (FUZZ_RUNS, default 20000 per target)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SANITIZE_BUILD_DIR:-$root/build-sanitize}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DTANDEM_SANITIZE=address,undefined \
  -DTANDEM_FUZZ=ON -DTANDEM_WITH_CUDA=OFF >/dev/null
ninja -C "$build" ${NINJA_JOBS:+-j$NINJA_JOBS} tandem tandem_tests fuzz_import fuzz_run fuzz_npy \
  fuzz_checkpoint fuzz_csv fuzz_idx fuzz_flags

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
step() { echo "[sanitize] $*"; }

step "GoogleTest units under ASan+UBSan"
"$build/tests/tandem_tests" --gtest_brief=1

step "ONNX conformance (node, simple) under ASan+UBSan"
data=/usr/share/libonnx-testdata/data
"$build/tandem" test-onnx --quiet --threads 1 \
  --expected-failures "$root/tests/conformance/expected_failures.txt" \
  "$data/node" "$data/simple"

step "bad models under ASan+UBSan"
# (no address-space limit: ASan reserves terabytes of shadow memory)
TANDEM_TEST_VMEM_KB=unlimited bash "$root/tests/reliability/bad_models_test.sh" "$build/tandem" \
  "$build/bad_models" >/dev/null
step "hostile files and flags under ASan+UBSan"
TANDEM_TEST_VMEM_KB=unlimited bash "$root/tests/reliability/hostile_inputs_test.sh" "$build/tandem" \
  "$build/hostile_inputs" | grep -v '^PASS'

step "fuzz targets"
bash "$root/tests/fuzz/run_fuzzers.sh" "$build" "${FUZZ_RUNS:-20000}"
step "all clean"
