"""Finds and loads libtandem and declares the C functions the package calls.

The library is looked up, in order, at:

1. the path in the environment variable ``TANDEM_LIBRARY`` (when set, it must load);
2. the wheel's layout: ``<package dir>/libtandem.so`` (``pip install``, pyproject.toml);
3. the installed layout: ``<package dir>/../../../libtandem.so.0`` (the package lives in
   ``PREFIX/lib/python3.X/dist-packages/tandem``, the library in ``PREFIX/lib``);
4. the source tree: ``<package dir>/../../build/libtandem.so``;
5. ``ctypes.util.find_library("tandem")`` (the system's library search).

While it loads the library, it sets Tandem's OpenMP waiting default (GOMP_SPINCOUNT, see
runtime/openmp_wait.h) unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is already set: libgomp
reads it once, when it is first loaded into the process, so it takes effect only if no
module imported earlier loaded libgomp. The variable is removed again once the library is
loaded, so programs this process starts (PyTorch, say) keep their own default.
"""
import ctypes
import ctypes.util
import os

# The TANDEM_API_VERSION this package was written against (include/tandem/tandem.h).
API_VERSION = 2

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

c_status = ctypes.c_void_p  # TandemStatus*: None (NULL) means success
c_handle = ctypes.c_void_p  # every opaque handle
c_handle_p = ctypes.POINTER(ctypes.c_void_p)
c_str_p = ctypes.POINTER(ctypes.c_char_p)
c_int64_p = ctypes.POINTER(ctypes.c_int64)
c_size_p = ctypes.POINTER(ctypes.c_size_t)
c_int_p = ctypes.POINTER(ctypes.c_int)
c_double_p = ctypes.POINTER(ctypes.c_double)
c_enum = ctypes.c_int
c_enum_p = ctypes.POINTER(ctypes.c_int)

# name -> (restype, argtypes). Only calls the package uses.
_SIGNATURES = {
    # errors and memory
    "tandem_status_code": (c_enum, [c_status]),
    "tandem_status_message": (ctypes.c_char_p, [c_status]),
    "tandem_status_release": (None, [c_status]),
    "tandem_free": (None, [ctypes.c_void_p]),
    # version and environment
    "tandem_version": (ctypes.c_char_p, []),
    "tandem_api_version": (ctypes.c_uint32, []),
    "tandem_env_create": (c_status, [ctypes.c_uint32, c_handle_p]),
    "tandem_env_release": (None, [c_handle]),
    "tandem_env_provider_available": (c_status, [c_handle, ctypes.c_char_p, c_int_p, c_str_p]),
    # tensors
    "tandem_tensor_wrap": (c_status, [c_enum, c_int64_p, ctypes.c_size_t, ctypes.c_void_p,
                                      ctypes.c_size_t, c_handle_p]),
    "tandem_tensor_release": (None, [c_handle]),
    "tandem_tensor_dtype": (c_status, [c_handle, c_enum_p]),
    "tandem_tensor_rank": (c_status, [c_handle, c_size_p]),
    "tandem_tensor_dims": (c_status, [c_handle, c_int64_p, ctypes.c_size_t]),
    "tandem_tensor_byte_size": (c_status, [c_handle, c_size_p]),
    "tandem_tensor_data": (c_status, [c_handle, c_handle_p]),
    "tandem_tensor_wrap_device": (c_status, [c_enum, c_int64_p, ctypes.c_size_t, c_enum, ctypes.c_int,
                                             ctypes.c_void_p, ctypes.c_size_t, c_handle_p]),
    "tandem_tensor_address": (c_status, [c_handle, c_handle_p]),
    "tandem_tensor_device": (c_status, [c_handle, c_enum_p, c_int_p]),
    "tandem_tensor_host_view": (c_status, [c_handle, c_enum_p, c_size_p, c_int64_p, ctypes.c_size_t,
                                           c_handle_p, c_size_p]),
    # session options
    "tandem_session_options_create": (c_status, [c_handle_p]),
    "tandem_session_options_release": (None, [c_handle]),
    "tandem_session_options_set_providers": (c_status, [c_handle, c_str_p, ctypes.c_size_t]),
    "tandem_session_options_set_threads": (c_status, [c_handle, ctypes.c_int]),
    "tandem_session_options_set_optimization_level": (c_status, [c_handle, ctypes.c_int]),
    "tandem_session_options_set_profiling": (c_status, [c_handle, ctypes.c_int]),
    "tandem_session_options_set_outputs_on_device": (c_status, [c_handle, ctypes.c_int]),
    # inference sessions
    "tandem_session_create": (c_status, [c_handle, ctypes.c_char_p, c_handle, c_handle_p]),
    "tandem_session_create_from_memory": (c_status, [c_handle, ctypes.c_void_p, ctypes.c_size_t,
                                                     c_handle, c_handle_p]),
    "tandem_session_release": (None, [c_handle]),
    "tandem_session_io_count": (c_status, [c_handle, c_enum, c_size_p]),
    "tandem_session_io_name": (c_status, [c_handle, c_enum, ctypes.c_size_t, c_str_p]),
    "tandem_session_io_dtype": (c_status, [c_handle, c_enum, ctypes.c_size_t, c_enum_p]),
    "tandem_session_io_rank": (c_status, [c_handle, c_enum, ctypes.c_size_t, c_int64_p]),
    "tandem_session_io_dim": (c_status, [c_handle, c_enum, ctypes.c_size_t, ctypes.c_size_t,
                                         c_int64_p, c_str_p]),
    "tandem_session_run": (c_status, [c_handle, c_str_p, c_handle_p, ctypes.c_size_t,
                                      c_str_p, ctypes.c_size_t, c_handle_p]),
    "tandem_session_profile": (c_status, [c_handle, c_handle_p]),
    "tandem_session_device_stream": (c_status, [c_handle, c_handle_p]),
    "tandem_session_order_before": (c_status, [c_handle, ctypes.c_void_p]),
    # IO binding
    "tandem_io_binding_create": (c_status, [c_handle, c_handle_p]),
    "tandem_io_binding_release": (None, [c_handle]),
    "tandem_io_binding_bind_input": (c_status, [c_handle, ctypes.c_char_p, c_handle]),
    "tandem_io_binding_bind_output": (c_status, [c_handle, ctypes.c_char_p, c_handle]),
    "tandem_session_run_with_binding": (c_status, [c_handle, c_handle]),
    "tandem_io_binding_output": (c_status, [c_handle, ctypes.c_char_p, c_handle_p]),
    # training
    "tandem_training_options_create": (c_status, [c_handle_p]),
    "tandem_training_options_release": (None, [c_handle]),
    "tandem_training_options_set": (c_status, [c_handle, ctypes.c_char_p, ctypes.c_char_p]),
    "tandem_training_session_create": (c_status, [c_handle, ctypes.c_char_p, c_handle,
                                                  c_handle_p]),
    "tandem_training_session_release": (None, [c_handle]),
    "tandem_training_session_input_count": (c_status, [c_handle, c_size_p]),
    "tandem_training_session_input_name": (c_status, [c_handle, ctypes.c_size_t, c_str_p]),
    "tandem_training_session_output_count": (c_status, [c_handle, ctypes.POINTER(ctypes.c_size_t)]),
    "tandem_training_session_train_step": (c_status, [c_handle, c_str_p, c_handle_p,
                                                      ctypes.c_size_t, c_handle, c_double_p]),
    "tandem_training_session_eval_step": (c_status, [c_handle, c_str_p, c_handle_p,
                                                     ctypes.c_size_t, c_handle, c_double_p,
                                                     c_double_p]),
    "tandem_training_session_predict": (c_status, [c_handle, c_str_p, c_handle_p,
                                                   ctypes.c_size_t, ctypes.c_size_t, c_handle_p]),
    "tandem_training_session_set_learning_rate": (c_status, [c_handle, ctypes.c_double]),
    "tandem_training_session_learning_rate": (c_status, [c_handle, c_double_p]),
    "tandem_training_session_steps": (c_status, [c_handle, c_int64_p]),
    "tandem_training_session_device_stream": (c_status, [c_handle, c_handle_p]),
    "tandem_training_session_rank": (c_status, [c_handle, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]),
    "tandem_training_session_save_checkpoint": (c_status, [c_handle, ctypes.c_char_p]),
    "tandem_training_session_load_checkpoint": (c_status, [c_handle, ctypes.c_char_p]),
    "tandem_training_session_export": (c_status, [c_handle, ctypes.c_char_p]),
}


