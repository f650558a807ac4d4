"""TandemDataType codes (include/tandem/tandem.h) and their NumPy dtypes, for the array
path (_tensor.py), the DLPack path (_dlpack.py) and sessions' input/output descriptions."""
import numpy as np

# TandemDataType <-> NumPy. bfloat16 has no NumPy type: its outputs come back as float32.
TO_NUMPY = {
    1: np.dtype(np.float32), 2: np.dtype(np.uint8), 3: np.dtype(np.int8),
    4: np.dtype(np.uint16), 5: np.dtype(np.int16), 6: np.dtype(np.int32),
    7: np.dtype(np.int64), 9: np.dtype(np.bool_), 10: np.dtype(np.float16),
    11: np.dtype(np.float64), 12: np.dtype(np.uint32), 13: np.dtype(np.uint64),
}
FROM_NUMPY = {v: k for k, v in TO_NUMPY.items()}
BFLOAT16 = 16
_NAMES = {0: "undefined", 8: "string", 16: "bfloat16"}


def numpy_dtype(code):
    """The NumPy dtype of TandemDataType `code`, or None when NumPy has none."""
    return TO_NUMPY.get(int(code))


def dtype_name(code):
    """A readable name of TandemDataType `code` ("float32", "bfloat16")."""
    dt = TO_NUMPY.get(int(code))
    return dt.name if dt is not None else _NAMES.get(int(code), f"dtype {int(code)}")
