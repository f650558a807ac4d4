"""tandem.IoBinding: a session's inputs and outputs bound once, run many times
(the C API's TandemIoBinding, include/tandem/tandem.h).

Bound inputs and output targets are the caller's memory, referenced without copies (NumPy
arrays, or tensors with ``__dlpack__`` such as PyTorch's, on the host or, for a GPU
session, on its GPU); the binding keeps them
alive while they are bound. An output bound to a target receives each run's result in
place; the others are read with :meth:`IoBinding.outputs`.
"""
import ctypes
import weakref

import numpy as np

from ._errors import Code, Error, check
from ._lib import lib
from ._owned import Owned
from ._tensor import take_outputs, wrap_one


class IoBinding(Owned):
    """Made by :meth:`tandem.Session.io_binding`. One thread at a time; close it (or let
    it go) before its session, which :meth:`tandem.Session.close` also does."""

    def __init__(self, session):
        handle = ctypes.c_void_p()
        check(lib.tandem_io_binding_create(session._h(), ctypes.byref(handle)))
        self._handle = handle.value
        self._session = session
        self._bound = {}  # ("in" | "out", name) -> what keeps the caller's memory alive
        # The finalizer holds the session, so a binding is always released first.
        self._finalizer = weakref.finalize(self, _release_binding, self._handle, session)

    def _bind(self, kind, name, value, call):
        handle, keep = wrap_one(value, f"{'input' if kind == 'in' else 'output target'} '{name}'",
                                self._session.device_stream)
        try:
            check(call(self._h(), name.encode(), handle))
        finally:
            lib.tandem_tensor_release(handle)  # the binding holds the tensor itself
        self._bound[(kind, name)] = keep

    def bind_input(self, name, value):
        """Binds input `name` to `value` (an array or DLPack host tensor of the model's
        dtype and shape), without a copy: later changes to its memory are seen by the
        next run. Rebinding replaces it."""
        self._bind("in", name, value, lib.tandem_io_binding_bind_input)

    def bind_output(self, name, value):
        """Makes each run write output `name` into `value`: a writable, C-contiguous NumPy
        array or a contiguous DLPack host tensor of the output's dtype and shape."""
        if isinstance(value, np.ndarray) and not (value.flags.c_contiguous and value.flags.writeable
                                                  and value.dtype.isnative):
            raise Error(Code.INVALID_ARGUMENT,
                        f"[python] output target '{name}' must be a writable, C-contiguous, "
                        f"native-endian array (the run writes into it)")
        self._bind("out", name, value, lib.tandem_io_binding_bind_output)

    def run(self):
        """Runs the session on the bound inputs."""
        h = self._h()
        check(lib.tandem_session_run_with_binding(self._session._h(), h))

    def outputs(self, output="numpy"):
        """The latest run's outputs that are not bound to a target, as ``{name: value}``:
        new arrays (``output="numpy"``) or :class:`tandem.DLPackTensor` views of the
        binding's results (``"dlpack"``, no copy)."""
        names = [o.name for o in self._session.outputs if ("out", o.name) not in self._bound]
        handles = []
        try:
            for name in names:
                h = ctypes.c_void_p()
                check(lib.tandem_io_binding_output(self._h(), name.encode(), ctypes.byref(h)))
                handles.append(h.value)
        except BaseException:
            for h in handles:
                lib.tandem_tensor_release(h)
            raise
        return dict(zip(names, take_outputs(handles, output, self._session)))

    def close(self):
        """Releases the binding and lets go of the bound memory. Idempotent."""
        super().close()
        self._bound = {}

    def __repr__(self):
        bound = ", ".join(f"{kind} {name}" for kind, name in self._bound)
        return f"tandem.IoBinding({'closed' if self.closed else bound or 'nothing bound'})"


def _release_binding(handle, session):
    del session  # kept alive until here
    lib.tandem_io_binding_release(handle)

