"""Tandem from Python: run and train ONNX models with NumPy arrays.

A thin layer over the Tandem C API (libtandem.so, include/tandem/tandem.h) with ctypes;
no compiled extension. The library is found through the environment variable
``TANDEM_LIBRARY``, the installed layout (``PREFIX/lib/libtandem.so.0`` next to
``PREFIX/lib/python3.X/dist-packages/tandem``), the source tree's ``build/libtandem.so``,
or the system's library search, in that order.

Inference::

    import numpy as np, tandem
    with tandem.Session("model.onnx") as s:
        print(s.inputs, s.outputs)
        y = s.run({"x": np.zeros((8, 4), np.float32)})["y"]

Training::

    ts = tandem.TrainingSession("model.onnx", loss="mse", optimizer="adam", lr=1e-2)
    losses = ts.fit(x, y, epochs=10, batch_size=32)
    ts.export("trained.onnx")

Every library error is raised as :class:`tandem.Error` (a RuntimeError) whose ``code``
is a :class:`tandem.Code`.
"""
import ctypes

from ._env import get_env as _get_env
from ._errors import Code, Error, check as _check
from ._lib import lib as _lib
from ._lib import path as library_path
from ._binding import IoBinding
from ._dlpack import DLPackTensor
from ._session import IoInfo, Session
from ._training import TrainingSession

__all__ = ["Code", "DLPackTensor", "Error", "IoBinding", "IoInfo", "Session", "TrainingSession", "api_version",
           "library_path", "provider_available", "version"]


def version():
    """The library's version string, e.g. ``"0.1.0"``."""
    return _lib.tandem_version().decode()


def api_version():
    """The highest C API version (TANDEM_API_VERSION) the loaded library implements."""
    return int(_lib.tandem_api_version())


def provider_available(name):
    """Whether provider `name` (``"cpu"``, ``"cuda"``) can run here.

    Returns:
        ``(available, why)``: a bool, and the library's reason when it is not available
        ("" otherwise).
    """
    env = _get_env()
    available = ctypes.c_int()
    why = ctypes.c_char_p()
    _check(_lib.tandem_env_provider_available(env.handle, name.encode(),
                                              ctypes.byref(available), ctypes.byref(why)))
    reason = why.value.decode("utf-8", "replace") if why.value else ""
    return bool(available.value), reason


__version__ = version()
