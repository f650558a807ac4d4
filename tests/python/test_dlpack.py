#!/usr/bin/python3
"""DLPack in the `tandem` Python module (python/tandem/_dlpack.py) against PyTorch 1.13's
tensors (Debian's python3-torch) and NumPy:

  1. inputs: a PyTorch CPU tensor is fed without a copy (the TandemTensor points at the
     tensor's own memory), Session.run's output equals PyTorch's; the training calls take
     PyTorch tensors and step exactly as with NumPy arrays;
  2. outputs: run(..., output="dlpack") and predict(..., output="dlpack") give
     tandem.DLPackTensor objects that torch.from_dlpack and np.from_dlpack view without a
     copy (same address), with PyTorch's values; the memory outlives the DLPackTensor while
     a view holds it, and is released once the last view goes;
  3. IO binding: PyTorch/NumPy inputs and output targets bound without copies (a target
     receives each run's result in place; a bound input's later changes are seen),
     unbound outputs read as NumPy or DLPack, closing the session closes its bindings;
  4. refusals, naming the input: a non-contiguous tensor, an element type Tandem lacks
     (complex64), another element type than the model's (float64), device memory.

usage: test_dlpack.py WORK_DIR   (PYTHONPATH and TANDEM_LIBRARY as for test_python_api.py)
"""
import ctypes
import gc
import os
import sys
import weakref

import numpy as np
import torch
import torch.utils.dlpack

import tandem
from checks import check, expect_error, rel_diff, section, summary
from torch_models import export, mlp
from tandem import _dlpack
from tandem._lib import lib


def export_mlp(path):
    model = mlp(0)
    export(model, path)
    return model


def address_of(handle):
    data = ctypes.c_void_p()
    tandem._check(lib.tandem_tensor_data(handle, ctypes.byref(data)))
    return data.value or 0


@section
def inputs(work):
    model = export_mlp(os.path.join(work, "mlp.onnx"))
    x = torch.randn(6, 4)
    handle, keep = _dlpack.wrap(x, "input 'x'")
    check("a PyTorch tensor is wrapped without a copy (same address)", address_of(handle) == x.data_ptr(),
          f"{address_of(handle):#x} vs {x.data_ptr():#x}")
    lib.tandem_tensor_release(handle)
    del keep
    offset = torch.randn(10, 4)[3:9]  # a view starting 3 rows in: DLPack's data + byte_offset
    handle, keep = _dlpack.wrap(offset, "input 'x'")
    check("a row-offset view is wrapped at its first element", address_of(handle) == offset.data_ptr())
    lib.tandem_tensor_release(handle)
    del keep
    with torch.no_grad():
        ref = model(x).numpy()
    with tandem.Session(os.path.join(work, "mlp.onnx"), threads=1) as s:
        y = s.run({"x": x})["y"]
        check("run() with a PyTorch input gives PyTorch's output (1e-5)", rel_diff(y, ref) <= 1e-5 or
              float(np.abs(y - ref).max()) <= 1e-6, f"{float(np.abs(y - ref).max()):.2e}")
        y1 = s.run(x)["y"]
        check("a single-input model takes the tensor itself", np.array_equal(y1, y))

    X = torch.randn(64, 4)
    Y = torch.sin(X @ torch.randn(4, 3))
    losses = {}
    for kind, (xs, ys) in {"torch": (X, Y), "numpy": (X.numpy(), Y.numpy())}.items():
        ts = tandem.TrainingSession(os.path.join(work, "mlp.onnx"), loss="mse", optimizer="adam", lr=0.01,
                                    threads=1)
        losses[kind] = [ts.train_step({"x": xs}, ys) for _ in range(4)]
        losses[kind].append(ts.eval_step(xs, ys)[0])
    check("train_step/eval_step with PyTorch tensors step as with NumPy arrays (equal losses)",
          losses["torch"] == losses["numpy"], f"{losses}")


@section
def outputs(work):
    model = export_mlp(os.path.join(work, "mlp.onnx"))
    x = torch.randn(5, 4)
    with torch.no_grad():
        ref = model(x)
    with tandem.Session(os.path.join(work, "mlp.onnx"), threads=1) as s:
        out = s.run({"x": x}, output="dlpack")["y"]
    check("output='dlpack' gives a tandem.DLPackTensor", isinstance(out, tandem.DLPackTensor), repr(out))
    check("its shape, dtype and device", out.shape == (5, 3) and out.dtype == np.float32 and out.device == "cpu"
          and out.__dlpack_device__() == (1, 0), repr(out))
    t = torch.utils.dlpack.from_dlpack(out)
    check("torch.from_dlpack views it without a copy (same address)", t.data_ptr() == out.data_ptr,
          f"{t.data_ptr():#x} vs {out.data_ptr:#x}")
    check("with PyTorch's values (1e-6)", float((t - ref).abs().max()) <= 1e-6)
    a = np.from_dlpack(out)
    check("np.from_dlpack views it without a copy", a.ctypes.data == out.data_ptr)
    check("DLPackTensor.numpy() too", out.numpy().ctypes.data == out.data_ptr)
    values = t.clone()
    owner = weakref.ref(out._owner)  # releases the TandemTensor when it goes
    del out
    gc.collect()
    junk = [np.full((5, 3), 7.0, np.float32) for _ in range(50)]  # would reuse freed memory
    check("a view keeps the memory after the DLPackTensor is gone", owner() is not None and
          torch.equal(t, values) and np.array_equal(a, values.numpy()))
    del junk
    live = len(_dlpack._exported)
    del t, a
    gc.collect()
    check("the last view's release frees the tensor", live == 2 and len(_dlpack._exported) == 0 and
          owner() is None, f"{live} views while viewed, {len(_dlpack._exported)} after; owner {owner()}")

    ts = tandem.TrainingSession(os.path.join(work, "mlp.onnx"), loss="mse", optimizer="sgd", lr=0.0, threads=1)
    (p,) = ts.predict(x, output="dlpack")
    check("predict(output='dlpack') matches PyTorch through torch.from_dlpack",
          float((torch.utils.dlpack.from_dlpack(p) - ref).abs().max()) <= 1e-6)
    expect_error("output= other than numpy/dlpack is refused", lambda: ts.predict(x, output="torch"),
                 exc_type=ValueError, substrings=("'numpy' or 'dlpack'",))


