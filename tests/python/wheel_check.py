"""The installed wheel's side of tests/python/wheel_test.sh, run by a virtual environment
that holds NumPy and the wheel only (no system site-packages), possibly with the project's
Debian libraries hidden: the package must load everything from itself.

Checks: `import tandem` loads libtandem from the package and the compiled Session.run
beside it; a CNN exported from PyTorch gives PyTorch's output (wheel_reference.py);
five Adam steps of an MLP give PyTorch's losses; the `tandem` console script runs the CLI.
usage: wheel_check.py WORK_DIR
"""
import json
import os
import subprocess
import sys

import numpy as np

import tandem
from tandem import _fastrun

work = sys.argv[1]
failed = []


def check(name, ok, detail=""):
    print(f"{'PASS' if ok else 'FAIL'}  {name}" + (f"  -- {detail}" if detail else ""), flush=True)
    if not ok:
        failed.append(name)


package = os.path.dirname(tandem.__file__)
check("libtandem is the package's own", tandem.library_path == os.path.join(package, "libtandem.so"),
      tandem.library_path)
check("the compiled Session.run is loaded", _fastrun.module is not None)
check("version() is the wheel's", tandem.version() == tandem.__version__ and tandem.version()[0].isdigit(),
      tandem.version())
cuda = tandem.provider_available("cuda")
check("provider_available('cuda') answers (here: not available, with the reason)",
      isinstance(cuda[0], bool) and (cuda[0] or cuda[1]), repr(cuda))

x = np.load(os.path.join(work, "cnn_x.npy"))
ref = np.load(os.path.join(work, "cnn_y.npy"))
with tandem.Session(os.path.join(work, "cnn.onnx"), threads=1) as s:
    y = s.run({"x": x})["y"]
err = float(np.abs(y - ref).max() / np.abs(ref).max())
check("the CNN's output is PyTorch's (1e-5 of its scale)", y.shape == ref.shape and err <= 1e-5, f"{err:.2e}")

with tandem.Session(os.path.join(work, "cnn.onnx"), threads=1) as s:
    out = s.run({"x": x}, output="dlpack")["y"]
view = np.from_dlpack(out)
check("output='dlpack': NumPy " + np.__version__ + " views Tandem's output without a copy",
      view.ctypes.data == out.data_ptr and np.array_equal(view, y))

X, Y = np.load(os.path.join(work, "mlp_x.npy")), np.load(os.path.join(work, "mlp_y.npy"))
ref_losses = json.load(open(os.path.join(work, "mlp_adam_losses.json")))
ts = tandem.TrainingSession(os.path.join(work, "mlp.onnx"), loss="mse", optimizer="adam", lr=0.01, threads=1)
losses = [ts.train_step({"x": X}, Y) for _ in range(len(ref_losses))]
rel = max(abs(a - b) / abs(b) for a, b in zip(losses, ref_losses))
check("5 Adam steps take PyTorch's losses (1e-4 relative)", rel <= 1e-4, f"{rel:.2e}: {losses}")

cli = os.path.join(os.path.dirname(sys.executable), "tandem")
run = subprocess.run([cli, "run", os.path.join(work, "cnn.onnx"), "--threads", "1"], capture_output=True, text=True)
check("the `tandem` console script runs the CLI", run.returncode == 0 and "y" in run.stdout,
      (run.stdout + run.stderr).strip()[-300:])
version = subprocess.run([cli, "--version"], capture_output=True, text=True)
check("`tandem --version` is the library's", tandem.version() in version.stdout + version.stderr,
      (version.stdout + version.stderr).strip())

print(f"{'FAILED' if failed else 'PASSED'}: {len(failed)} of the checks failed" if failed else "PASSED: all checks")
sys.exit(1 if failed else 0)
