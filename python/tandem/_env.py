"""The process-wide TandemEnv, created on first use and released at interpreter exit."""
import ctypes
import threading
import weakref

from ._errors import check
from ._lib import API_VERSION, lib


class Env:
    """Owns one TandemEnv handle. Sessions keep a reference to it, so it outlives them."""

    def __init__(self):
        handle = ctypes.c_void_p()
        check(lib.tandem_env_create(API_VERSION, ctypes.byref(handle)))
        self.handle = handle.value
        self._finalizer = weakref.finalize(self, lib.tandem_env_release, self.handle)


_env = None
_env_lock = threading.Lock()


def get_env():
    """The shared :class:`Env` (thread-safe)."""
    global _env
    with _env_lock:
        if _env is None:
            _env = Env()
        return _env
