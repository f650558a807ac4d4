"""DLPack (https://dmlc.github.io/dlpack/latest/): tensors of other libraries in, Tandem's
outputs out, without copies.

In: any object with ``__dlpack__`` and ``__dlpack_device__`` (a PyTorch tensor, a JAX or
CuPy array; NumPy arrays take the array path of _tensor.py) is wrapped as a TandemTensor
over its memory: host memory always; CUDA memory when the call runs on a GPU session,
whose stream the producer is asked to order its writes before (``__dlpack__(stream=)``).
The capsule is kept until the tensor is released and is not consumed, so its producer
frees the memory as usual. Non-contiguous tensors, element types Tandem lacks and device
memory where no GPU session runs are refused with an Error naming the input.

Out: :class:`DLPackTensor` holds an output's TandemTensor (host, or GPU with
``outputs_on_device``) and hands its memory to ``np.from_dlpack``, ``torch.from_dlpack``
and the like; a GPU output's consumer stream is first made to wait for the session's
work. The TandemTensor is released when the DLPackTensor and every consumer's view are gone.
"""
import ctypes

import numpy as np

from ._dtypes import numpy_dtype
from ._errors import Code, Error, check
from ._lib import lib


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):  # DLManagedTensor
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_Managed._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]

_CPU, _CUDA, _CUDA_HOST = 1, 2, 3  # DLDeviceType
_TANDEM_CUDA = 1  # TandemDeviceType
_DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
                 10: "rocm", 13: "cuda_managed"}
# (DLDataTypeCode, bits) <-> TandemDataType
_TO_TANDEM = {(2, 32): 1, (1, 8): 2, (0, 8): 3, (1, 16): 4, (0, 16): 5, (0, 32): 6, (0, 64): 7,
              (6, 8): 9, (2, 16): 10, (2, 64): 11, (1, 32): 12, (1, 64): 13, (4, 16): 16}
_FROM_TANDEM = {v: k for k, v in _TO_TANDEM.items()}
_SIZE = {code: bits // 8 for (_, bits), code in _TO_TANDEM.items()}
_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 5: "complex", 6: "bool"}

_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
# Called while the capsule is being destroyed: it gets the address, never a py_object.
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetContext.restype = ctypes.c_void_p
_api.PyCapsule_GetContext.argtypes = [ctypes.c_void_p]
_api.PyCapsule_SetContext.restype = ctypes.c_int
_api.PyCapsule_SetContext.argtypes = [ctypes.py_object, ctypes.c_void_p]

_NAME, _USED = b"dltensor", b"used_dltensor"


def native_stream(query, handle):
    """The native stream (a cudaStream_t as an int, None on the CPU) that the C call
    `query` (tandem_session_device_stream or tandem_training_session_device_stream) gives
    for session `handle`: fixed for the session's life, so asked once."""
    stream = ctypes.c_void_p()
    check(query(handle, ctypes.byref(stream)))
    return stream.value


def is_dlpack(value):
    """Whether `value` offers DLPack (and is not a NumPy array, which takes the array path)."""
    return (not isinstance(value, np.ndarray) and hasattr(value, "__dlpack__")
            and hasattr(value, "__dlpack_device__"))


def wrap(value, what, device_stream=None):
    """A new TandemTensor over the memory of DLPack tensor `value`, and the capsule to keep
    alive until that tensor is released. CUDA memory needs `device_stream`, the GPU
    session's stream (an int), which the producer orders its writes before. Raises Error
    (INVALID_ARGUMENT) for other device memory, a non-contiguous layout or an element type
    Tandem lacks, naming `what`."""
    device_type, device_id = (int(v) for v in value.__dlpack_device__())
    on_gpu = device_type == _CUDA and device_stream is not None
    if device_type not in (_CPU, _CUDA_HOST) and not on_gpu:
        name = _DEVICE_NAMES.get(device_type, f"device type {device_type}")
        where = ("this session runs on the CPU and takes host memory (copy it with tensor.cpu()); "
                 "GPU tensors go into sessions on the GPU: Session(..., providers=['cuda', 'cpu']), "
                 "TrainingSession(..., device='cuda')" if device_type == _CUDA
                 else "Tandem takes host and CUDA memory")
        raise Error(Code.INVALID_ARGUMENT, f"[python] {what} lives on {name}:{device_id}; {where}")
    capsule = value.__dlpack__(stream=device_stream) if on_gpu else value.__dlpack__()
    managed = _Managed.from_address(_api.PyCapsule_GetPointer(capsule, _NAME))
    t = managed.dl_tensor
    code = _TO_TANDEM.get((t.dtype.code, t.dtype.bits)) if t.dtype.lanes == 1 else None
    if code is None:
        kind = _CODE_NAMES.get(t.dtype.code, f"type code {t.dtype.code}")
        lanes = f"x{t.dtype.lanes}" if t.dtype.lanes != 1 else ""
        raise Error(Code.INVALID_ARGUMENT,
                    f"[python] {what} has element type {kind}{t.dtype.bits}{lanes}, which Tandem "
                    f"does not support")
    shape = [t.shape[i] for i in range(t.ndim)]
    if t.strides:
        strides = [t.strides[i] for i in range(t.ndim)]
        expected, step = [], 1
        for n in reversed(shape):
            expected.insert(0, step)
            step *= n
        if any(s != e and n > 1 for s, e, n in zip(strides, expected, shape)):
            raise Error(Code.INVALID_ARGUMENT,
                        f"[python] {what} is not contiguous (shape {shape}, strides {strides} "
                        f"elements): pass a contiguous tensor (e.g. tensor.contiguous())")
    numel = int(np.prod(shape, dtype=np.int64))
    data = (t.data or 0) + t.byte_offset
    dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    handle = ctypes.c_void_p()
    if on_gpu:
        check(lib.tandem_tensor_wrap_device(code, dims, len(shape), _TANDEM_CUDA, t.device.device_id,
                                            data or None, numel * _SIZE[code], ctypes.byref(handle)))
    else:
        check(lib.tandem_tensor_wrap(code, dims, len(shape), data or None, numel * _SIZE[code],
                                     ctypes.byref(handle)))
    return handle.value, capsule


