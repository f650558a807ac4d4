"""Writes the hostile files of hostile_inputs_test.sh: a model whose output name climbs out
of --output-dir, models whose external data is a FIFO or has a malformed offset, a gzip
IDX file that inflates far past what its header declares, and a training set for the
peaks MLP (its checkpoints are made hostile by the test, after a real run writes one).

usage: make_hostile_inputs.py OUT_DIR
"""
import gzip
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(path, nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "hostile", inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def vi(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


# Outputs named to leave the folder, plus one that is a hidden file and two that would meet.
save(os.path.join(out, "climbing_output.onnx"),
     [helper.make_node("Relu", ["x"], ["../../x"]), helper.make_node("Neg", ["x"], [".hidden"]),
      helper.make_node("Abs", ["x"], ["a/b"]), helper.make_node("Sqrt", ["x"], ["a_b"])],
     [vi("x", [3])], [vi("../../x", [3]), vi(".hidden", [3]), vi("a/b", [3]), vi("a_b", [3])])


def external_model(folder, location, offset="0"):
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32), "w")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", "24")):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    save(os.path.join(out, folder, "model.onnx"), [helper.make_node("Add", ["x", "w"], ["y"])],
         [vi("x", [6])], [vi("y", [6])], [w])


# External data in a named pipe (the test makes the FIFO): opening it would wait forever.
external_model("fifo_weights", "weights.bin")
# External data that is a symbolic link to /dev/zero (the test makes the link).
external_model("symlink_weights", "weights.bin")
# An offset of "0x18" (24 in hex) in front of 24 bytes of zeros and the weights.
external_model("hex_offset", "weights.bin", offset="0x18")
with open(os.path.join(out, "hex_offset", "weights.bin"), "wb") as f:
    f.write(bytes(24) + np.arange(6, dtype=np.float32).tobytes())

# A Fashion-MNIST folder whose images file declares 2 images of 28x28 and then inflates to
# 512 MiB (a few hundred KiB on disk); labels for those 2.
mnist = os.path.join(out, "mnist_bomb")
os.makedirs(mnist, exist_ok=True)
with gzip.open(os.path.join(mnist, "train-images-idx3-ubyte.gz"), "wb", compresslevel=1) as f:
    f.write(struct.pack(">BBBBIII", 0, 0, 8, 3, 2, 28, 28))
    zeros = bytes(1 << 20)
    for _ in range(512):
        f.write(zeros)
with gzip.open(os.path.join(mnist, "train-labels-idx1-ubyte.gz"), "wb") as f:
    f.write(struct.pack(">BBBBI", 0, 0, 8, 1, 2) + bytes(2))

# The peaks MLP's data: x [64, 2], y [64, 1].
rng = np.random.default_rng(0)
x = rng.uniform(-3, 3, (64, 2)).astype(np.float32)
np.save(os.path.join(out, "peaks_x.npy"), x)
np.save(os.path.join(out, "peaks_y.npy"), (x[:, :1] * x[:, 1:]).astype(np.float32))
