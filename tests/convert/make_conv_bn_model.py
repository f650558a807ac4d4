"""Writes a small model of the kind PyTorch's dynamo exporter and Keras/tf2onnx leave for
Conv+BatchNormalization folding and bias folding: Conv (no bias) -> BatchNormalization ->
Relu -> Conv -> BatchNormalization -> Flatten -> MatMul -> Add. Random weights, seed 0.
usage: make_conv_bn_model.py OUT.onnx"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)


def init(name, *shape, low=-0.5, high=0.5):
    return numpy_helper.from_array(rng.uniform(low, high, shape).astype(np.float32), name)


inits = [init("w1", 8, 3, 3, 3), init("w2", 4, 8, 3, 3), init("b2", 4), init("dense", 4 * 6 * 6, 5),
         init("dense_bias", 5)]
for k, c in ((1, 8), (2, 4)):
    inits += [init(f"scale{k}", c, low=0.5, high=1.5), init(f"shift{k}", c), init(f"mean{k}", c),
              init(f"var{k}", c, low=0.5, high=2.0)]
nodes = [
    helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization", ["c1", "scale1", "shift1", "mean1", "var1"], ["n1"], epsilon=1e-3),
    helper.make_node("Relu", ["n1"], ["r1"]),
    helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization", ["c2", "scale2", "shift2", "mean2", "var2"], ["n2"]),
    helper.make_node("Flatten", ["n2"], ["f"]),
    helper.make_node("MatMul", ["f", "dense"], ["m"]),
    helper.make_node("Add", ["m", "dense_bias"], ["y"]),
]
graph = helper.make_graph(nodes, "conv_bn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 6, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 5])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)], ir_version=8)
onnx.checker.check_model(model, full_check=True)
onnx.save(model, sys.argv[1])
