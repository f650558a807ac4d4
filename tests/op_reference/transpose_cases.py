"""Writes ONNX test folders of channels-last graphs as tf2onnx writes Keras models: each
convolution between a Transpose to NCHW and one back to NHWC, and between them the ops the
Session pushes those Transposes through until the pairs cancel
(optimizer/onnx_rewrites/transpose_pushing.h): element-wise ops with constants of every rank
and a second non-constant operand, ReduceMean/ReduceSum/ArgMax with and without keepdims,
Pad (pads as an input and, before opset 11, as an attribute), Concat, Split, Slice,
Softmax, hard_swish and hard_sigmoid spelled out (Add 3, Clip 0..6, Mul 1/6 or Div 6:
hard_sigmoid_folding.h), a value read twice and a graph output between the pairs.
Expected outputs from onnx.reference in float64, for `tandem test-onnx` at the output's
scale (tests/CMakeLists.txt: transpose_reference). make_cases.sh calls write_all(OUT_DIR).
"""
import os

import numpy as np
from onnx import TensorProto, helper

from case_writer import const, write_case

RNG = np.random.default_rng(29)
TO_NCHW, TO_NHWC = [0, 3, 1, 2], [0, 2, 3, 1]


def floats(*shape, scale=1.0, offset=0.0):
    return (offset + scale * RNG.standard_normal(shape)).astype(np.float32)


