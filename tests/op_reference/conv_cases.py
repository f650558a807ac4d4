"""Writes ONNX test folders of the convolutions the CPU provider runs on paths of their own
(providers/cpu/kernels/nn/conv.cc): channel-multiplier convolutions (group = input channels,
m outputs per group), run as depthwise convolutions of the channels repeated m times
(repeat_channels.h) — FastViT's 7x7 stride-2 downsampling (m = 2), a 3x3 with m = 3 and a
bias, a dilated 3x3 (m = 4), a 1x1 (m = 2) — on the graph's plain input and between
convolutions (where the blocked-layout pass gives them channel-blocked or channels-last
maps), with a ReLU fused after; and 1x1 convolutions of one-pixel maps (MobileNetV3's head
after its pool, with its HardSwish; batch 1 and 3), run as products with packed weights
(microkernels/skinny_gemm.h), and one whose leading pad leaves it only the bias. Expected outputs from onnx.reference in float64, for `tandem
test-onnx` at the output's scale on each instruction set and convolution layout
(tests/CMakeLists.txt: conv_reference). make_cases.sh calls write_all(OUT_DIR).
"""
import os

import numpy as np
from onnx import TensorProto, helper

from case_writer import const, write_case

RNG = np.random.default_rng(41)


def floats(*shape, scale=1.0):
    return (scale * RNG.standard_normal(shape)).astype(np.float32)


def write_all(out):
    os.makedirs(out)

    def conv(name, inp, c_in, c_out, k, pad, group=1, stride=1, dilation=1, bias=True):
        inits = [const(name + ".w", floats(c_out, c_in // group, k, k, scale=0.3))]
        inputs = [inp, name + ".w"]
        if bias:
            inits.append(const(name + ".b", floats(c_out, scale=0.2)))
            inputs.append(name + ".b")
        return helper.make_node("Conv", inputs, [name], name=name, pads=[pad] * 4, group=group,
                                strides=[stride, stride], dilations=[dilation, dilation]), inits

    # (name, channels, multiplier, kernel, pad, stride, dilation, bias)
    shapes = [("k7_s2_m2", 16, 2, 7, 3, 2, 1, False), ("k3_m3_bias", 16, 3, 3, 1, 1, 1, True),
              ("k3_dilated_m4", 16, 4, 3, 2, 1, 2, True), ("k1_m2", 32, 2, 1, 0, 1, 1, True)]
    for name, c, m, k, pad, stride, dilation, bias in shapes:
        # On the graph's input
        node, inits = conv("mult", "x", c, c * m, k, pad, group=c, stride=stride, dilation=dilation, bias=bias)
        node.output[0] = "y"
        write_case(out, "input_" + name, [node], inits, {"x": floats(2, c, 19, 17)}, {"y": TensorProto.FLOAT}, 13)
        # Between convolutions, a ReLU after it
        first, a = conv("first", "x", 8, c, 3, 1)
        mult, b = conv("mult", "r0", c, c * m, k, pad, group=c, stride=stride, dilation=dilation, bias=bias)
        last, d = conv("last", "r1", c * m, 16, 1, 0)
        last.output[0] = "y"
        nodes = [first, helper.make_node("Relu", ["first"], ["r0"]), mult, helper.make_node("Relu", ["mult"], ["r1"]),
                 last]
        write_case(out, "chain_" + name, nodes, a + b + d, {"x": floats(1, 8, 24, 21)}, {"y": TensorProto.FLOAT}, 13)

    # MobileNetV3's head: Conv -> GlobalAveragePool -> 1x1 Conv + HardSwish -> 1x1 Conv
    for batch in (1, 3):
        stem, a = conv("stem", "x", 8, 96, 3, 1)
        head, b = conv("head", "pooled", 96, 1280, 1, 0)
        cls, d = conv("cls", "h", 1280, 40, 1, 0, bias=False)
        cls.output[0] = "y"
        nodes = [stem, helper.make_node("GlobalAveragePool", ["stem"], ["pooled"]), head,
                 helper.make_node("HardSwish", ["head"], ["h"]), cls]
        write_case(out, f"point_head_batch{batch}", nodes, a + b + d, {"x": floats(batch, 8, 9, 7)},
                   {"y": TensorProto.FLOAT}, 14)
    # ... but padded before and strided so that its one output pixel is on the padding: the bias
    node = helper.make_node("Conv", ["x", "pw", "pb"], ["y"], pads=[1, 1, 0, 0], strides=[2, 2])
    write_case(out, "point_on_the_padding", [node],
               [const("pw", floats(1280, 96, 1, 1, scale=0.1)), const("pb", floats(1280))],
               {"x": floats(1, 96, 1, 1)}, {"y": TensorProto.FLOAT}, 14)
