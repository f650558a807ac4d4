"""Writes one ONNX test folder (model.onnx, test_data_set_0/{input,output}_N.pb) whose
expected outputs come from onnx's reference implementation (onnx.reference): the shared
part of the op_reference generators (make_cases.sh)."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def as_double(model):
    """The same graph in float64: float initializers and value types converted."""
    twin = onnx.ModelProto()
    twin.CopyFrom(model)
    g = twin.graph
    for init in g.initializer:
        if init.data_type == TensorProto.FLOAT:
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float64), init.name))
    for vi in list(g.input) + list(g.output):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.DOUBLE
    return twin


def write_case(out_dir, name, nodes, inits, inputs, outputs, opset, in_double=True, check=True):
    """The model of `nodes` and `inits` with graph inputs `inputs` ({name: array}) and outputs
    `outputs` ({name: TensorProto element type, or (type, shape)}), and onnx.reference's outputs for those
    inputs: computed on the model's float64 twin (`in_double`, then rounded to float32), or
    on the model itself. `check`: onnx's checker (today's refuses ops deprecated since, such
    as GroupNormalization-18, which models of that opset still hold)."""
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                      for k, v in inputs.items()],
        [helper.make_tensor_value_info(k, *(t if isinstance(t, tuple) else (t, None))) for k, t in outputs.items()],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8  # what libonnx 1.12's checker knows
    model = onnx.shape_inference.infer_shapes(model)
    if check:
        onnx.checker.check_model(model)
    if in_double:
        feeds = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in inputs.items()}
        got = ReferenceEvaluator(as_double(model)).run(None, feeds)
        got = [g.astype(np.float32) if g.dtype == np.float64 else g for g in got]
    else:
        got = ReferenceEvaluator(model).run(None, inputs)
    folder = os.path.join(out_dir, name)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for kind, named in (("input", inputs), ("output", dict(zip(outputs, got)))):
        for i, (tensor_name, array) in enumerate(named.items()):
            with open(os.path.join(data, f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(array, tensor_name).SerializeToString())
