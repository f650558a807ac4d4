"""Writes ONNX test folders of NonZero and GatherND as detectors' post-processing uses them
(a score mask's hits, then the scores at them: millions of one-element tuples), and of
ScatterElements and GatherElements whose indices have the
data's dims on every axis but the scattered one (the CPU kernels' run path,
providers/cpu/kernels/tensor/index_ops.cc): indices expanded from one per slice, as
torchvision's merge of RoI levels writes them (every run of the slice one index), runs that
mix equal and differing indices, negative indices, duplicates under reduction add, int32
indices, the last axis (runs of one), and indices smaller than the data (the general path).
Expected outputs from onnx.reference, for `tandem test-onnx` (tests/CMakeLists.txt:
index_reference). make_cases.sh calls write_all(OUT_DIR).
"""
import os

import numpy as np
from onnx import TensorProto, helper

from case_writer import const, write_case

RNG = np.random.default_rng(41)


def floats(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def distinct_with_uniform_rows(outer, m, inner, n):
    """Indices [outer, m, inner] into an axis of n: distinct along m at each (outer, inner),
    rows [0, 1, :] all 2 and [1, 2, :] all -1 (n - 1), about half of the rest negative."""
    idx = np.zeros((outer, m, inner), np.int64)
    for o in range(outer):
        for k in range(inner):
            col = list(RNG.permutation(n)[:m])
            for j, v in ((1, 2), (2, n - 1)):
                if (o, j) not in ((0, 1), (1, 2)):
                    continue
                if v in col:
                    p = col.index(v)
                    col[p], col[j] = col[j], col[p]
                else:
                    col[j] = v
            idx[o, :, k] = col
    negative = RNG.random(idx.shape) < 0.5
    negative[0, 1, :] = False
    negative[1, 2, :] = True
    return np.where(negative, idx - n, idx)


def write_all(out):
    os.makedirs(out)

    # RetinaNet: scores > threshold, NonZero, Transpose to [hits, 1], GatherND of the scores
    scores = RNG.random(5000).astype(np.float32)
    nodes = [helper.make_node("Greater", ["scores", "threshold"], ["mask"]),
             helper.make_node("NonZero", ["mask"], ["hits"]),
             helper.make_node("Transpose", ["hits"], ["tuples"], perm=[1, 0]),
             helper.make_node("GatherND", ["scores", "tuples"], ["picked"])]
    write_case(out, "nonzero_then_gathernd", nodes, [const("threshold", np.array(0.3, np.float32))],
               {"scores": scores}, {"hits": TensorProto.INT64, "picked": TensorProto.FLOAT}, 13)
    sparse = floats(3, 4, 5) * (RNG.random((3, 4, 5)) < 0.3)
    write_case(out, "nonzero_rank3", [helper.make_node("NonZero", ["x"], ["y"])], [], {"x": sparse.astype(np.float32)},
               {"y": TensorProto.INT64}, 13)
    # tuples of two coordinates picking rows (slices of 6), negative ones among them
    tuples = np.stack([RNG.integers(-4, 4, 50), RNG.integers(-5, 5, 50)], 1).astype(np.int64)
    given_nd = [helper.make_node("GatherND", ["data", "index"], ["y"])]
    write_case(out, "gathernd_row_slices", given_nd, [const("index", tuples)], {"data": floats(4, 5, 6)},
               {"y": TensorProto.FLOAT}, 13)
    batched = RNG.integers(-5, 5, (3, 7, 1)).astype(np.int64)
    write_case(out, "gathernd_batch_dims", [helper.make_node("GatherND", ["data", "index"], ["y"], batch_dims=1)],
               [const("index", batched)], {"data": floats(3, 5, 2)}, {"y": TensorProto.FLOAT}, 13)

    def expanded(name, op, data_shape, per_slice, axis=0, opset=13, **attrs):
        """`op` over data with indices Expand(per_slice) to data's dims but `axis`."""
        idx_shape = list(data_shape)
        idx_shape[axis] = len(per_slice)
        small = [1] * len(data_shape)
        small[axis] = len(per_slice)
        inits = [const("slice_index", np.array(per_slice, np.int64).reshape(small)),
                 const("index_shape", np.array(idx_shape, np.int64))]
        nodes = [helper.make_node("Expand", ["slice_index", "index_shape"], ["index"])]
        inputs = {"data": floats(*data_shape)}
        if op == "ScatterElements":
            inputs["updates"] = floats(*idx_shape)
            nodes.append(helper.make_node(op, ["data", "index", "updates"], ["y"], axis=axis, **attrs))
        else:
            nodes.append(helper.make_node(op, ["data", "index"], ["y"], axis=axis, **attrs))
        write_case(out, name, nodes, inits, inputs, {"y": TensorProto.FLOAT}, opset)

    def given(name, op, data_shape, index, axis, opset=13, **attrs):
        """`op` over data with the constant indices `index`."""
        inputs = {"data": floats(*data_shape)}
        if op == "ScatterElements":
            inputs["updates"] = floats(*index.shape)
            nodes = [helper.make_node(op, ["data", "index", "updates"], ["y"], axis=axis, **attrs)]
        else:
            nodes = [helper.make_node(op, ["data", "index"], ["y"], axis=axis, **attrs)]
        write_case(out, name, nodes, [const("index", index)], inputs, {"y": TensorProto.FLOAT}, opset)

    # torchvision's _onnx_merge_levels: rows of RoI features scattered into the merged tensor.
    expanded("scatter_expanded_rows", "ScatterElements", [7, 4, 3, 3], [5, 0, -1, 2])
    expanded("scatter_expanded_middle_axis", "ScatterElements", [2, 6, 5, 4], [3, -6, 1], axis=1)
    expanded("scatter_add_duplicate_rows", "ScatterElements", [5, 3, 4], [1, 4, 1, 1], opset=16,
             reduction="add")
    expanded("gather_expanded_rows", "GatherElements", [6, 4, 3, 3], [5, 0, -1, 2, 5])

    # Runs of equal and of differing indices in one tensor, negative indices among them, and
    # no index twice at one position (duplicates under reduction none are undefined).
    mixed = distinct_with_uniform_rows(2, 3, 8, n=5)
    given("scatter_mixed_runs", "ScatterElements", [2, 5, 8], mixed, axis=1)
    given("gather_mixed_runs", "GatherElements", [2, 5, 8], mixed, axis=1)
    given("scatter_mixed_runs_int32", "ScatterElements", [2, 5, 8], mixed.astype(np.int32), axis=1)
    given("scatter_mul_mixed_runs", "ScatterElements", [2, 5, 8], RNG.integers(-5, 5, size=(2, 3, 8)),
          axis=1, opset=16, reduction="mul")

    # The last axis: every run is one element long.
    given("scatter_last_axis", "ScatterElements", [3, 6],
          np.stack([RNG.permutation(6)[:4] for _ in range(3)]).astype(np.int64), axis=1)
    given("gather_last_axis", "GatherElements", [3, 6], RNG.integers(-6, 6, size=(3, 9)).astype(np.int64), axis=1)

    # Indices smaller than the data on an axis other than the scattered one: the general path
    # (onnx.reference's GatherElements takes only indices of the data's other dims).
    given("scatter_smaller_indices", "ScatterElements", [4, 5, 6],
          RNG.integers(0, 4, size=(3, 2, 6)).astype(np.int64), axis=0, opset=16, reduction="add")
