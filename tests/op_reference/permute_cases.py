"""Writes ONNX test folders of the transposes that move feature maps: Transpose of maps with
4K elements and more (which the CPU runs as oneDNN reorders: providers/cpu/strided_reorder.h)
and of smaller ones, in every element width (float32 with NaN and infinities, int32, uint8,
bool on the reorder; int64 and float16 on the copy loops), ranks 2 to 6 with size-1 axes
among the permuted ones; and convolutions whose 4K-64K-element outputs a plain reader takes
(a Transpose, a Reshape, a graph output: the FromBlocked reorder of the blocked-layout pass);
and tokens turned into maps and back around convolutions as SegFormer writes them (its
Mix-FFN, its decode head's upsampled levels), which the CPU reads as channels-last maps
(providers/cpu/rewrites/token_maps.h).
Expected outputs from onnx.reference, for `tandem test-onnx` exactly (--rtol 0 --atol 0:
tests/CMakeLists.txt permute_reference). make_cases.sh calls write_all(OUT_DIR).
"""
import os

import numpy as np
from onnx import TensorProto, helper

from case_writer import const, write_case

RNG = np.random.default_rng(41)


def values(shape, dtype):
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return RNG.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    a = RNG.standard_normal(shape).astype(dtype)
    flat = a.reshape(-1)
    flat[::97] = np.nan  # every value moves bit for bit, NaN and infinities too
    flat[5::89] = np.inf
    flat[7::83] = -np.inf
    return a


