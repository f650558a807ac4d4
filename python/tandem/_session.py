"""tandem.Session: inference over a loaded model."""
import ctypes
import json
import os
import weakref

from ._dlpack import native_stream
from ._env import get_env
from ._errors import check
from ._owned import Owned
from ._lib import lib
from ._fastrun import module as _fast
from ._dtypes import dtype_name, numpy_dtype
from ._tensor import Wrapped, c_strings, take_outputs

_INPUTS, _OUTPUTS = 0, 1


class IoInfo:
    """A model input or output.

    Attributes:
        name: its name (str).
        dtype: its element type as a NumPy dtype, or None when NumPy has none (bfloat16,
            string); ``type_name`` names it either way.
        type_name: the element type's name ("float32", "bfloat16", ...).
        shape: a list with, per axis, an int (fixed size), a str (a symbolic size such as
            "batch") or None (unknown); None when the model does not fix the rank.
    """

    __slots__ = ("name", "dtype", "type_name", "shape")

    def __init__(self, name, dtype, type_name, shape):
        self.name = name
        self.dtype = dtype
        self.type_name = type_name
        self.shape = shape

    def __repr__(self):
        return f"IoInfo(name={self.name!r}, dtype={self.type_name}, shape={self.shape})"

    def __eq__(self, other):
        return isinstance(other, IoInfo) and (self.name, self.type_name, self.shape) == (
            other.name, other.type_name, other.shape)

    __hash__ = None


def _options(providers, threads, optimization_level, profiling, outputs_on_device=False):
    handle = ctypes.c_void_p()
    check(lib.tandem_session_options_create(ctypes.byref(handle)))
    opts = handle.value
    try:
        if providers is not None:
            if isinstance(providers, str):
                providers = [providers]
            names = [p.encode() for p in providers]
            arr = (ctypes.c_char_p * max(len(names), 1))(*names)
            check(lib.tandem_session_options_set_providers(opts, arr, len(names)))
        check(lib.tandem_session_options_set_threads(opts, int(threads)))
        check(lib.tandem_session_options_set_optimization_level(opts, int(optimization_level)))
        check(lib.tandem_session_options_set_profiling(opts, 1 if profiling else 0))
        check(lib.tandem_session_options_set_outputs_on_device(opts, 1 if outputs_on_device else 0))
    except BaseException:
        lib.tandem_session_options_release(opts)
        raise
    return opts


