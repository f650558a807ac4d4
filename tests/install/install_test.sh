#!/usr/bin/env bash
# The installed package, used the way a client would use it:
#   1. `cmake --install BUILD_DIR --prefix TMP` into a fresh prefix under BUILD_DIR;
#   2. libtandem.so exports only tandem_* symbols (every call of tandem.h among them) and
#      has SONAME libtandem.so.0;
#   3. examples/ configured and built against that prefix only (find_package(Tandem));
#   4. c_inference.c built with `cc $(pkg-config --cflags --libs tandem)`;
#   5. every example binary run on the models in models/ without LD_LIBRARY_PATH (RPATH);
#   6. the Python examples run with /usr/bin/python3 and PYTHONPATH=TMP/lib/python3.X/
#      dist-packages (no TANDEM_LIBRARY): the installed module loads the installed library.
# usage: install_test.sh BUILD_DIR SOURCE_DIR   (BUILD_DIR must already be built)
# Keeps TMP for inspection when a step fails; removes it on success.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
MODELS=$SRC/models
PYTHON=/usr/bin/python3

# Nothing from the environment may point at the build tree or another install.
unset LD_LIBRARY_PATH TANDEM_LIBRARY PYTHONPATH CMAKE_PREFIX_PATH PKG_CONFIG_PATH Tandem_DIR

WORK=$(mktemp -d "$BUILD/install_test.XXXXXX")
PREFIX=$WORK/prefix
STEP=0
LAST_STEP="setup"
on_exit() {
  local rc=$?
  if [[ $rc -eq 0 ]]; then
    rm -rf "$WORK"
  else
    echo >&2
    echo "FAILED (exit $rc) during: $LAST_STEP" >&2
    echo "the work directory is kept for inspection: $WORK" >&2
  fi
}
trap on_exit EXIT

