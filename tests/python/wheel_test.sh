#!/usr/bin/env bash
# The pip wheel (issue 31, docs/PYTHON.md), from the repository to a clean environment:
#   1. tools/wheel.sh builds it and makes it self-contained (auditwheel repair);
#   2. a new virtual environment without the system's site-packages installs it (NumPy
#      comes from PyPI as its one dependency);
#   3. every binary of the installed package (libtandem, the plugins, the compiled
#      Session.run, the CLI) must resolve each library it needs inside the package, or to
#      glibc, libstdc++/libgcc_s, zlib, CUDA's libraries (the CUDA plugin) or Open MPI's (the
#      MPI plugin) — checked with ldd;
#   4. tests/python/wheel_check.py runs there against PyTorch's numbers (made by
#      wheel_reference.py with Debian's torch): inference of a CNN, five Adam steps of an
#      MLP, the `tandem` console script. As root it runs a second time with the libraries
#      the wheel carries copies of (oneDNN, protobuf, libonnx, Abseil, libgomp, OpenCL)
#      hidden from the loader (bind-mounted /dev/null in a private mount namespace).
# usage: tests/python/wheel_test.sh WORK_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(realpath -m "$1")
rm -rf "$work" && mkdir -p "$work"
t0=$SECONDS
wheel=$(bash "$root/tools/wheel.sh" "$work/wheelhouse" | tail -n 1)
echo "built $(basename "$wheel") ($(du -h "$wheel" | cut -f1)) in $((SECONDS - t0)) s"
case $(basename "$wheel") in
  *manylinux_*_x86_64.whl) ;;
  *) echo "FAIL: the wheel is not tagged manylinux: $wheel"; exit 1 ;;
esac

/usr/bin/python3 -m venv "$work/venv"
# NumPy, the wheel's one dependency, at the version of the wheel environment's lock.
"$work/venv/bin/pip" install -q -c "$root/tools/python_envs/wheel.lock" "$wheel"
site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if "$work/venv/bin/python" -c 'import sys; sys.exit(any(p.startswith("/usr/lib/python3/dist-packages") for p in sys.path))'; then
  echo "PASS  the environment does not see the system's site-packages"
else
  echo "FAIL: the environment sees /usr/lib/python3/dist-packages"; exit 1
fi

# ldd of every ELF file the package installed. The plugins' libraries from outside (CUDA's,
# Open MPI's) may bring their own dependencies.
outside_deps() {  # the sonames ldd lists for the libraries named $2.. that $1 loads
  local f=$1; shift
  ldd "$f" 2>/dev/null | while read -r name arrow target _; do
    for pattern in "$@"; do
      # shellcheck disable=SC2053
      if [[ $name == $pattern && -f $target ]]; then ldd "$target" 2>/dev/null | awk '$2 == "=>" {print $1}'; fi
    done
  done | sort -u
}
bad=0
checked=0
while IFS= read -r -d '' f; do
  file -b "$f" | grep -q '^ELF' || continue
  checked=$((checked + 1))
  case $(basename "$f") in
    libtandem_cuda.so) brought=$(outside_deps "$f" 'libcudnn*' 'libcublas*') ;;
    libtandem_mpi.so) brought=$(outside_deps "$f" 'libmpi.so.*') ;;
    *) brought= ;;
  esac
  while read -r name arrow target _; do
    [ "$arrow" = "=>" ] || continue
    case "$target" in
      "$site"/*) continue ;;
    esac
    case "$name" in
      libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libstdc++.so.*|libgcc_s.so.*|libz.so.*) continue ;;
    esac
    case "$(basename "$f"):$name" in
      libtandem_cuda.so:libcudnn*|libtandem_cuda.so:libcublas*) continue ;;  # CUDA's own
      libtandem_mpi.so:libmpi.so.*) continue ;;                               # Open MPI's own
    esac
    if grep -qxF "$name" <<<"$brought"; then continue; fi
    echo "FAIL: $f loads $name from $target, outside the package"
    bad=1
  done < <(ldd "$f" 2>/dev/null)
done < <(find "$site/tandem" "$site/tandem_engine.libs" -type f -print0)
[ "$bad" = 0 ] || exit 1
echo "PASS  ldd: the $checked binaries load only the package's libraries, the C/C++ runtime, zlib, CUDA and Open MPI"

/usr/bin/python3 "$root/tests/python/wheel_reference.py" "$work"
(cd "$work" && "$work/venv/bin/python" -I "$root/tests/python/wheel_check.py" "$work")

if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
  echo "note: not root: the run with the Debian libraries hidden is skipped"
  exit 0
fi
# The system libraries the wheel carries copies of: auditwheel names a copy of libdnnl.so.2
# libdnnl-<hash>.so.2.6, so every system library called libdnnl.so* goes.
hidden=()
for copy in "$site"/tandem_engine.libs/*.so*; do
  stem=$(basename "$copy" | sed 's/-[0-9a-f]\{8\}\.so.*//')
  while read -r path; do
    hidden+=("$(realpath "$path")")
  done < <(ldconfig -p | awk -v s="$stem.so" 'index($1, s) == 1 && /x86-64/ {print $NF}')
done
mapfile -t hidden < <(printf '%s\n' "${hidden[@]}" | sort -u)
[ ${#hidden[@]} -ge 5 ] || { echo "FAIL: found only ${#hidden[@]} system copies to hide"; exit 1; }
echo "hiding ${#hidden[@]} system libraries: $(printf '%s ' "${hidden[@]##*/}")"
unshare -m bash -c '
  set -e
  for f in "${@:3}"; do mount --bind /dev/null "$f"; done
  cd "$1" && "$1/venv/bin/python" -I "$2" "$1"
' hide "$work" "$root/tests/python/wheel_check.py" "${hidden[@]}"
echo "PASS  the wheel works with its Debian libraries hidden"