def write_all(out):
    os.makedirs(out)
    count = 0

    def transpose(name, shape, perm, dtype=np.float32):
        nonlocal count
        x = values(shape, dtype)
        node = helper.make_node("Transpose", ["x"], ["y"], perm=perm)
        write_case(out, name, [node], [], {"x": x}, {"y": helper.np_dtype_to_tensor_dtype(np.dtype(dtype))}, 13,
                   in_double=False)
        count += 1

    transpose("matrix", [96, 80], [1, 0])
    transpose("attention_heads_swap_last", [1, 8, 128, 49], [0, 1, 3, 2])   # EfficientFormerV2's k^T
    transpose("tokens_to_heads", [2, 50, 6, 16], [0, 2, 1, 3])              # a ViT's q, k, v split
    transpose("nchw_to_nhwc", [1, 24, 20, 18], [0, 2, 3, 1])                # SegFormer's patch tokens
    transpose("nhwc_to_nchw", [2, 9, 15, 40], [0, 3, 1, 2])                 # tf2onnx's Keras layout
    transpose("tokens_to_channels", [1, 4096, 3], [0, 2, 1])                # a narrow innermost axis
    transpose("rank5_with_unit_axes", [3, 1, 20, 1, 70], [4, 0, 2, 1, 3])
    transpose("rank6", [2, 3, 4, 5, 6, 7], [5, 3, 1, 4, 0, 2])
    transpose("small_map", [1, 16, 8, 8], [0, 2, 3, 1])                    # under 4K: the copy loops
    transpose("int32_map", [1, 32, 16, 16], [0, 2, 3, 1], np.int32)
    transpose("uint8_map", [1, 64, 12, 12], [0, 3, 1, 2], np.uint8)
    transpose("bool_map", [4, 40, 50], [2, 0, 1], np.bool_)
    transpose("int64_map", [1, 16, 24, 24], [0, 2, 3, 1], np.int64)        # 8 bytes: the copy loops
    transpose("float16_map", [1, 16, 24, 24], [0, 2, 3, 1], np.float16)    # 2 bytes: the copy loops

    def conv_read_plain(name, c_out, hw, reader):
        """A 3x3 convolution of c_out channels on an hw x hw map read by `reader`; small
        integers in and out, so that every sum is exact in float32 in any order."""
        nonlocal count
        c_in = 16
        x = RNG.integers(-3, 4, size=(1, c_in, hw, hw)).astype(np.float32)
        w = RNG.integers(-2, 3, size=(c_out, c_in, 3, 3)).astype(np.float32)
        nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                 helper.make_node("Relu", ["c"], ["r"])]
        outputs = {"r": TensorProto.FLOAT}
        if reader == "transpose":
            nodes.append(helper.make_node("Transpose", ["r"], ["y"], perm=[0, 2, 3, 1]))
            outputs = {"y": TensorProto.FLOAT}
        elif reader == "reshape":
            nodes.append(helper.make_node("Reshape", ["r", "shape"], ["y"]))
            outputs = {"y": TensorProto.FLOAT}
        inits = [const("w", w), const("shape", np.array([1, c_out, hw * hw], np.int64))]
        if reader != "reshape":
            inits = inits[:1]
        write_case(out, name, nodes, inits, {"x": x}, outputs, 13)
        count += 1

    conv_read_plain("conv_map_to_transpose", 64, 16, "transpose")   # 16K elements
    conv_read_plain("conv_map_to_reshape", 96, 7, "reshape")       # 4.7K: just over the reorder's threshold
    conv_read_plain("conv_map_as_output", 48, 30, "output")        # 43K
    def ints(*shape, low=-3, high=3):
        return RNG.integers(low, high + 1, size=shape).astype(np.float32)

    def tokens_to_map(b, x, c, h, w, tag):
        """Nodes of tokens x [1, h*w, c] -> Transpose -> Reshape [1, c, h, w]; returns the map."""
        b.append(helper.make_node("Transpose", [x], [f"{tag}_t"], perm=[0, 2, 1]))
        b.append(helper.make_node("Reshape", [f"{tag}_t", f"{tag}_map_shape"], [f"{tag}_m"]))
        return f"{tag}_m", [const(f"{tag}_map_shape", np.array([1, c, h, w], np.int64))]

    # SegFormer's Mix-FFN: tokens -> map -> depthwise 3x3 -> tokens (small integers: exact).
    c, h, w = 32, 12, 10
    nodes = []
    m, inits = tokens_to_map(nodes, "x", c, h, w, "ffn")
    nodes += [helper.make_node("Conv", [m, "dw"], ["dwc"], pads=[1, 1, 1, 1], group=c),
              helper.make_node("Reshape", ["dwc", "rows_shape"], ["rows"]),
              helper.make_node("Transpose", ["rows"], ["y"], perm=[0, 2, 1])]
    inits += [const("dw", ints(c, 1, 3, 3, low=-2, high=2)), const("rows_shape", np.array([1, c, h * w], np.int64))]
    write_case(out, "tokens_mix_ffn", nodes, inits, {"x": ints(1, h * w, c)}, {"y": TensorProto.FLOAT}, 13,
               in_double=False)
    count += 1

    # A decode head: two token levels made maps, the coarse one upsampled 2x (weights 1/4, 3/4:
    # exact on integers), joined and fused by a 1x1 convolution.
    nodes = []
    fine, inits = tokens_to_map(nodes, "x", 16, 8, 8, "fine")
    coarse, more = tokens_to_map(nodes, "x2", 16, 4, 4, "coarse")
    inits += more
    nodes += [helper.make_node("Resize", [coarse, "", "up_scales"], ["up"], mode="linear"),
              helper.make_node("Concat", ["up", fine], ["joined"], axis=1),
              helper.make_node("Conv", ["joined", "fuse"], ["y"])]
    inits += [const("up_scales", np.array([1, 1, 2, 2], np.float32)), const("fuse", ints(16, 32, 1, 1, low=-2, high=2))]
    write_case(out, "tokens_decode_head", nodes, inits, {"x": ints(1, 64, 16), "x2": ints(1, 16, 16)},
               {"y": TensorProto.FLOAT}, 13, in_double=False)
    count += 1
    print(f"wrote {count} permute cases to {out}")