step() {
  STEP=$((STEP + 1))
  LAST_STEP="$*"
  echo
  echo "== step $STEP: $*"
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# expect FILE PATTERN...: each extended regex must match a line of FILE.
expect() {
  local file=$1
  shift
  local pattern
  for pattern in "$@"; do
    grep -Eq -- "$pattern" "$file" || fail "the output ($file) has no line matching /$pattern/"
  done
}
# run_logged LOG CMD...: runs CMD with its output shown and saved in LOG; fails on a non-zero exit.
run_logged() {
  local log=$1
  shift
  echo "\$ $*"
  local rc=0
  "$@" >"$log" 2>&1 || rc=$?
  sed 's/^/    /' "$log"
  [[ $rc -eq 0 ]] || fail "exit code $rc from: $*"
}
# runs_from_prefix BINARY: libtandem.so resolves to PREFIX/lib through the RPATH alone.
runs_from_prefix() {
  local resolved
  resolved=$(env -u LD_LIBRARY_PATH ldd "$1" | awk '/libtandem\.so/ {print $3}')
  [[ "$resolved" == "$PREFIX/lib/libtandem.so.0" ]] ||
    fail "$1 loads libtandem.so from '$resolved', expected $PREFIX/lib/libtandem.so.0"
  echo "$(basename "$1"): libtandem.so.0 => $resolved"
}

echo "build dir:  $BUILD"
echo "source dir: $SRC"
echo "prefix:     $PREFIX"

# ---------------------------------------------------------------------------------------
step "cmake --install into a fresh prefix"
[[ -f "$BUILD/libtandem.so" ]] || fail "$BUILD/libtandem.so is missing: build the tandem_shared target first"
cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log" 2>&1 ||
  { cat "$WORK/install.log"; fail "cmake --install failed"; }
echo "installed $(grep -c 'Installing:' "$WORK/install.log") files:"
(cd "$PREFIX" && find . \( -type f -o -type l \) -not -name '*.pyc' | sort | sed 's|^\./|    |')
PYVER=$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
PYDIR=$PREFIX/lib/python$PYVER/dist-packages
for f in include/tandem/tandem.h include/tandem/tandem.hpp lib/libtandem.so lib/libtandem.so.0 \
         lib/cmake/Tandem/TandemConfig.cmake lib/cmake/Tandem/TandemConfigVersion.cmake \
         lib/cmake/Tandem/TandemTargets.cmake lib/pkgconfig/tandem.pc bin/tandem \
         "lib/python$PYVER/dist-packages/tandem/__init__.py"; do
  [[ -e "$PREFIX/$f" ]] || fail "the install lacks $f"
done
echo "expected layout present (headers, libtandem.so*, CMake package, pkg-config, CLI, Python module)"
# The CUDA provider plugin, when this build made one, is installed next to libtandem.so
# (where the library looks for it).
if [[ -f "$BUILD/libtandem_cuda.so" ]]; then
  [[ -f "$PREFIX/lib/libtandem_cuda.so" ]] ||
    fail "the build has the CUDA plugin ($BUILD/libtandem_cuda.so) but the install lacks lib/libtandem_cuda.so"
  echo "CUDA provider plugin installed: lib/libtandem_cuda.so"
fi

# ---------------------------------------------------------------------------------------
step "libtandem.so exports only tandem_* and has SONAME libtandem.so.0"
LIB=$PREFIX/lib/libtandem.so
nm -D --defined-only "$LIB" | awk 'NF >= 3 {print $3}' | sort -u >"$WORK/exports.txt"
others=$(grep -v '^tandem_' "$WORK/exports.txt" || true)
if [[ -n "$others" ]]; then
  echo "symbols exported besides tandem_*:" >&2
  grep -v '^tandem_' "$WORK/exports.txt" | sed 's/^/    /' >&2
  fail "libtandem.so exports $(echo "$others" | wc -l) symbols that do not start with tandem_"
fi
echo "$(wc -l <"$WORK/exports.txt") exported symbols, all tandem_*"
grep -oE 'TANDEM_EXPORT[^(]*' "$SRC/include/tandem/tandem.h" | grep -oE 'tandem_[a-z0-9_]+$' | sort -u \
  >"$WORK/declared.txt"
missing=$(comm -23 "$WORK/declared.txt" "$WORK/exports.txt")
[[ -z "$missing" ]] || fail "calls declared in tandem.h but not exported: ${missing//$'\n'/ }"
echo "all $(wc -l <"$WORK/declared.txt") calls declared in tandem.h are exported"
soname=$(readelf -d "$LIB" | grep SONAME || true)
echo "readelf -d: ${soname:-no SONAME entry}"
[[ "$soname" == *"[libtandem.so.0]"* ]] || fail "SONAME is not libtandem.so.0"

# ---------------------------------------------------------------------------------------
step "configure and build examples/ against the prefix only (CMake, find_package(Tandem))"
EXB=$WORK/examples-build
run_logged "$WORK/configure.log" cmake -S "$SRC/examples" -B "$EXB" -G Ninja \
  -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
tandem_dir=$(sed -n 's/^Tandem_DIR:PATH=//p' "$EXB/CMakeCache.txt")
[[ "$tandem_dir" == "$PREFIX/lib/cmake/Tandem" ]] ||
  fail "find_package(Tandem) used '$tandem_dir', not the fresh prefix"
echo "find_package(Tandem) found $tandem_dir"
run_logged "$WORK/build.log" cmake --build "$EXB"
grep -q -- '-std=c99.*c_inference\.c' "$EXB/compile_commands.json" ||
  fail "c_inference.c was not compiled as C99"
echo "c_inference.c compiled as C99"
for b in c_inference cpp_serving cpp_training cpp_distillation; do
  [[ -x "$EXB/$b" ]] || fail "examples build made no $b"
  runs_from_prefix "$EXB/$b"
done

# ---------------------------------------------------------------------------------------
step "compile c_inference.c with pkg-config"
PC_FLAGS=$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags --libs tandem)
echo "pkg-config --cflags --libs tandem: $PC_FLAGS"
echo "pkg-config --modversion tandem: $(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --modversion tandem)"
# shellcheck disable=SC2086  # the flags are meant to split
run_logged "$WORK/pc_build.log" cc -std=c99 -Wall -Wextra -Werror -o "$WORK/c_inference_pc" \
  "$SRC/examples/c_inference.c" $PC_FLAGS -Wl,-rpath,"$PREFIX/lib" -lm
