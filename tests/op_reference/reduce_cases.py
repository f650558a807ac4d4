"""Writes ONNX test folders of the float32 sums over adjacent axes that the CPU's
Reduce kernel adds in vector lanes (providers/cpu/microkernels/row_sums.h): ReduceL2 over
the tokens as EdgeNeXt's XCA attention normalizes q and k (F.normalize: ReduceL2, Clip, Div),
ReduceSum, ReduceMean, ReduceSumSquare and ReduceL1 over the last axis and over the last two,
a row long enough for many blocks with a tail, axes given as an input (opset 18) and as an
attribute (13), keepdims 0 and 1; over middle axes (row_sums.h's column sums: a mean over
the tokens, a sum of squares over two axes, a long axis before a narrow one, its rows split
between the threads); and over an outer axis. Expected outputs from onnx.reference in
float64, for `tandem test-onnx` at the output's scale (tests/CMakeLists.txt:
reduce_reference). make_cases.sh calls write_all(OUT_DIR).
"""
import os

import numpy as np
from onnx import TensorProto, helper

from case_writer import const, write_case

RNG = np.random.default_rng(31)


def floats(*shape, scale=1.0, offset=0.0):
    return (offset + scale * RNG.standard_normal(shape)).astype(np.float32)


def write_all(out):
    os.makedirs(out)

    def case(name, nodes, inits, x, opset):
        write_case(out, name, nodes, inits, {"x": x}, {"y": TensorProto.FLOAT}, opset)

    # F.normalize(q, dim=-1) of XCA: [batch, heads, channels per head, tokens]
    q = floats(1, 8, 12, 1024, scale=2, offset=0.5)
    case("xca_normalize_opset18",
         [helper.make_node("ReduceL2", ["x", "axes"], ["n"], keepdims=1),
          helper.make_node("Clip", ["n", "eps"], ["c"]), helper.make_node("Div", ["x", "c"], ["y"])],
         [const("axes", np.array([-1], np.int64)), const("eps", np.array(1e-12, np.float32))], q, 18)
    x = floats(3, 5, 67, 41, scale=3, offset=1)
    case("reducesum_last_two_axes", [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
         [const("axes", np.array([2, -1], np.int64))], x, 13)  # ReduceSum takes axes as an input from 13
    for op in ("ReduceMean", "ReduceSumSquare", "ReduceL1", "ReduceL2"):
        case(f"{op.lower()}_last_two_axes", [helper.make_node(op, ["x"], ["y"], axes=[2, 3], keepdims=0)], [], x, 13)
    case("reducemean_one_long_row", [helper.make_node("ReduceMean", ["x"], ["y"], keepdims=1)], [],
         floats(1, 70001, scale=5, offset=2), 13)
    case("reducel2_outer_axis", [helper.make_node("ReduceL2", ["x"], ["y"], axes=[0], keepdims=1)], [], x, 13)
    case("reducesum_middle_axis", [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=1)],
         [const("axes", np.array([1], np.int64))], x, 13)
    # Column sums: the mean over the tokens of [batch, tokens, channels] (LeViT's and ViTs'
    # pooling), keepdims 0; a sum of squares over two adjacent middle axes, kept ones on both
    # sides; an L1 over a long middle axis (several blocks of rows) with a narrow inner one
    case("reducemean_tokens", [helper.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0)], [],
         floats(2, 16, 384, scale=2, offset=0.5), 13)
    case("reducesumsquare_middle_two_axes",
         [helper.make_node("ReduceSumSquare", ["x"], ["y"], axes=[1, 2], keepdims=1)], [], x, 13)
    case("reducel1_long_middle_axis", [helper.make_node("ReduceL1", ["x"], ["y"], axes=[1], keepdims=1)], [],
         floats(2, 1500, 3, scale=4, offset=-1), 13)
    # one image and few columns: the rows split between the threads, their parts added
    case("reducemean_rows_in_parts", [helper.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0)], [],
         floats(1, 5003, 5, scale=3, offset=2), 13)
    print(f"wrote {len(os.listdir(out))} reduce cases to {out}")
