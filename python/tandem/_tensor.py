"""Moving NumPy arrays (and DLPack tensors, _dlpack.py) in and out of TandemTensors.

Inputs are wrapped without a copy (tandem_tensor_wrap over a C-contiguous array, which
the caller keeps alive until the tensor is released); outputs are copied into new arrays
and their tensors released, or handed out as DLPack tensors (take_outputs).
"""
import ctypes

import numpy as np

from . import _dlpack
from ._dtypes import BFLOAT16, FROM_NUMPY, TO_NUMPY, dtype_name
from ._errors import Code, Error, check
from ._lib import lib


def as_input_array(value, what):
    """`value` as a native-endian, C-contiguous ndarray (no copy when it already is one)."""
    arr = np.asarray(value)
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)  # only for ndim >= 1; 0-d arrays are contiguous
    if arr.dtype not in FROM_NUMPY:
        raise Error(Code.INVALID_ARGUMENT,
                    f"[python] {what} has NumPy dtype {arr.dtype}, which Tandem does not support")
    return arr


_C_STRINGS = {}  # tuple of names -> C array (read-only once built; shared by calls)


def c_strings(names):
    """`names` (str) as a C array of UTF-8 strings (one NULL entry when empty); the arrays
    of the last few hundred distinct name lists are kept, since callers repeat them."""
    key = tuple(names)
    arr = _C_STRINGS.get(key)
    if arr is None:
        arr = (ctypes.c_char_p * max(len(key), 1))(*[s.encode() for s in key])
        if len(_C_STRINGS) >= 256:
            _C_STRINGS.clear()
        _C_STRINGS[key] = arr
    return arr


def wrap(arr):
    """A new TandemTensor over `arr`'s memory (from :func:`as_input_array`); the caller
    keeps `arr` alive and releases the returned handle with tandem_tensor_release."""
    rank = arr.ndim
    dims = (ctypes.c_int64 * max(rank, 1))(*arr.shape)
    handle = ctypes.c_void_p()
    check(lib.tandem_tensor_wrap(FROM_NUMPY[arr.dtype], dims, rank,
                                 arr.__array_interface__["data"][0], arr.nbytes,
                                 ctypes.byref(handle)))
    return handle.value


class Wrapped:
    """Named inputs wrapped as TandemTensors for one call; a context manager that releases
    them. ``names`` and ``tensors`` are the C arrays to pass."""

    def __init__(self, feeds, what="input", device_stream=None):
        self._arrays = []
        self._handles = []
        try:
            for name, value in feeds.items():
                if not isinstance(name, str):
                    raise TypeError(f"{what} names must be str, got {type(name).__name__}")
                handle, keep = wrap_one(value, f"{what} '{name}'", device_stream)
                self._arrays.append(keep)
                self._handles.append(handle)
        except BaseException:
            self.release()
            raise
        n = len(self._handles)
        self.count = n
        self.names = c_strings(list(feeds))
        self.tensors = (ctypes.c_void_p * max(n, 1))(*self._handles)

    def release(self):
        """Releases the tensors (the arrays stay the caller's)."""
        handles, self._handles = self._handles, []
        for h in handles:
            lib.tandem_tensor_release(h)
        self._arrays = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
        return False


def wrap_one(value, what, device_stream=None):
    """One array, or DLPack tensor, as a TandemTensor: returns (handle, what to keep alive
    until the handle is released). `device_stream`: the session's GPU stream, which a
    device tensor's producer orders its writes before (None: host memory only)."""
    if _dlpack.is_dlpack(value):
        return _dlpack.wrap(value, what, device_stream)
    arr = as_input_array(value, what)
    return wrap(arr), arr


_VIEW_RANK = 16  # dims room for the one-call view; higher ranks retry with more


def to_numpy(handle):
    """A new ndarray holding a copy of host tensor `handle` (not released here)."""
    code, rank, data, nbytes = ctypes.c_int(), ctypes.c_size_t(), ctypes.c_void_p(), ctypes.c_size_t()
    dims = (ctypes.c_int64 * _VIEW_RANK)()
    args = (ctypes.byref(code), ctypes.byref(rank))
    status = lib.tandem_tensor_host_view(handle, *args, dims, _VIEW_RANK, ctypes.byref(data),
                                         ctypes.byref(nbytes))
    if status and rank.value > _VIEW_RANK:
        lib.tandem_status_release(status)
        dims = (ctypes.c_int64 * rank.value)()
        status = lib.tandem_tensor_host_view(handle, *args, dims, rank.value, ctypes.byref(data),
                                             ctypes.byref(nbytes))
    check(status)
    shape = tuple(dims[:rank.value])
    if code.value == BFLOAT16:
        raw = np.empty(shape, np.uint16)
        dtype = None
    else:
        dtype = TO_NUMPY.get(code.value)
        if dtype is None:
            raise Error(Code.UNIMPLEMENTED,
                        f"[python] outputs of type {dtype_name(code.value)} are not supported")
        raw = np.empty(shape, dtype)
    if raw.nbytes > nbytes.value:
        raise Error(Code.INTERNAL, f"[python] tensor of shape {list(shape)} and type "
                                   f"{dtype_name(code.value)} holds only {nbytes.value} bytes")
    if raw.nbytes:
        ctypes.memmove(raw.ctypes.data, data.value, raw.nbytes)
    if dtype is None:  # bfloat16 -> float32: the top half of the float32 bits
        return (raw.astype(np.uint32) << 16).view(np.float32)
    return raw


def take_outputs(handles, output="numpy", session=None):
    """Copies then releases each tensor in the C array `handles`; returns the arrays.
    Every non-NULL handle is released, even when a copy fails. With ``output="dlpack"``
    each becomes a :class:`tandem.DLPackTensor` instead (no copy; released with it;
    `session` orders device outputs before their consumers' streams)."""
    if output == "dlpack":
        return _take_dlpack(handles, session)
    if output != "numpy":
        raise ValueError(f"output must be 'numpy' or 'dlpack', got {output!r}")
    out = []
    err = None
    for h in handles:
        if not h:
            out.append(None)
            continue
        try:
            if err is None:
                out.append(to_numpy(h))
        except BaseException as e:  # keep releasing the rest
            err = e
        finally:
            lib.tandem_tensor_release(h)
    if err is not None:
        raise err
    return out


def _take_dlpack(handles, session):
    out = []
    try:
        for h in handles:
            out.append(_dlpack.DLPackTensor(h, session) if h else None)  # owns h from here
    except BaseException:
        for h in handles[len(out):]:  # not handed over (the failed one included): released here
            if h:
                lib.tandem_tensor_release(h)
        raise
    return out