class Block:
    """Nodes of one case, named in order; `conv` wraps a 3x3 convolution in the Transposes."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, what):
        self.count += 1
        return f"{what}{self.count}"

    def op(self, op_type, inputs, **attrs):
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def constant(self, array):
        name = self.name("c")
        self.inits.append(const(name, array))
        return name

    def conv(self, x, c_in, c_out, group=1):
        t = self.op("Transpose", [x], perm=TO_NCHW)
        w = self.constant(floats(c_out, c_in // group, 3, 3, scale=0.3))
        y = self.op("Conv", [t, w], pads=[1, 1, 1, 1], group=group)
        return self.op("Transpose", [y], perm=TO_NHWC)


def write_all(out):
    os.makedirs(out)
    n, h, w, c = 2, 12, 10, 8
    x = floats(n, h, w, c)

    def case(name, build, opset=13):
        """`build(block)` returns the graph output's name, or a tuple of them."""
        b = Block()
        ys = build(b)
        outs = {k: TensorProto.FLOAT for k in (ys if isinstance(ys, tuple) else (ys,))}
        write_case(out, name, b.nodes, b.inits, {"x": x}, outs, opset)

    def unary_and_broadcast(b):
        a = b.conv("x", c, c)
        a = b.op("Add", [a, b.constant(floats(c))])                      # bias, rank 1
        a = b.op("Mul", [b.constant(floats(1, 1, 1, c, offset=1)), a])   # BN scale, rank 4, constant first
        a = b.op("Relu", [a])
        a = b.op("Sub", [a, b.constant(floats(w, c))])                   # rank 2
        a = b.op("Max", [a, b.constant(np.float32(-0.5))])               # scalar
        return b.conv(a, c, c)
    case("elementwise_between_convolutions", unary_and_broadcast)

    def two_branches(b):
        a = b.conv("x", c, c)
        z = b.conv("x", c, c)
        s = b.op("Add", [a, z])           # both through Transposes
        s = b.op("Where", [b.op("Greater", [s, b.constant(np.float32(0))]), s, b.op("Neg", [a])])
        return b.conv(s, c, c)
    case("two_transposed_operands", two_branches)

    def other_operand(b):
        a = b.conv("x", c, c)
        return b.op("Mul", [a, "x"])       # x is NHWC: it needs a Transpose of its own
    case("operand_without_transpose", other_operand)

    def hard_swish(b):
        a = b.conv("x", c, c)
        g = b.op("Mul", [b.op("Clip", [b.op("Add", [a, b.constant(np.float32(3))]), b.constant(np.float32(0)),
                                       b.constant(np.float32(6))]), b.constant(np.float32(1 / 6))])
        a = b.op("Mul", [a, g])
        # squeeze-excite: a hard_sigmoid gate (Div by 6, the 3 first) on the mean over H and W
        m = b.op("ReduceMean", [a], axes=[1, 2], keepdims=1)
        m = b.conv(m, c, c)
        gate = b.op("Div", [b.op("Clip", [b.op("Add", [b.constant(np.float32(3)), m]), b.constant(np.float32(0)),
                                          b.constant(np.float32(6))]), b.constant(np.float32(6))])
        return b.conv(b.op("Mul", [a, gate]), c, c)
    case("hard_swish_and_squeeze_excite", hard_swish)

    def reductions(b):
        a = b.conv("x", c, c)
        r1 = b.op("ReduceMean", [a], axes=[1, 2], keepdims=0)       # [n, c]: no Transpose after
        r2 = b.op("ReduceSum", [a, b.constant(np.array([-2], np.int64))], keepdims=1)  # over W
        r3 = b.op("ArgMax", [a], axis=2, keepdims=1)                # over W, int64
        r4 = b.op("ReduceMax", [a], axes=[3], keepdims=0)           # [n, h, w]: none either
        r5 = b.op("ArgMin", [a], axis=1, keepdims=0)                # [n, w, c]: a Transpose after
        return (r1, b.conv(r2, c, c), b.conv(b.op("Cast", [r3], to=TensorProto.FLOAT), c, c), r4,
                b.op("Cast", [r5], to=TensorProto.FLOAT))
    case("reductions", reductions)

    def pad(opset):
        def build(b):
            a = b.conv("x", c, c)
            a = b.op("Relu", [a])
            pads = [0, 1, 0, 0, 0, 0, 1, 0]  # NHWC: one row above, one column right (tf2onnx's stride-2 pad)
            if opset >= 11:
                a = b.op("Pad", [a, b.constant(np.array(pads, np.int64))])
            else:
                a = b.op("Pad", [a], pads=pads)
            t = b.op("Transpose", [a], perm=TO_NCHW)
            wd = b.constant(floats(c, 1, 3, 3, scale=0.3))
            y = b.op("Conv", [t, wd], strides=[2, 2], group=c)
            return b.op("Transpose", [y], perm=TO_NHWC)
        return build
    case("pad_before_depthwise", pad(13))
    case("pad_attribute_opset10", pad(10), opset=10)

    def concat_split_slice(b):
        a = b.conv("x", c, c)
        z = b.conv("x", c, c)
        cat = b.op("Concat", [a, z, b.constant(floats(n, h, w, 2))], axis=-1)          # channels
        s1 = b.name("split")
        s2 = b.name("split")
        b.nodes.append(helper.make_node("Split", [cat, b.constant(np.array([6, 12], np.int64))], [s1, s2],
                                        axis=3, name=s1))
        sl = b.op("Slice", [s2, b.constant(np.array([1, 2], np.int64)), b.constant(np.array([11, 9], np.int64)),
                            b.constant(np.array([1, 2], np.int64))])                     # H and W
        sm = b.op("Softmax", [sl], axis=3)
        first = b.op("Slice", [s1, b.constant(np.array([0, 0], np.int64)), b.constant(np.array([1, 6], np.int64))])
        return b.conv(b.op("Add", [sm, b.constant(floats(12))]), 12, c), first
    case("concat_split_slice_softmax", concat_split_slice)

    def output_between(b):
        a = b.conv("x", c, c)
        mid = b.op("Sigmoid", [a])        # a graph output, NHWC, between the pairs
        return b.conv(b.op("Mul", [mid, a]), c, c), mid
    case("graph_output_between_pairs", output_between)
    print(f"wrote {len(os.listdir(out))} transpose cases to {out}")
