"""Which CUDA libraries a process loaded, and their versions as the libraries report them:
for each FILE (the paths `LD_DEBUG=libs` showed a Tandem run loading), its real file and
the version its API returns; then NCCL (loaded only by data-parallel runs), found by name
through the same search the CUDA plugin's dlopen makes (LD_LIBRARY_PATH first).

usage: cuda_library_versions.py [FILE...]
Prints one line per library; a library that cannot be loaded or asked says why. Exit 0.
"""
import ctypes
import os
import re
import sys


def dotted(v, scheme):
    """The version number as a dotted string: CUDA's major*1000 + minor*10, or cuDNN 9's,
    cuBLASLt's and NCCL's (>= 2.9) major*10000 + minor*100 + patch."""
    if scheme == "cuda":
        return f"{v // 1000}.{v % 1000 // 10}"
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"


# library-name prefix -> the function that reports its version, how it returns it, the scheme
QUERIES = [
    ("libcudart.", "cudaRuntimeGetVersion", "int*", "cuda"),
    ("libcuda.", "cuDriverGetVersion", "int*", "cuda"),
    ("libcublasLt.", "cublasLtGetVersion", "size_t", "patch"),
    ("libcudnn.", "cudnnGetVersion", "size_t", "patch"),
    ("libnccl.", "ncclGetVersion", "int*", "patch"),
]


def version(lib, fn, returns):
    f = getattr(lib, fn)
    if returns == "size_t":
        f.restype = ctypes.c_size_t
        return f()
    v = ctypes.c_int()
    rc = f(ctypes.byref(v))
    if rc != 0:
        raise OSError(f"{fn} returned error {rc}")
    return v.value


def describe(path):
    name = os.path.basename(path)
    line = f"{name}: {os.path.realpath(path)}"
    for prefix, fn, returns, scheme in QUERIES:
        if name.startswith(prefix):
            try:
                line += f"  {fn} = {dotted(version(ctypes.CDLL(path), fn, returns), scheme)}"
            except (OSError, AttributeError) as e:
                line += f"  (cannot ask its version: {e})"
    return line


def loaded_path(soname):
    """Where the dynamic linker found `soname` for this process (after loading it)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            m = re.search(r"(/\S*" + re.escape(soname.split(".so")[0]) + r"\.so\S*)", line)
            if m:
                return m.group(1)
    return None


def main(files):
    if not files:
        print("no CUDA library was loaded")
    for f in files:
        print(describe(f))
    try:
        ctypes.CDLL("libnccl.so.2")
        print(describe(loaded_path("libnccl.so.2")))
    except OSError as e:
        print(f"libnccl.so.2: not found on the library path ({e}): the NCCL tests will say so")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
