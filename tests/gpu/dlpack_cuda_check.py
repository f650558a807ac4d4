"""DLPack with CUDA memory (python/tandem/_dlpack.py), for the GPU machine (run by
tests/gpu/run_gpu_checks.sh with PyTorch's CUDA; no GPU here, so never run here):

  1. a PyTorch CUDA tensor goes into a GPU session without a copy (the TandemTensor has its
     address) and without leaving the device; the output equals the CPU session's;
  2. with outputs_on_device, run(..., output="dlpack") gives a GPU DLPackTensor that
     torch.from_dlpack views in place (same address, device cuda), equal to the CPU's;
  3. stream order both ways: the input is written by a long PyTorch kernel on PyTorch's
     stream right before the run, and the output is read on another PyTorch stream right
     after, with no synchronisation in between but DLPack's;
  4. IO binding with a CUDA input and a CUDA output target written in place;
  5. train_step on the GPU fed CUDA tensors takes the steps it takes fed host arrays;
  6. a CPU session refuses the CUDA tensor, naming the input.

usage: dlpack_cuda_check.py [--dry-run] MODEL.onnx   (PYTHONPATH=python, TANDEM_LIBRARY=libtandem.so)
Prints PASS/FAIL lines; exits 1 on any failure, PyTorch seeing no GPU among them.
--dry-run (tests/gpu/dry_run_test.sh, no GPU): only the imports and one CPU session's run.
"""
import ctypes
import sys

import numpy as np
import torch

import tandem
from tandem import _dlpack
from tandem._lib import lib

failed = []


def check(name, ok, detail=""):
    print(f"{'PASS' if ok else 'FAIL'}  {name}" + (f"  -- {detail}" if detail else ""), flush=True)
    if not ok:
        failed.append(name)


def main(model):
    if not torch.cuda.is_available():
        check(f"PyTorch {torch.__version__} (CUDA {torch.version.cuda}) sees the GPU", False)
        return 1
    dev = torch.device("cuda:0")
    cpu = tandem.Session(model, threads=1)
    gpu = tandem.Session(model, providers=["cuda", "cpu"])
    check("the GPU session has a stream", gpu.device_stream is not None, repr(gpu.device_stream))
    x = torch.randn(256, 3, device=dev)
    handle, keep = _dlpack.wrap(x, "input 'x'", gpu.device_stream)
    address, device, index = ctypes.c_void_p(), ctypes.c_int(), ctypes.c_int()
    tandem._check(lib.tandem_tensor_address(handle, ctypes.byref(address)))
    tandem._check(lib.tandem_tensor_device(handle, ctypes.byref(device), ctypes.byref(index)))
    check("a CUDA tensor is wrapped in place (same address, cuda:0)",
          address.value == x.data_ptr() and device.value == 1 and index.value == 0)
    lib.tandem_tensor_release(handle)
    del keep
    ref = cpu.run({"x": x.cpu().numpy()})["y"]
    y = gpu.run({"x": x})["y"]
    check("run() with a CUDA input equals the CPU session (1e-5)", float(np.abs(y - ref).max()) <= 1e-5,
          f"{float(np.abs(y - ref).max()):.2e}")

    on_device = tandem.Session(model, providers=["cuda", "cpu"], outputs_on_device=True)
    a = torch.randn(4096, 4096, device=dev)
    for _ in range(3):  # the input is the end of a long chain of work on PyTorch's stream
        x = torch.tanh(a @ a)[:256, :3].contiguous() * 0.5
    out = on_device.run({"x": x}, output="dlpack")["y"]
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):  # read on another stream: DLPack orders it after the run
        view = torch.from_dlpack(out)
        result = (view * 1.0).cpu()
    ref = cpu.run({"x": x.cpu().numpy()})["y"]
    check("output='dlpack' on the GPU: torch views it in place on cuda", view.is_cuda and
          view.data_ptr() == out.data_ptr and out.device == "cuda:0", f"{out!r}")
    check("ordered both ways: the values equal the CPU session's (1e-5)",
          float(np.abs(result.numpy() - ref).max()) <= 1e-5, f"{float(np.abs(result.numpy() - ref).max()):.2e}")

    b = gpu.io_binding()
    target = torch.zeros(256, 3, device=dev)
    b.bind_input("x", x)
    b.bind_output("y", target)
    b.run()
    torch.cuda.synchronize()
    check("IO binding: a CUDA output target is written in place",
          float(np.abs(target.cpu().numpy() - ref).max()) <= 1e-5)
    b.close()
    # Training on the GPU from CUDA tensors takes the steps it takes from host arrays.
    X, Y = torch.randn(512, 3, device=dev), torch.randn(512, 3, device=dev)
    losses = {}
    for kind, (xs, ys) in {"cuda": (X, Y), "host": (X.cpu().numpy(), Y.cpu().numpy())}.items():
        ts = tandem.TrainingSession(model, loss="mse", optimizer="adam", lr=0.01, device="cuda")
        losses[kind] = [ts.train_step(xs, ys) for _ in range(5)]
    check("train_step with CUDA tensors steps as with host arrays (1e-6)", ts.device_stream is not None and
          max(abs(a - b) / abs(b) for a, b in zip(losses["cuda"], losses["host"])) <= 1e-6, f"{losses}")
    try:
        cpu.run({"x": x})
        check("a CPU session refuses a CUDA tensor", False, "no exception")
    except tandem.Error as e:
        check("a CPU session refuses a CUDA tensor, naming it", "input 'x'" in str(e) and "cuda:0" in str(e), str(e))
    print(f"{'FAILED' if failed else 'PASSED'}: {len(failed)} failed")
    return 1 if failed else 0


def dry_run(model):
    y = tandem.Session(model, threads=1).run({"x": np.ones((4, 3), np.float32)})["y"]
    check("dry run: torch, tandem and a CPU session load and run", y.shape == (4, 3),
          f"torch {torch.__version__}, output {y.shape}")
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--dry-run"] and len(sys.argv) == 3:
        sys.exit(dry_run(sys.argv[2]))
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
