"""Writes ONNX test folders (model.onnx, test_data_set_0/{input,output}_N.pb) of Resize in
every mode and coordinate transform, with expected outputs from onnx's reference
implementation (onnx.reference) run in float64 on a double twin of each model, for
`tandem test-onnx` to check at the output's scale (tests/CMakeLists.txt: resize_reference).

The cases cover the CPU provider's separable kernel (providers/cpu/kernels/nn/
resize_separable.h): planes resized in NCHW (inner 1), channels-last maps resized along H
and W (inner C), one axis, rank 2 and 3, up- and downsampling, antialias, exclude_outside,
maps large enough to split across threads; the reference kernel's cases (tf_crop_and_resize,
three resized axes); and Resizes between convolutions, which the blocked-layout pass
(providers/cpu/rewrites/blocked_layout.h) runs on blocked maps, with constant scales,
constant sizes, sizes computed from Shape, a Resize whose output only a graph output
reads (it stays plain), and upsampling Resizes of plain maps (a Transpose's output) that a
convolution reads, alone or through a Concat (they read their input converted into the
blocks: ToBlocked). make_cases.sh calls write_all(OUT_DIR).
"""
import os

import numpy as np
from onnx import TensorProto, helper

from case_writer import const, write_case

RNG = np.random.default_rng(7)


def resize_node(x, out, scales=None, sizes=None, roi=None, **attrs):
    """A Resize node and its constant inputs: (node, initializers)."""
    inits, names = [], [x, "", "", ""]
    for i, (suffix, value, dtype) in enumerate((("roi", roi, np.float32), ("scales", scales, np.float32),
                                                 ("sizes", sizes, np.int64)), start=1):
        if value is not None:
            names[i] = f"{out}_{suffix}"
            inits.append(const(names[i], np.array(value, dtype)))
    while names[-1] == "":
        names.pop()
    return helper.make_node("Resize", names, [out], **attrs), inits