runs_from_prefix "$WORK/c_inference_pc"

# ---------------------------------------------------------------------------------------
step "run c_inference (CMake and pkg-config builds) on every model in models/"
shopt -s nullglob
models=("$MODELS"/*.onnx)
[[ ${#models[@]} -gt 0 ]] || fail "no models in $MODELS"
for m in "${models[@]}"; do
  name=$(basename "$m" .onnx)
  run_logged "$WORK/c_$name.log" env -u LD_LIBRARY_PATH "$EXB/c_inference" "$m" 3
  expect "$WORK/c_$name.log" '^inputs \([0-9]+\):' '^outputs \([0-9]+\):' '^ran with batch 3:' \
    ': float\[3(,[0-9]+)*\] first values:'
  env -u LD_LIBRARY_PATH "$WORK/c_inference_pc" "$m" 3 >"$WORK/c_${name}_pc.log" 2>&1 ||
    fail "the pkg-config build of c_inference failed on $m"
  diff -u "$WORK/c_$name.log" "$WORK/c_${name}_pc.log" || fail "the two c_inference builds disagree on $m"
  echo "    (the pkg-config build printed the same)"
done
expect "$WORK/c_ode_mlp.log" 'x +float\[batch,3\]' 'y +float\[batch,3\]' '^  y: float\[3,3\] first values:'
expect "$WORK/c_peaks_mlp.log" 'x +float\[batch,2\]' '^  y: float\[3,1\] first values:'
# An error is reported, not crashed on: a missing model is exit code 1 with a message.
rc=0
env -u LD_LIBRARY_PATH "$EXB/c_inference" "$WORK/no_such_model.onnx" >"$WORK/c_missing.log" 2>&1 || rc=$?
sed 's/^/    /' "$WORK/c_missing.log"
[[ $rc -eq 1 ]] || fail "c_inference on a missing model exited $rc, expected 1"
expect "$WORK/c_missing.log" '^error: tandem_session_create' 'code 2:'
echo "a missing model is reported (exit 1, code 2 = TANDEM_NOT_FOUND)"

# ---------------------------------------------------------------------------------------
step "run cpp_serving (batched vs one-at-a-time) on ode_mlp and peaks_mlp"
# peaks_mlp with two batching workers on one queue.
for name in ode_mlp peaks_mlp; do
  workers=1
  [[ $name == peaks_mlp ]] && workers=2
  run_logged "$WORK/serve_$name.log" env -u LD_LIBRARY_PATH "$EXB/cpp_serving" "$MODELS/$name.onnx" \
    --requests 800 --clients 8 --max-batch 8 --max-wait-us 300 --threads 1 --workers $workers
  expect "$WORK/serve_$name.log" '^one-at-a-time +[0-9]+' '^batched +[0-9]+' \
    '^throughput ratio \(batched / one-at-a-time\): [0-9.]+x' \
    '^answers: all 800 batched answers equal the one-at-a-time answers'
done

# ---------------------------------------------------------------------------------------
step "run cpp_training on peaks_mlp; inspect its export with the installed CLI"
mkdir -p "$WORK/train"
run_logged "$WORK/train.log" env -u LD_LIBRARY_PATH "$EXB/cpp_training" "$MODELS/peaks_mlp.onnx" \
  --epochs 12 --out-dir "$WORK/train"
expect "$WORK/train.log" '^epoch +1/12 ' '^epoch +12/12 ' '^loss fell: ' 'steps, loss .*: ok$' \
  'predictions equal the training session' 
[[ -s "$WORK/train/peaks.ckpt" && -s "$WORK/train/peaks_trained.onnx" ]] || fail "no checkpoint or export written"
run_logged "$WORK/inspect.log" env -u LD_LIBRARY_PATH "$PREFIX/bin/tandem" inspect "$WORK/train/peaks_trained.onnx"
expect "$WORK/inspect.log" 'x +float\[batch,2\]'
run_logged "$WORK/c_trained.log" env -u LD_LIBRARY_PATH "$EXB/c_inference" "$WORK/train/peaks_trained.onnx" 4
expect "$WORK/c_trained.log" '^  y: float\[4,1\] first values:'

# ---------------------------------------------------------------------------------------
step "run cpp_distillation: the teacher on the CPU and the student on --device auto, two threads"
run_logged "$WORK/distill.log" env -u LD_LIBRARY_PATH "$EXB/cpp_distillation" "$MODELS/peaks_mlp.onnx" \
  --teacher-epochs 20 --epochs 20 --out-dir "$WORK/train"
expect "$WORK/distill.log" '^teacher .*exported' '^student .* steps on the teacher' 'student MSE vs the teacher' \
  '^distillation ok$'

# ---------------------------------------------------------------------------------------
step "run the Python examples with $PYTHON and the installed module"
cd "$WORK"  # not the source tree: `import tandem` must come from the prefix
PYENV=(env -u LD_LIBRARY_PATH -u TANDEM_LIBRARY "PYTHONPATH=$PYDIR" PYTHONDONTWRITEBYTECODE=1)
run_logged "$WORK/py_where.log" "${PYENV[@]}" "$PYTHON" -c \
  'import tandem; from tandem import _fastrun; print(tandem.__file__); print(tandem.library_path); print(tandem.version()); print(_fastrun.module)'
where_module=$(sed -n 1p "$WORK/py_where.log")
where_lib=$(sed -n 2p "$WORK/py_where.log")
[[ "$where_module" == "$PYDIR/tandem/"* ]] || fail "tandem was imported from $where_module, not $PYDIR"
[[ "$(realpath "$where_lib")" == "$(realpath "$PREFIX/lib/libtandem.so.0")" ]] ||
  fail "the Python module loaded $where_lib, not the installed library"
echo "the module and the library both come from the prefix"
# The compiled Session.run, when this build made one, is installed beside the library
# and loaded from there.
if compgen -G "$BUILD/_tandem_fastrun*.so" >/dev/null; then
  compgen -G "$PREFIX/lib/_tandem_fastrun*.so" >/dev/null ||
    fail "the build has _tandem_fastrun but the install lacks lib/_tandem_fastrun*.so"
  where_fast=$(sed -n 4p "$WORK/py_where.log")
  [[ "$where_fast" == *"$PREFIX/lib/_tandem_fastrun"* ]] ||
    fail "the installed module did not load the installed _tandem_fastrun (got: $where_fast)"
  echo "compiled Session.run loaded from the prefix"
fi
for name in ode_mlp peaks_mlp; do
  run_logged "$WORK/py_inf_$name.log" "${PYENV[@]}" "$PYTHON" "$SRC/examples/python_inference.py" \
    "$MODELS/$name.onnx" 3
  expect "$WORK/py_inf_$name.log" '^  input +x ' '^ran with batch 3:' '^  y: float32\[3, [0-9]+\] first values:'
done
# The same first values as the C example (same deterministic input).
c_first=$(grep -oE 'first values: [-0-9.e+ ]+' "$WORK/c_ode_mlp.log" | awk '{print $3}')
py_first=$(grep -oE 'first values: \[ *[-0-9.e+]+' "$WORK/py_inf_ode_mlp.log" | grep -oE '[-0-9.e+]+$')
"$PYTHON" -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1e-4 * max(1, abs(a)))" \
  "$c_first" "$py_first" || fail "C ($c_first) and Python ($py_first) disagree on ode_mlp's first output"
echo "C and Python agree on ode_mlp's first output value ($c_first vs $py_first)"
mkdir -p "$WORK/pytrain"
run_logged "$WORK/py_train.log" "${PYENV[@]}" "$PYTHON" "$SRC/examples/python_training.py" \
  "$MODELS/peaks_mlp.onnx" "$WORK/pytrain" 8
expect "$WORK/py_train.log" '^epoch +8/8 ' 'predictions equal the training session' '^loss fell: '
run_logged "$WORK/py_torch_train.log" "${PYENV[@]}" "$PYTHON" "$SRC/examples/python_torch_training.py" \
  "$MODELS/peaks_mlp.onnx" 4
expect "$WORK/py_torch_train.log" '^epoch +4/4 ' "PyTorch's mse of Tandem's predictions" '^loss fell: '

echo
echo "installed_package_examples: all $STEP steps passed"
