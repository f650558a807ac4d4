#!/usr/bin/python3
"""A 2-32-32-1 MLP with Dropout(0.25) after both hidden layers (drop2 has a seed
attribute, drop1 takes tandem train --seed), for the training tests.
usage: tests/dropout_mlp_model.py OUT.onnx"""
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
rng = np.random.default_rng(1)
def init(name, shape, scale):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)
inits = [init("w1", (2, 32), 0.7), init("b1", (32,), 0.1), init("w2", (32, 32), 0.18),
         init("b2", (32,), 0.1), init("w3", (32, 1), 0.18), init("b3", (1,), 0.0),
         numpy_helper.from_array(np.array(0.25, np.float32), "ratio")]
nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], name="fc1"),
         helper.make_node("Relu", ["h1"], ["r1"], name="relu1"),
         helper.make_node("Dropout", ["r1", "ratio"], ["d1"], name="drop1"),
         helper.make_node("Gemm", ["d1", "w2", "b2"], ["h2"], name="fc2"),
         helper.make_node("Relu", ["h2"], ["r2"], name="relu2"),
         helper.make_node("Dropout", ["r2", "ratio"], ["d2", "m2"], name="drop2", seed=5),
         helper.make_node("Gemm", ["d2", "w3", "b3"], ["y"], name="fc3")]
g = helper.make_graph(nodes, "dropout_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 1])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1])