def _candidates():
    """(description, path or name) pairs in lookup order, after TANDEM_LIBRARY."""
    out = [
        ("wheel", os.path.join(_PACKAGE_DIR, "libtandem.so")),
        ("installed layout", os.path.normpath(os.path.join(_PACKAGE_DIR, "..", "..", "..",
                                                           "libtandem.so.0"))),
        ("source tree", os.path.normpath(os.path.join(_PACKAGE_DIR, "..", "..", "build",
                                                      "libtandem.so"))),
    ]
    return out


# runtime/openmp_wait.h's kDefaultGompSpinCount (tests/openmp_wait_test.py checks they agree).
DEFAULT_GOMP_SPINCOUNT = "1000"


def _load():
    """The library, loaded with Tandem's OpenMP default in the environment for that moment."""
    chose = "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ
    if not chose:
        os.environ["GOMP_SPINCOUNT"] = DEFAULT_GOMP_SPINCOUNT
    try:
        return _find_and_load()
    finally:
        if not chose:
            del os.environ["GOMP_SPINCOUNT"]


def _find_and_load():
    tried = []
    explicit = os.environ.get("TANDEM_LIBRARY")
    if explicit:
        try:
            return ctypes.CDLL(explicit)
        except OSError as e:
            raise ImportError(f"tandem: cannot load the library named by TANDEM_LIBRARY "
                              f"({explicit}): {e}") from None
    tried.append("TANDEM_LIBRARY (not set)")
    for what, path in _candidates():
        if not os.path.exists(path):
            tried.append(f"{path} ({what}: no such file)")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({what}: {e})")
    name = ctypes.util.find_library("tandem")
    if name:
        try:
            return ctypes.CDLL(name)
        except OSError as e:
            tried.append(f"{name} (ctypes.util.find_library: {e})")
    else:
        tried.append("ctypes.util.find_library('tandem') (not found)")
    raise ImportError("tandem: cannot find libtandem; looked at:\n  " + "\n  ".join(tried) +
                      "\nSet TANDEM_LIBRARY to the path of libtandem.so.")


def _declare(lib):
    for name, (restype, argtypes) in _SIGNATURES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise ImportError(f"tandem: {lib._name} lacks {name}(); is it an older "
                              f"libtandem?") from None
        fn.restype = restype
        fn.argtypes = argtypes
    have = lib.tandem_api_version()
    if have < API_VERSION:
        raise ImportError(f"tandem: {lib._name} implements C API version {have}, this package "
                          f"needs {API_VERSION}")
    return lib


lib = _declare(_load())
path = lib._name
