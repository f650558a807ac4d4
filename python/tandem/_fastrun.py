"""The compiled fast path of Session.run (python/fastrun/fastrun.cc), when present.

It is looked up next to the loaded libtandem (the build directory, or the install's lib
directory) under this interpreter's extension suffixes, so a build for another Python
version is never loaded; one that fails to load (built against another NumPy) is passed
over quietly. TANDEM_PYTHON_FASTRUN=0 turns it off (the ctypes path then
serves every call, as it does for inputs the fast path does not take).
"""
import contextlib
import ctypes
import importlib.machinery
import importlib.util
import io
import os
import sys

from ._lib import lib

_NAME = "_tandem_fastrun"


def _find():
    if os.environ.get("TANDEM_PYTHON_FASTRUN", "1") == "0":
        return None
    directory = os.path.dirname(os.path.abspath(lib._name))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(directory, _NAME + suffix)
        if not os.path.exists(path):
            continue
        said = io.StringIO()  # NumPy 2 prints a traceback of its own on a module built for 1.x
        try:
            with contextlib.redirect_stderr(said):
                spec = importlib.util.spec_from_file_location(_NAME, path)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
        except Exception:  # noqa: BLE001 - e.g. built against another NumPy: use ctypes
            return None
        sys.stderr.write(said.getvalue())  # what a module that did load had to say
        address = lambda f: ctypes.cast(f, ctypes.c_void_p).value  # noqa: E731
        module.bind(address(lib.tandem_tensor_wrap), address(lib.tandem_tensor_release),
                    address(lib.tandem_session_run), address(lib.tandem_tensor_host_view),
                    address(lib.tandem_status_release))
        return module
    return None


module = _find()