@section
def binding(work):
    model = export_mlp(os.path.join(work, "mlp.onnx"))
    s = tandem.Session(os.path.join(work, "mlp.onnx"), threads=1)
    b = s.io_binding()
    x = torch.randn(4, 4)
    target = torch.zeros(4, 3)
    b.bind_input("x", x)
    b.bind_output("y", target)
    address = target.data_ptr()
    b.run()
    with torch.no_grad():
        check("a bound PyTorch output target receives the result in place (PyTorch's values)",
              target.data_ptr() == address and float((target - model(x)).abs().max()) <= 1e-6)
        x.mul_(2)  # the bound input's own memory changes: the next run sees it
        b.run()
        check("the next run reads the bound input's memory as it is now",
              float((target - model(x)).abs().max()) <= 1e-6)
        x2 = np.random.default_rng(2).standard_normal((4, 4)).astype(np.float32)
        b.bind_input("x", x2)  # rebound, to a NumPy array
        b2 = s.io_binding()  # an unbound output, read back
        b2.bind_input("x", x2)
        b2.run()
        (y,) = b2.outputs(output="dlpack").values()
        view = torch.utils.dlpack.from_dlpack(y)
        b.run()
        ref = model(torch.from_numpy(x2))
        check("outputs(output='dlpack') of an unbound output: PyTorch views it without a copy",
              view.data_ptr() == y.data_ptr and float((view - ref).abs().max()) <= 1e-6)
        check("outputs() as NumPy", float(np.abs(b2.outputs()["y"] - ref.numpy()).max()) <= 1e-6)
        check("a rebound input (NumPy) is what the next run reads", float((target - ref).abs().max()) <= 1e-6)
    expect_error("a non-contiguous NumPy output target is refused",
                 lambda: b.bind_output("y", np.zeros((3, 4), np.float32).T), code=tandem.Code.INVALID_ARGUMENT,
                 substrings=("output target 'y'", "C-contiguous"))
    expect_error("an output target of the wrong shape is refused by the library",
                 lambda: b.bind_output("y", torch.zeros(4, 5)), code=tandem.Code.INVALID_ARGUMENT,
                 substrings=("'y'",))
    expect_error("an unknown input name", lambda: b.bind_input("nope", x), code=tandem.Code.NOT_FOUND,
                 substrings=("nope",))
    s.close()
    check("closing the session closes its bindings first", b.closed and b2.closed)
    expect_error("a closed binding refuses to run", b.run, exc_type=ValueError, substrings=("IoBinding is closed",))


class _OnDevice:
    """A stand-in for a CUDA tensor: DLPack says device type 2 (kDLCUDA)."""

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        raise AssertionError("a device tensor's capsule must not be taken")


@section
def refusals(work):
    export_mlp(os.path.join(work, "mlp.onnx"))
    with tandem.Session(os.path.join(work, "mlp.onnx"), threads=1) as s:
        expect_error("a non-contiguous tensor is refused, naming it",
                     lambda: s.run({"x": torch.randn(4, 6).t()}), code=tandem.Code.INVALID_ARGUMENT,
                     substrings=("input 'x'", "not contiguous", "contiguous()"))
        expect_error("complex64 is refused, naming it", lambda: s.run({"x": torch.randn(6, 4, dtype=torch.complex64)}),
                     code=tandem.Code.INVALID_ARGUMENT, substrings=("input 'x'", "complex64"))
        expect_error("float64 for a float32 input is refused, naming both",
                     lambda: s.run({"x": torch.randn(6, 4, dtype=torch.float64)}),
                     code=tandem.Code.INVALID_ARGUMENT, substrings=("'x'", "double", "float"))
        check("a CPU session has no device stream", s.device_stream is None, repr(s.device_stream))
        expect_error("device memory is refused, naming the device", lambda: s.run({"x": _OnDevice()}),
                     code=tandem.Code.INVALID_ARGUMENT, substrings=("input 'x'", "cuda:0", "providers=['cuda', 'cpu']"))
        ts = tandem.TrainingSession(os.path.join(work, "mlp.onnx"), loss="mse", threads=1)
        check("a CPU training session has no device stream", ts.device_stream is None, repr(ts.device_stream))
        expect_error("a CPU training session refuses device memory too, naming it",
                     lambda: ts.train_step(torch.randn(6, 4), _OnDevice()), code=tandem.Code.INVALID_ARGUMENT,
                     substrings=("target", "cuda:0"))
        expect_error("a tensor that requires grad: PyTorch's own refusal",
                     lambda: s.run({"x": torch.randn(6, 4, requires_grad=True)}), exc_type=RuntimeError,
                     substrings=("detach",))


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(1)
    for group in (inputs, outputs, binding, refusals):
        print(f"-- {group.__name__}")
        group(work)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
