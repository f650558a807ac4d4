"""tandem reads a .npy file as numpy reads it, or refuses it; never a different array.

numpy itself writes the files (np.save and np.lib.format.write_array: every dtype Tandem
takes, format versions 1.0, 2.0 and 3.0, C and Fortran order, both byte orders, scalars,
empty arrays) and hand-made headers vary what numpy's reader accepts (whitespace before a
comma, double quotes, keys in another order, tabs and newlines, no trailing comma) and what
it refuses (a missing or unknown key, (6) for a shape, a negative dimension, a non-bool
fortran_order, text after the dict, NUL padding, version 4.0, truncated data). Each file is
fed to `tandem run` on an Identity model of its dtype and the output compared with what
np.load returned, bit for bit; where np.load raises, tandem must exit 1 with an error.
A refusal must name the .npy file (an error elsewhere does not count). The few headers
numpy accepts and Tandem refuses on purpose (Python integer forms such as 0x2 in a shape,
a repeated key, a -1 that numpy 1.24 lets reshape infer) are listed in REFUSED_ON_PURPOSE.

usage: npy_numpy_test.py TANDEM WORK_DIR
"""
import io
import os
import struct
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

tandem, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
REFUSED_ON_PURPOSE = {"hex_shape", "repeated_key", "negative_dim"}

ONNX_TYPES = {np.dtype(k): v for k, v in {
    "f2": TensorProto.FLOAT16, "f4": TensorProto.FLOAT, "f8": TensorProto.DOUBLE, "i1": TensorProto.INT8,
    "i2": TensorProto.INT16, "i4": TensorProto.INT32, "i8": TensorProto.INT64, "u1": TensorProto.UINT8,
    "u2": TensorProto.UINT16, "u4": TensorProto.UINT32, "u8": TensorProto.UINT64, "?": TensorProto.BOOL}.items()}


def identity_model(dtype, rank):
    """Identity over a `dtype` input of `rank` symbolic dims (libonnx's checker wants a shape)."""
    path = os.path.join(work, f"identity_{dtype.str[1:]}_{rank}.onnx")
    if not os.path.exists(path):
        t, dims = ONNX_TYPES[dtype], [f"d{i}" for i in range(rank)]
        g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "identity",
                              [helper.make_tensor_value_info("x", t, dims)], [helper.make_tensor_value_info("y", t, dims)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.save(m, path)
    return path


def written(array, version=None):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, version=version, allow_pickle=False)
    return buf.getvalue()


def handmade(header, data, version=1):
    """A file with exactly `header` as its dict text, padded with spaces and a newline."""
    text = header.encode("latin1")
    prefix = 10 if version == 1 else 12
    text += b" " * ((64 - (prefix + len(text) + 1) % 64) % 64) + b"\n"
    length = struct.pack("<H", len(text)) if version == 1 else struct.pack("<I", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + length + text + data


cases = []
two_by_three = np.arange(1, 7, dtype="<f4").reshape(2, 3)
for code in ["f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "?"]:
    a = (np.arange(12).reshape(3, 4) % 5 > 1) if code == "?" else (np.arange(12).reshape(3, 4) * 7 - 20).astype(code)
    cases.append((f"c_order_{code}", written(a)))
    cases.append((f"fortran_{code}", written(np.asfortranarray(a.reshape(2, 3, 2)))))
    if np.dtype(code).itemsize > 1:
        cases.append((f"big_endian_{code}", written(a.astype(np.dtype(code).newbyteorder(">")))))
for version in [(1, 0), (2, 0), (3, 0)]:
    cases.append((f"version_{version[0]}", written(two_by_three, version)))
cases += [("scalar", written(np.array(3.5, np.float32))), ("empty", written(np.zeros((0, 3), np.float32))),
          ("vector", written(np.arange(5, dtype=np.int64))),
          ("fortran_nan", written(np.asfortranarray(np.array([[np.nan, 1], [2, -np.inf]], np.float32))))]
data = two_by_three.tobytes()
cases += [
    ("space_before_comma", handmade("{'descr': '<f4', 'fortran_order': True , 'shape': (2, 3), }", data)),
    ("double_quotes", handmade('{"descr": "<f4", "fortran_order": True, "shape": (2, 3)}', data)),
    ("keys_reordered", handmade("{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}", data)),
    ("tabs_and_newlines", handmade("{\n\t'descr' : '<f4' ,\n 'fortran_order':False,'shape':(2,3)}", data)),
    ("version_2_handmade", handmade("{'descr':'<f4','fortran_order':False,'shape':(3,2,)}", data, version=2)),
    ("missing_key", handmade("{'descr': '<f4', 'shape': (2, 3)}", data)),
    ("unknown_key", handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", data)),
    ("shape_not_a_tuple", handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (6)}", data)),
    ("negative_dim", handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 6)}", data)),
    ("fortran_order_int", handmade("{'descr': '<f4', 'fortran_order': 1, 'shape': (2, 3)}", data)),
    ("text_after_dict", handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} x", data)),
    ("hex_shape", handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (0x2, 3)}", data)),
    ("repeated_key", handmade("{'descr': '<i4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", data)),
    ("truncated_data", handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4)}", data)),
    ("nul_padding", written(two_by_three).replace(b"  \n", b"\0\0\n", 1)),
    ("version_4", written(two_by_three)[:6] + b"\x04\x00" + written(two_by_three)[8:]),
]

failures = 0
for name, blob in cases:
    path = os.path.join(work, name + ".npy")
    with open(path, "wb") as f:
        f.write(blob)
    try:
        want = np.load(path, allow_pickle=False)
    except Exception as e:  # numpy refuses it
        want, why = None, f"{type(e).__name__}: {e}"
    dtype = np.dtype(want.dtype.str.replace(">", "<")) if want is not None else np.dtype("f4")
    out = os.path.join(work, name + "_out")
    r = subprocess.run([tandem, "run", identity_model(dtype, want.ndim if want is not None else 2), "--input", f"x={path}", "--output-dir", out,
                        "--repeat", "0"], capture_output=True, text=True, timeout=60)
    error = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
    refused = r.returncode == 1 and error.startswith(f"error: {path}: ")
    if want is None:
        if refused:
            print(f"PASS {name}: both refuse (numpy: {why[:60]}; tandem: {error[:100]})")
        else:
            failures += 1
            print(f"FAIL {name}: numpy refuses ({why[:80]}), tandem exited {r.returncode}: {error}")
        continue
    if r.returncode != 0:
        if name in REFUSED_ON_PURPOSE and refused:
            print(f"PASS {name}: refused on purpose ({error[:100]})")
        else:
            failures += 1
            print(f"FAIL {name}: numpy reads {want.dtype}{list(want.shape)}, tandem exited {r.returncode}: {error}")
        continue
    got = np.load(os.path.join(out, "y.npy"))
    same = got.dtype == dtype and got.shape == want.shape and np.array_equal(got, want.astype(dtype), equal_nan=dtype.kind == "f")
    if same:
        print(f"PASS {name}: {got.dtype}{list(got.shape)} as numpy reads it")
    else:
        failures += 1
        print(f"FAIL {name}: numpy {want.dtype}{list(want.shape)} {want.ravel()[:6].tolist()}, "
              f"tandem {got.dtype}{list(got.shape)} {got.ravel()[:6].tolist()}")
print(f"{len(cases) - failures} of {len(cases)} cases as numpy (numpy {np.__version__})")
sys.exit(1 if failures else 0)
