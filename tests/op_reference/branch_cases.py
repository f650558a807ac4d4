"""Writes ONNX test folders of parallel branches of one input added together, which the
Session merges into one convolution (optimizer/onnx_rewrites/conv_branch_merging.h) as timm's
RepVGG-style models export them before reparameterization: a MobileOne block (3x3 and 1x1
convolutions, a BatchNormalization identity branch and MobileOne's `+ 0`), FastViT's RepMixer
(x + layer_scale * (mixer(x) - norm(x))), FastViT's large-kernel downsampling (7x7 and 3x3
grouped convolutions, two outputs per group, stride 2), RepViT's depthwise 3x3 + 1x1 + x, a
branch subtracted, and pairs that must not merge (pads that do not center the smaller
kernel, different strides); and LeViT's Linear + BatchNorm1d (MatMul, Flatten, BatchNormalization,
Reshape back by the product's Shape; or Reshapes to rows and back by constant shapes),
which the Session folds into the MatMul (matmul_bn_folding.h). Expected outputs from
onnx.reference in float64, for `tandem test-onnx` at the output's scale
(tests/CMakeLists.txt: branch_reference). make_cases.sh calls write_all(OUT_DIR).
"""
import os

import numpy as np
from onnx import TensorProto, helper

from case_writer import const, write_case

RNG = np.random.default_rng(37)


def floats(*shape, scale=1.0, offset=0.0):
    return (offset + scale * RNG.standard_normal(shape)).astype(np.float32)


def write_all(out):
    os.makedirs(out)
    x = floats(1, 16, 14, 12)

    def case(name, nodes, inits, x=x):
        # opset 15: onnx.reference's BatchNormalization of opsets 9 to 13 normalizes by the
        # batch's own statistics once momentum has its default, unlike the operator's spec
        write_case(out, name, nodes, inits, {"x": x}, {"y": TensorProto.FLOAT}, 15)

    def conv(name, inp, c_in, c_out, k, pad, group=1, stride=1, bias=True):
        inits = [const(name + ".w", floats(c_out, c_in // group, k, k, scale=0.3))]
        inputs = [inp, name + ".w"]
        if bias:
            inits.append(const(name + ".b", floats(c_out, scale=0.2)))
            inputs.append(name + ".b")
        return helper.make_node("Conv", inputs, [name], name=name, pads=pad if isinstance(pad, list) else [pad] * 4,
                                group=group,
                                strides=[stride, stride]), inits

    def bn(name, inp, c):
        inits = [const(name + ".s", floats(c, scale=0.2, offset=1)), const(name + ".b", floats(c, scale=0.2)),
                 const(name + ".m", floats(c, scale=0.2)), const(name + ".v", np.abs(floats(c, scale=0.3, offset=1)))]
        return helper.make_node("BatchNormalization", [inp] + [i.name for i in inits], [name], name=name,
                                epsilon=1e-5), inits

    def block(parts):
        nodes, inits = [], []
        for n, i in parts:
            nodes.append(n)
            inits += i
        return nodes, inits

    # MobileOne: (conv_scale(x) + 0) + bn(x) + conv_kxk(x), then ReLU
    nodes, inits = block([conv("scale", "x", 16, 16, 1, 0), bn("identity", "x", 16), conv("kxk", "x", 16, 16, 3, 1)])
    nodes += [helper.make_node("Add", ["scale", "zero"], ["s0"]), helper.make_node("Add", ["s0", "identity"], ["s1"]),
              helper.make_node("Add", ["s1", "kxk"], ["s2"]), helper.make_node("Relu", ["s2"], ["y"])]
    case("mobileone_block", nodes, inits + [const("zero", np.array(0, np.float32))])

    # FastViT RepMixer on depthwise branches
    nodes, inits = block([bn("mixer_id", "x", 16), conv("mixer_scale", "x", 16, 16, 1, 0, group=16),
                          conv("mixer_kxk", "x", 16, 16, 3, 1, group=16), bn("norm_id", "x", 16)])
    nodes += [helper.make_node("Add", ["mixer_scale", "mixer_id"], ["m0"]),
              helper.make_node("Add", ["m0", "mixer_kxk"], ["m1"]), helper.make_node("Sub", ["m1", "norm_id"], ["d"]),
              helper.make_node("Mul", ["d", "gamma"], ["g"]), helper.make_node("Add", ["x", "g"], ["y"])]
    case("fastvit_repmixer", nodes, inits + [const("gamma", floats(16, 1, 1, scale=0.5))])

    # FastViT's downsampling: 7x7 and 3x3 grouped convolutions, two outputs per group, stride 2
    nodes, inits = block([conv("large", "x", 16, 32, 7, 3, group=16, stride=2),
                          conv("small", "x", 16, 32, 3, 1, group=16, stride=2, bias=False)])
    nodes += [helper.make_node("Add", ["large", "small"], ["y"])]
    case("fastvit_large_kernel_stride2", nodes, inits)

    # RepViT's RepVGGDW: dw 3x3 + dw 1x1 + x, the second branch subtracted for the sign
    nodes, inits = block([conv("dw3", "x", 16, 16, 3, 1, group=16), conv("dw1", "x", 16, 16, 1, 0, group=16)])
    nodes += [helper.make_node("Sub", ["dw3", "dw1"], ["d"]), helper.make_node("Add", ["d", "x"], ["y"])]
    case("repvgg_dw_subtract_and_identity", nodes, inits)

    # Must not merge: a 3x3 padded above and left only (the 1x1 would not sit at its center),
    # and different strides
    nodes, inits = block([conv("a3", "x", 16, 16, 3, [2, 2, 0, 0]), conv("a1", "x", 16, 16, 1, 0)])
    nodes += [helper.make_node("Add", ["a3", "a1"], ["y"])]
    case("uncentered_pads_stay", nodes, inits)
    nodes, inits = block([conv("s1", "x", 16, 8, 1, 0, stride=2), conv("s2", "x", 16, 8, 3, 1, stride=2),
                          conv("s3", "x", 16, 8, 3, 1)])
    nodes += [helper.make_node("Add", ["s1", "s2"], ["t"]),
              helper.make_node("MaxPool", ["s3"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
              helper.make_node("Add", ["t", "p"], ["y"])]
    case("different_strides_stay", nodes, inits)
    # LeViT's LinearNorm on tokens [1, 49, 16]
    tokens = floats(1, 49, 16)
    nodes, inits = block([bn("bn1d", "flat", 24)])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"]), helper.make_node("Flatten", ["mm"], ["flat"], axis=2),
             nodes[0], helper.make_node("Shape", ["mm"], ["shape"]), helper.make_node("Reshape", ["bn1d", "shape"], ["y"])]
    case("levit_linear_batchnorm", nodes, inits + [const("w", floats(16, 24, scale=0.3))], x=tokens)
    # ... as the dynamo exporter writes it: Reshapes to [49, 24] and back
    nodes, inits = block([bn("bn1d", "flat", 24)])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"]), helper.make_node("Reshape", ["mm", "rows"], ["flat"]),
             nodes[0], helper.make_node("Reshape", ["bn1d", "back"], ["y"])]
    case("levit_linear_batchnorm_reshaped", nodes,
         inits + [const("w", floats(16, 24, scale=0.3)), const("rows", np.array([49, 24], np.int64)),
                  const("back", np.array([1, 49, 24], np.int64))], x=tokens)
    print(f"wrote {len(os.listdir(out))} branch cases to {out}")