class _Owner:
    """Releases a TandemTensor once nothing refers to it (the DLPackTensor, capsules not
    yet consumed, consumers' views)."""

    __slots__ = ("handle", "__weakref__")

    def __init__(self, handle):
        self.handle = handle

    def __del__(self):
        if self.handle:
            lib.tandem_tensor_release(self.handle)
            self.handle = None


_exported = {}  # DLManagedTensor address -> (struct, shape array, _Owner), until deleted


def _delete(address):
    _exported.pop(address, None)


_deleter = _Deleter(_delete)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    if _api.PyCapsule_IsValid(capsule, _NAME):  # never consumed: the deleter is ours to call
        _delete(_api.PyCapsule_GetContext(capsule))


class DLPackTensor:
    """A Tandem output whose memory other libraries take through DLPack, without a copy:
    ``np.from_dlpack(t)``, ``torch.from_dlpack(t)`` (host outputs), ``torch.from_dlpack(t)``
    or ``cupy.from_dlpack(t)`` (GPU outputs, ``Session(..., outputs_on_device=True)``).
    Also ``t.numpy()`` (a NumPy view of a host output), ``t.shape``, ``t.dtype`` and
    ``t.device`` (``"cpu"`` or ``"cuda:0"``). The memory lives while this object or any
    view of it does."""

    def __init__(self, handle, session=None):
        # Takes `handle` over only once it is read: until then a failure leaves it the caller's.
        code, rank, data = ctypes.c_int(), ctypes.c_size_t(), ctypes.c_void_p()
        device, index = ctypes.c_int(), ctypes.c_int()
        check(lib.tandem_tensor_dtype(handle, ctypes.byref(code)))
        check(lib.tandem_tensor_rank(handle, ctypes.byref(rank)))
        dims = (ctypes.c_int64 * max(rank.value, 1))()
        check(lib.tandem_tensor_dims(handle, dims, rank.value))
        check(lib.tandem_tensor_address(handle, ctypes.byref(data)))
        check(lib.tandem_tensor_device(handle, ctypes.byref(device), ctypes.byref(index)))
        if code.value not in _FROM_TANDEM:
            raise Error(Code.UNIMPLEMENTED, f"[python] outputs of TandemDataType {code.value} have "
                                            f"no DLPack type")
        self._code = code.value
        self._data = data.value
        self._device = (_CUDA, index.value) if device.value == _TANDEM_CUDA else (_CPU, 0)
        self.shape = tuple(dims[:rank.value])
        self._session = session  # orders a GPU output before its consumer's stream
        self._owner = _Owner(handle)

    @property
    def dtype(self):
        """The element type as a NumPy dtype (None for bfloat16, which NumPy lacks)."""
        return numpy_dtype(self._code)

    @property
    def device(self):
        """``"cpu"`` or ``"cuda:N"``."""
        return "cpu" if self._device[0] == _CPU else f"cuda:{self._device[1]}"

    @property
    def data_ptr(self):
        """The address of the first element (shared with every DLPack view)."""
        return self._data or 0

    def __dlpack_device__(self):
        return self._device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A "dltensor" capsule over this tensor's memory. For a GPU output, `stream` is the
        consumer's CUDA stream (None: the legacy default stream; -1: no ordering), made to
        wait for the session's work first. `copy=True` is refused: the point is not to copy."""
        if copy:
            raise BufferError("tandem.DLPackTensor shares its memory; it does not copy")
        if dl_device is not None and tuple(dl_device) != self._device:
            raise BufferError(f"the tensor is on {self.device}, not {tuple(dl_device)}")
        if self._device[0] == _CPU:
            if stream is not None and stream != -1:
                raise BufferError("host memory takes no stream")
        elif stream != -1:
            if self._session is None:
                raise BufferError("this GPU tensor has no session to order its work by")
            check(lib.tandem_session_order_before(self._session._h(), 1 if stream is None else stream))
        del max_version  # a legacy (unversioned) capsule, which every consumer takes
        shape = (ctypes.c_int64 * max(len(self.shape), 1))(*self.shape)
        code, bits = _FROM_TANDEM[self._code]
        managed = _Managed()
        managed.dl_tensor = _DLTensor(self._data, _Device(*self._device), len(self.shape),
                                      _DataType(code, bits, 1), shape, None, 0)
        address = ctypes.addressof(managed)
        managed.manager_ctx = address
        managed.deleter = _deleter
        _exported[address] = (managed, shape, self._owner)
        capsule = _api.PyCapsule_New(address, _NAME, ctypes.cast(_capsule_destructor, ctypes.c_void_p))
        _api.PyCapsule_SetContext(capsule, address)
        return capsule

    def numpy(self):
        """A NumPy array viewing this memory (no copy); host outputs only."""
        if self._device[0] != _CPU:
            raise BufferError(f"the tensor is on {self.device}: take it with torch.from_dlpack or "
                              f"cupy.from_dlpack")
        return np.from_dlpack(self)

    def __repr__(self):
        return f"tandem.DLPackTensor(shape={list(self.shape)}, dtype={self.dtype}, device={self.device})"