def conv(x, out, cin, cout, kernel=3, stride=1):
    """A Conv node of constant weights and bias (pads keep the map unless strided)."""
    w = (RNG.standard_normal((cout, cin, kernel, kernel)) / np.sqrt(cin * kernel * kernel)).astype(np.float32)
    b = (0.1 * RNG.standard_normal(cout)).astype(np.float32)
    node = helper.make_node("Conv", [x, f"{out}_w", f"{out}_b"], [out], pads=[kernel // 2] * 4,
                            strides=[stride, stride])
    return node, [const(f"{out}_w", w), const(f"{out}_b", b)]


def write(out_dir, name, nodes, inits, x_shape, opset):
    """x (seeded, standard normal) -> nodes -> y, against the float64 reference."""
    write_case(out_dir, name, nodes, inits, {"x": RNG.standard_normal(x_shape).astype(np.float32)},
               {"y": TensorProto.FLOAT}, opset)


def single(out_dir, name, x_shape, opset=13, **resize):
    node, inits = resize_node("x", "y", **resize)
    write(out_dir, name, [node], inits, x_shape, opset)


def between_convs(out_dir, name, size, channels, opset=13, **resize):
    """x[1,3,size,size] -> Conv `channels` -> Resize -> Relu -> Conv 8 = y: the Resize reads and
    writes the convolutions' blocked layout."""
    c0, i0 = conv("x", "c0", 3, channels)
    r, ir = resize_node("c0", "r", **resize)
    c1, i1 = conv("a", "y", channels, 8)
    write(out_dir, name, [c0, r, helper.make_node("Relu", ["r"], ["a"]), c1], i0 + ir + i1, [1, 3, size, size], opset)


def write_all(out):
    os.makedirs(out)
    # Planes, NCHW: the separable kernel with inner 1.
    single(out, "linear_half_pixel_up2", [1, 21, 17, 13], scales=[1, 1, 2, 2], mode="linear")
    single(out, "linear_pytorch_half_pixel_sizes", [2, 5, 13, 11], sizes=[2, 5, 40, 31], mode="linear",
           coordinate_transformation_mode="pytorch_half_pixel")
    single(out, "linear_align_corners_up_down", [1, 3, 31, 29], sizes=[1, 3, 12, 47], mode="linear",
           coordinate_transformation_mode="align_corners")
    single(out, "linear_asymmetric_half_triple", [1, 4, 20, 9], scales=[1, 1, 0.5, 3], mode="linear",
           coordinate_transformation_mode="asymmetric")
    single(out, "nearest_asymmetric_floor_up2", [1, 16, 20, 20], scales=[1, 1, 2, 2], mode="nearest",
           coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    single(out, "nearest_half_pixel_prefer_ceil_sizes", [2, 3, 9, 14], sizes=[2, 3, 23, 5], mode="nearest",
           nearest_mode="round_prefer_ceil")
    single(out, "cubic_half_pixel_up2", [1, 3, 12, 10], scales=[1, 1, 2, 2], mode="cubic")
    single(out, "cubic_exclude_outside_down", [1, 3, 25, 19], sizes=[1, 3, 11, 8], mode="cubic",
           cubic_coeff_a=-0.5, exclude_outside=1)
    single(out, "linear_antialias_down", [1, 4, 64, 48], sizes=[1, 4, 21, 13], mode="linear", antialias=1,
           opset=18)
    single(out, "cubic_antialias_down", [1, 2, 40, 40], scales=[1, 1, 0.3, 0.45], mode="cubic", antialias=1,
           opset=18)
    single(out, "linear_axes_hw_sizes", [1, 6, 15, 10], sizes=[31, 19], axes=[2, 3], mode="linear", opset=18)
    single(out, "linear_half_pixel_symmetric", [1, 3, 10, 10], scales=[1, 1, 1.6, 2.3], mode="linear",
           coordinate_transformation_mode="half_pixel_symmetric", opset=19)
    # Channels-last maps (H and W of [N, H, W, C]): inner C, contiguous.
    single(out, "nhwc_linear_up", [1, 20, 24, 16], scales=[1, 1.5, 2, 1], mode="linear")
    single(out, "nhwc_nearest_up2", [2, 9, 7, 24], scales=[1, 2, 2, 1], mode="nearest",
           coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    single(out, "nhwc_cubic_down", [1, 30, 22, 5], sizes=[1, 13, 9, 5], mode="cubic")
    # One axis, and ranks 2 and 3.
    single(out, "width_only", [2, 3, 10, 9], sizes=[2, 3, 10, 20], mode="linear")
    single(out, "rank3_middle_axis", [4, 10, 6], sizes=[4, 25, 6], mode="linear",
           coordinate_transformation_mode="align_corners")
    single(out, "rank2", [9, 7], sizes=[18, 5], mode="cubic")
    # Large enough for the OpenMP team: whole planes per task, and slices of one map.
    single(out, "threads_planes", [1, 8, 64, 64], scales=[1, 1, 4, 4], mode="linear")
    single(out, "threads_slices_nhwc", [1, 64, 64, 32], scales=[1, 2, 2, 1], mode="linear")
    # The reference kernel: extrapolation, three resized axes.
    single(out, "tf_crop_and_resize", [1, 2, 10, 10], sizes=[1, 2, 7, 9], roi=[0, 0, 0.2, 0.1, 1, 1, 0.9, 1.2],
           mode="linear", coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-1.5)
    single(out, "three_axes", [2, 5, 6, 7], scales=[1, 2, 1.5, 0.6], mode="linear")
    # Between convolutions: blocked maps.
    between_convs(out, "blocked_linear_up2", 40, 16, scales=[1, 1, 2, 2], mode="linear")
    between_convs(out, "blocked_nearest_sizes", 20, 32, sizes=[1, 32, 40, 40], mode="nearest",
                  coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    between_convs(out, "blocked_cubic_down", 33, 24, scales=[1, 1, 0.5, 0.5], mode="cubic")
    between_convs(out, "blocked_antialias_axes", 48, 16, sizes=[20, 17], axes=[2, 3], mode="linear", antialias=1,
                  opset=18)
    # YOLO's neck: a map upsampled, joined with a finer one, convolved.
    c0, i0 = conv("x", "fine", 3, 16)
    c1, i1 = conv("fine", "coarse", 16, 32, stride=2)
    r, ir = resize_node("coarse", "up", scales=[1, 1, 2, 2], mode="nearest",
                        coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    cat = helper.make_node("Concat", ["up", "fine"], ["joined"], axis=1)
    c2, i2 = conv("joined", "y", 48, 8)
    write(out, "blocked_yolo_neck", [c0, c1, r, cat, c2], i0 + i1 + ir + i2, [1, 3, 24, 24], 13)
    # Sizes computed from the finer map's shape (exporters of dynamic sizes write this).
    shape_nodes = [helper.make_node("Shape", ["fine"], ["fine_shape"]),
                   helper.make_node("Slice", ["fine_shape", "hw_begin", "hw_end"], ["hw"]),
                   helper.make_node("Concat", ["nc", "hw"], ["sizes"], axis=0)]
    shape_inits = [const("hw_begin", np.array([2], np.int64)), const("hw_end", np.array([4], np.int64)),
                   const("nc", np.array([1, 32], np.int64))]
    r2 = helper.make_node("Resize", ["coarse", "", "", "sizes"], ["up"], mode="linear")
    write(out, "blocked_computed_sizes", [c0, c1] + shape_nodes + [r2, cat, c2], i0 + i1 + shape_inits + i2,
          [1, 3, 24, 24], 13)
    # The last Resize of a segmenter: only the graph output reads it.
    c3, i3 = conv("x", "logits", 3, 21, stride=4)
    r3, ir3 = resize_node("logits", "y", sizes=[1, 21, 64, 64], mode="linear",
                          coordinate_transformation_mode="align_corners")
    write(out, "segmenter_head", [c3, r3], i3 + ir3, [1, 3, 64, 64], 13)
    # Plain maps (channels-last tokens transposed back) upsampled into a convolution: ToBlocked
    # of the smaller map, as EfficientFormerV2's attention writes it; and a decode head's two
    # levels, one upsampled 4x and one kept at its size, joined for the fusing convolution.
    tokens = helper.make_node("Transpose", ["x"], ["t"], perm=[0, 3, 1, 2])
    r4, ir4 = resize_node("t", "up", scales=[1, 1, 2, 2], mode="linear")
    c4, i4 = conv("a", "y", 32, 16, kernel=1)
    write(out, "plain_map_upsampled_into_conv", [tokens, r4, helper.make_node("Relu", ["up"], ["a"]), c4],
          ir4 + i4, [1, 7, 7, 32], 13)
    coarse = helper.make_node("Transpose", ["x"], ["coarse_t"], perm=[0, 3, 1, 2])
    fine = helper.make_node("Transpose", ["x2"], ["fine_t"], perm=[0, 3, 1, 2])
    r5, ir5 = resize_node("coarse_t", "coarse_up", sizes=[1, 16, 24, 24], mode="linear")
    r6, ir6 = resize_node("fine_t", "fine_up", sizes=[1, 16, 24, 24], mode="linear")
    cat2 = helper.make_node("Concat", ["coarse_up", "fine_up"], ["joined2"], axis=1)
    c5, i5 = conv("joined2", "y", 32, 8, kernel=1)
    write_case(out, "decode_head_concat", [coarse, fine, r5, r6, cat2, c5], ir5 + ir6 + i5,
               {"x": RNG.standard_normal((1, 6, 6, 16)).astype(np.float32),
                "x2": RNG.standard_normal((1, 24, 24, 16)).astype(np.float32)}, {"y": TensorProto.FLOAT}, 13)
    # PyTorch's interpolate(size=) of such a map: sizes = Concat(Shape(t)[:2], hw), which the
    # Session folds to a constant (shape_simplification.h) before the blocked layout.
    t7 = helper.make_node("Transpose", ["x"], ["t7"], perm=[0, 3, 1, 2])
    shape7 = [helper.make_node("Shape", ["t7"], ["t7_shape"]),
              helper.make_node("Slice", ["t7_shape", "nc_begin", "nc_end"], ["t7_nc"]),
              helper.make_node("Concat", ["t7_nc", "hw7"], ["sizes7"], axis=0)]
    inits7 = [const("nc_begin", np.array([0], np.int64)), const("nc_end", np.array([2], np.int64)),
              const("hw7", np.array([20, 20], np.int64))]
    r7 = helper.make_node("Resize", ["t7", "", "", "sizes7"], ["up7"], mode="linear")
    c7, i7 = conv("up7", "y", 16, 8, kernel=1)
    write(out, "plain_map_computed_sizes_into_conv", [t7] + shape7 + [r7, c7], inits7 + i7, [1, 8, 8, 16], 13)
    print(f"wrote {len(os.listdir(out))} Resize cases to {out}")
