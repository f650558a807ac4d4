"""Writes models whose content asks for absurd resources or is broken, for
bad_models_test.sh: each must make `tandem run` exit non-zero with a one-line reason.

usage: make_bad_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(name, nodes, inputs, outputs, inits=(), opset=17, check=True):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    if check:
        onnx.checker.check_model(model)
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())
    return model


def vi(name, dims, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, dims)


relu = [helper.make_node("Relu", ["x"], ["y"])]
# A 2^40-element input (4 TiB of float).
save("huge_input", relu, [vi("x", [1 << 20, 1 << 20])], [vi("y", [1 << 20, 1 << 20])])
# Dimensions whose product overflows int64 (opset 18: past libonnx's checks).
save("overflow_input", relu, [vi("x", [1 << 40, 1 << 40])], [vi("y", [1 << 40, 1 << 40])],
     opset=18, check=False)
# A negative declared dimension.
save("negative_dim", relu, [vi("x", [-5, 3])], [vi("y", [-5, 3])], opset=18, check=False)
# Expand of a small input to 2^40 elements at run time.
shape = numpy_helper.from_array(np.array([1 << 20, 1 << 20], np.int64), "shape")
save("huge_expand", [helper.make_node("Expand", ["x", "shape"], ["y"])], [vi("x", [1])],
     [vi("y", [1 << 20, 1 << 20])], [shape])
# ConstantOfShape with a constant shape: folded when the session loads.
save("huge_constant_of_shape", [helper.make_node("ConstantOfShape", ["shape"], ["c"]),
                                helper.make_node("Add", ["x", "c"], ["y"])],
     [vi("x", [1])], [vi("y", [1 << 20, 1 << 20])], [shape])
# Pad by 2^62 on both sides of an axis: the output size overflows int64.
pads = numpy_helper.from_array(np.array([0, 1 << 62, 0, 1 << 62], np.int64), "pads")
save("pad_overflow", [helper.make_node("Pad", ["x", "pads"], ["y"], mode="edge")],
     [vi("x", [1, 1])], [vi("y", [1, 1])], [pads], opset=18, check=False)
# An initializer whose raw data stops short of its dims.
w = numpy_helper.from_array(np.ones((64, 64), np.float32), "w")
w.raw_data = w.raw_data[:1000]
save("truncated_weights", [helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", [1, 64])],
     [vi("y", [1, 64])], [w], check=False)
# An initializer that declares 2^40 elements and carries none.
big = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 20, 1 << 20])
save("huge_weights_no_data", [helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [1])],
     [vi("y", [1 << 20, 1 << 20])], [big], check=False)
# The same at opset 18, past libonnx's checker: Tandem's own checks must catch it.
save("huge_weights_no_data_opset18", [helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [1])],
     [vi("y", [1 << 20, 1 << 20])], [big], opset=18, check=False)
save("truncated_weights_opset18", [helper.make_node("MatMul", ["x", "w"], ["y"])],
     [vi("x", [1, 64])], [vi("y", [1, 64])], [w], opset=18, check=False)
# A Loop whose trip count is 2^62.
body = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Add", ["v_in", "one"], ["v_out"])],
    "body", [vi("i", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL), vi("v_in", [1])],
    [vi("cond_out", [], TensorProto.BOOL), vi("v_out", [1])],
    [numpy_helper.from_array(np.ones(1, np.float32), "one")])
trip = numpy_helper.from_array(np.array(1 << 62, np.int64), "trip")
cond = numpy_helper.from_array(np.array(True), "cond")
save("endless_loop", [helper.make_node("Loop", ["trip", "cond", "x"], ["y"], body=body)],
     [vi("x", [1])], [vi("y", [1])], [trip, cond])


# If nodes nested 500 deep (each then-branch holds the next If).
def nested_if(depth):
    inner = helper.make_graph([helper.make_node("Identity", ["x"], ["r0"])], "leaf", [], [vi("r0", [1])])
    for d in range(1, depth):
        leaf = helper.make_graph([helper.make_node("Identity", ["x"], [f"e{d}"])], "leaf", [],
                                 [vi(f"e{d}", [1])])
        node = helper.make_node("If", ["c"], [f"r{d}"], then_branch=inner, else_branch=leaf)
        inner = helper.make_graph([node], f"level{d}", [], [vi(f"r{d}", [1])])
    return helper.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=inner)  # 2 copies


save("deep_subgraphs", [nested_if(500)], [vi("x", [1]), vi("c", [], TensorProto.BOOL)],
     [vi("y", [1])], check=False)
print("wrote", len(os.listdir(out)), "models to", out)