class Session(Owned):
    """An ONNX model loaded for inference.

    ``Session(path_or_bytes, providers=None, threads=0, optimization_level=2,
    profiling=False, outputs_on_device=False)``

    Args:
        path_or_bytes: a model file path (str or os.PathLike) or a serialized ModelProto
            (bytes, bytearray or memoryview; external data is not allowed then).
        providers: provider names in order of preference, e.g. ``["cuda", "cpu"]``, or
            ``"auto"`` (the GPU when one is usable); default: the CPU only.
        threads: intra-op CPU threads; 0 means all cores.
        optimization_level: 0 none, 1 constant folding and dead-code removal, 2 also fusions.
        profiling: time every node; read the timings with :meth:`profile`.
        outputs_on_device: outputs stay on the GPU that made them; take them with
            ``run(..., output="dlpack")`` (e.g. into ``torch.from_dlpack``).

    Raises :class:`tandem.Error` when the model cannot be loaded (e.g. code NOT_FOUND for a
    missing file, INVALID_MODEL for one that fails to parse, UNAVAILABLE for a provider
    that cannot be used here).

    A Session may be run from many threads at once (the library releases the GIL while it
    runs). Use it as a context manager or call :meth:`close` to free it early; otherwise it
    is freed when garbage-collected.
    """

    def __init__(self, path_or_bytes, providers=None, threads=0, optimization_level=2,
                 profiling=False, outputs_on_device=False):
        self._env = get_env()
        self._outputs_on_device = bool(outputs_on_device)
        opts = _options(providers, threads, optimization_level, profiling, outputs_on_device)
        handle = ctypes.c_void_p()
        try:
            if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
                buf = bytes(path_or_bytes)
                check(lib.tandem_session_create_from_memory(self._env.handle, buf, len(buf),
                                                            opts, ctypes.byref(handle)))
                self.path = None
            else:
                path = os.fspath(path_or_bytes)
                check(lib.tandem_session_create(self._env.handle, os.fsencode(path), opts,
                                                ctypes.byref(handle)))
                self.path = path
        finally:
            lib.tandem_session_options_release(opts)
        self._handle = handle.value
        # The finalizer holds the env, so the env is released after every session.
        self._finalizer = weakref.finalize(self, _release_session, self._handle, self._env)
        self._bindings = weakref.WeakSet()
        self._device_stream = native_stream(lib.tandem_session_device_stream, self._handle)
        self.inputs = self._io_infos(_INPUTS)
        self.outputs = self._io_infos(_OUTPUTS)
        # run()'s default request (every output), built once: small models run in a few
        # microseconds, so per-call Python work shows.
        self._all_output_names = [o.name for o in self.outputs]
        self._c_all_output_names = c_strings(self._all_output_names)

    # -- metadata -------------------------------------------------------------------------

    def _io_infos(self, kind):
        h = self._h()
        count = ctypes.c_size_t()
        check(lib.tandem_session_io_count(h, kind, ctypes.byref(count)))
        infos = []
        for i in range(count.value):
            name = ctypes.c_char_p()
            check(lib.tandem_session_io_name(h, kind, i, ctypes.byref(name)))
            code = ctypes.c_int()
            check(lib.tandem_session_io_dtype(h, kind, i, ctypes.byref(code)))
            rank = ctypes.c_int64()
            check(lib.tandem_session_io_rank(h, kind, i, ctypes.byref(rank)))
            shape = None
            if rank.value >= 0:
                shape = []
                for axis in range(rank.value):
                    value = ctypes.c_int64()
                    symbol = ctypes.c_char_p()
                    check(lib.tandem_session_io_dim(h, kind, i, axis, ctypes.byref(value),
                                                    ctypes.byref(symbol)))
                    if value.value >= 0:
                        shape.append(int(value.value))
                    elif symbol.value:
                        shape.append(symbol.value.decode())
                    else:
                        shape.append(None)
            infos.append(IoInfo((name.value or b"").decode(), numpy_dtype(code.value),
                                dtype_name(code.value), shape))
        return infos

    @property
    def input_names(self):
        """The model's input names, in model order."""
        return [i.name for i in self.inputs]

    @property
    def output_names(self):
        """The model's output names, in model order."""
        return [o.name for o in self.outputs]

    # -- running --------------------------------------------------------------------------

    def run(self, feeds, output_names=None, output="numpy"):
        """Runs the model.

        Args:
            feeds: ``{input name: array}`` with every model input; arrays must already have
                the model's dtype (no conversion is made) and are passed without a copy
                when C-contiguous. Any host tensor with ``__dlpack__`` (PyTorch, JAX,
                CuPy host arrays) is passed without a copy too; it must be contiguous. A
                single-input model also accepts the array itself.
            output_names: the outputs wanted (a list of names or one name); default all.
            output: ``"numpy"`` (new arrays) or ``"dlpack"``: :class:`tandem.DLPackTensor`
                objects holding Tandem's own output memory, which ``torch.from_dlpack`` or
                ``np.from_dlpack`` take without a copy.

        Returns:
            ``{output name: ndarray or DLPackTensor}``, in the order asked for.

        Raises :class:`tandem.Error` for an unknown input name (NOT_FOUND), a missing
        input or a wrong dtype or shape (INVALID_ARGUMENT), or a failure while running.
        """
        h = self._h()
        if not isinstance(feeds, dict):
            if len(self.inputs) != 1:
                raise TypeError(f"run() needs a dict of inputs: the model has "
                                f"{len(self.inputs)} inputs {self.input_names}")
            feeds = {self.inputs[0].name: feeds}
        if output_names is None:
            names = self._all_output_names
        else:
            names = [output_names] if isinstance(output_names, str) else list(output_names)
        if _fast is not None and type(feeds) is dict and output == "numpy" and not self._outputs_on_device:
            done = _fast.run(h, feeds, names)
            if done is not None:
                if type(done) is int:
                    check(done)
                arrays, raw = done
                if raw:  # tensors NumPy has no type for: the general conversion
                    handles = [a for a in arrays if type(a) is int]
                    converted = iter(take_outputs(handles))
                    arrays = [next(converted) if type(a) is int else a for a in arrays]
                return dict(zip(names, arrays))
        c_names = self._c_all_output_names if output_names is None else c_strings(names)
        n = len(names)
        outs = (ctypes.c_void_p * max(n, 1))()
        with Wrapped(feeds, device_stream=self.device_stream) as w:
            check(lib.tandem_session_run(h, w.names, w.tensors, w.count, c_names, n, outs))
        arrays = take_outputs(outs[:n], output, session=self)
        return dict(zip(names, arrays))

    @property
    def device_stream(self):
        """The GPU stream this session runs on (a cudaStream_t as an int), or None for a
        CPU session: producers of device inputs order their writes before it."""
        self._h()
        return self._device_stream

    def io_binding(self):
        """A new :class:`tandem.IoBinding`: inputs and output targets bound once (without
        copies), then ``binding.run()`` as often as needed."""
        from ._binding import IoBinding
        binding = IoBinding(self)
        self._bindings.add(binding)
        return binding

    def close(self):
        """Frees the session now, after closing its IO bindings (later calls raise
        ValueError). Idempotent."""
        for binding in list(self._bindings):
            binding.close()
        super().close()

    def profile(self):
        """Per-node timings since creation, parsed from the library's JSON:
        ``{"nodes": [{"node", "op", "provider", "calls", "total_us"}, ...]}``.
        Needs ``profiling=True``."""
        text = ctypes.c_void_p()
        check(lib.tandem_session_profile(self._h(), ctypes.byref(text)))
        try:
            raw = ctypes.string_at(text.value) if text.value else b"{}"
        finally:
            lib.tandem_free(text.value)
        return json.loads(raw.decode("utf-8"))

    def __repr__(self):
        state = "closed" if self.closed else (self.path or "<from memory>")
        return f"tandem.Session({state})"


def _release_session(handle, env):
    del env  # kept alive until here
    lib.tandem_session_release(handle)
