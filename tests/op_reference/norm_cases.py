"""Writes ONNX test folders of InstanceNormalization and GroupNormalization on maps large
enough for the CPU kernels' float path to split its planes across the OpenMP team
(providers/cpu/kernels/nn/norm.cc), and of Softmax over an axis that is not the last
(kernels/nn/softmax.cc's column loop: YOLO's distribution focal loss head, a tail of
columns short of a vector, a NaN), with expected outputs from onnx.reference in float64,
for `tandem test-onnx` at the output's scale (tests/CMakeLists.txt: norm_reference): the
GroupNorm of a diffusers VAE (32 groups), GroupNormalization of opset 18 (a scale per group)
and 21 (per channel), and GroupNorm as the legacy exporter writes it (Reshape to
[N, groups, -1], InstanceNormalization, Reshape back, Mul, Add), on its own and between
convolutions with SiLU after it (the CPU's FusedGroupNorm, providers/cpu/rewrites/group_norm.h,
on the blocked maps). make_cases.sh calls write_all(OUT_DIR).
"""
import os

import numpy as np
from onnx import TensorProto, helper

from case_writer import const, write_case

RNG = np.random.default_rng(13)


def floats(*shape, scale=1.0, offset=0.0):
    return (offset + scale * RNG.standard_normal(shape)).astype(np.float32)


def case(out, name, nodes, inits, x, opset, check=True):
    write_case(out, name, nodes, inits, {"x": x}, {"y": (TensorProto.FLOAT, x.shape)}, opset, check=check)


def write_all(out):
    os.makedirs(out)
    case(out, "instance_norm", [helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-5)],
         [const("s", floats(8, offset=1)), const("b", floats(8))], floats(2, 8, 64, 64, scale=3, offset=2), 13)
    case(out, "group_norm_opset18_per_group",
         [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=4, epsilon=1e-5)],
         [const("s", floats(4, offset=1)), const("b", floats(4))], floats(1, 16, 40, 40, scale=2, offset=-1), 18,
         check=False)  # deprecated since: today's checker refuses it
    case(out, "group_norm_opset21_vae",
         [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=32, epsilon=1e-6)],
         [const("s", floats(128, offset=1)), const("b", floats(128))], floats(1, 128, 32, 32, scale=2, offset=1), 21)
    # The legacy exporter's GroupNorm of 8 groups over 64 channels.
    nodes = [helper.make_node("Reshape", ["x", "grouped"], ["g"]),
             helper.make_node("InstanceNormalization", ["g", "ones", "zeros"], ["n"], epsilon=1e-5),
             helper.make_node("Reshape", ["n", "full"], ["r"]),
             helper.make_node("Mul", ["r", "gamma"], ["m"]), helper.make_node("Add", ["m", "beta"], ["y"])]
    inits = [const("grouped", np.array([2, 8, -1], np.int64)), const("full", np.array([2, 64, 24, 24], np.int64)),
             const("ones", np.ones(8, np.float32)), const("zeros", np.zeros(8, np.float32)),
             const("gamma", floats(64, 1, 1, offset=1)), const("beta", floats(64, 1, 1))]
    case(out, "group_norm_legacy_export", nodes, inits, floats(2, 64, 24, 24, scale=2), 17)
    # GroupNorm + SiLU between convolutions, as the dynamo exporter writes a diffusion VAE's
    # (Reshape to [N, groups, -1], InstanceNormalization, Reshape back, Mul, Add, Sigmoid,
    # Mul), which the CPU runs as one FusedGroupNorm on the convolutions' blocked maps: 8
    # channels a group; 4 a group (groups across the layout's blocks) with only the Add.
    def conv(name, inp, c_in, c_out):
        return (helper.make_node("Conv", [inp, name + ".w", name + ".b"], [name], pads=[1, 1, 1, 1]),
                [const(name + ".w", floats(c_out, c_in, 3, 3, scale=0.2)), const(name + ".b", floats(c_out, scale=0.1))])

    for name, c, groups, affine in (("group_norm_silu_between_convs", 64, 8, True),
                                    ("group_norm_silu_groups_across_blocks", 48, 12, False)):
        first, a = conv("first", "x", 3, c)
        last, b = conv("last", "act", c, 8)
        last.output[0] = "y"
        nodes = [first, helper.make_node("Reshape", ["first", "grouped"], ["g"]),
                 helper.make_node("InstanceNormalization", ["g", "ones", "zeros"], ["n"], epsilon=1e-6),
                 helper.make_node("Reshape", ["n", "full"], ["r"])]
        inits = a + b + [const("grouped", np.array([0, groups, -1], np.int64)),
                         const("full", np.array([2, c, 19, 21], np.int64)),
                         const("ones", np.ones(groups, np.float32)), const("zeros", np.zeros(groups, np.float32)),
                         const("beta", floats(c, 1, 1))]
        if affine:
            nodes.append(helper.make_node("Mul", ["r", "gamma"], ["m"]))
            inits.append(const("gamma", floats(c, 1, 1, offset=1)))
        nodes += [helper.make_node("Add", ["m" if affine else "r", "beta"], ["gn"]),
                  helper.make_node("Sigmoid", ["gn"], ["sig"]), helper.make_node("Mul", ["gn", "sig"], ["act"]), last]
        write_case(out, name, nodes, inits, {"x": floats(2, 3, 19, 21, scale=2, offset=1)},
                   {"y": (TensorProto.FLOAT, (2, 8, 19, 21))}, 17)
    case(out, "softmax_yolo_dfl", [helper.make_node("Softmax", ["x"], ["y"], axis=1)], [],
         floats(1, 16, 4, 8400, scale=3), 13)
    odd = floats(2, 7, 5, 37, scale=4)
    odd[1, 3, 2, 30] = np.nan
    case(out, "softmax_middle_axis_tail", [helper.make_node("Softmax", ["x"], ["y"], axis=-3)], [], odd, 13)
    print(f"wrote {len(os.listdir(out))} normalization cases to {out}")
