"""Writes ONNX test folders of RoiAlign: average pooling of float maps as detectors export it
(torchvision's MultiScaleRoIAlign: 7x7 bins, sampling_ratio 2, spatial_scale 1/4 to 1/32,
half_pixel), the adaptive grid (sampling_ratio 0) with output_half_pixel, boxes partly
or wholly outside the map, degenerate and tiny boxes, rois of both images, channel counts
past the float path's 64-channel blocks, and max pooling (the reference loops). Expected
outputs from onnx.reference in float64, for `tandem test-onnx` at the output's scale
(tests/CMakeLists.txt: roi_reference). No opset 10 case: onnx.reference reads a missing
coordinate_transformation_mode as opset 16's half_pixel, not opset 10's output_half_pixel.
make_cases.sh calls write_all(OUT_DIR).
"""
import os

import numpy as np
from onnx import TensorProto, helper

from case_writer import write_case

RNG = np.random.default_rng(53)


def boxes(count, height, width, scale):
    """`count` boxes (x1, y1, x2, y2) in input pixels for a map of height x width at `scale`:
    random ones inside, then one partly outside, one wholly outside, one degenerate (x2 < x1)
    and one under a pixel."""
    h, w = height / scale, width / scale
    x1 = RNG.uniform(0, w * 0.8, count)
    y1 = RNG.uniform(0, h * 0.8, count)
    out = np.stack([x1, y1, x1 + RNG.uniform(1, w * 0.6, count), y1 + RNG.uniform(1, h * 0.6, count)], 1)
    special = [[-0.3 * w, 0.5 * h, 0.4 * w, 1.3 * h], [1.2 * w, 1.1 * h, 1.5 * w, 1.4 * h],
               [0.6 * w, 0.2 * h, 0.3 * w, 0.5 * h], [0.41 * w, 0.37 * h, 0.41 * w + 0.2, 0.37 * h + 0.3]]
    return np.concatenate([out, special]).astype(np.float32)


def write_all(out):
    os.makedirs(out)

    def case(name, n, c, height, width, count, scale, opset=16, **attrs):
        rois = boxes(count, height, width, scale)
        inputs = {"x": RNG.standard_normal((n, c, height, width)).astype(np.float32), "rois": rois,
                  "batch_indices": RNG.integers(0, n, len(rois)).astype(np.int64)}
        node = helper.make_node("RoiAlign", ["x", "rois", "batch_indices"], ["y"], spatial_scale=scale, **attrs)
        write_case(out, name, [node], [], inputs, {"y": TensorProto.FLOAT}, opset)

    # torchvision's pooler on two images: enough rois that they run across the team
    case("roi_torchvision_pooler", 2, 37, 23, 19, 12, 0.25, output_height=7, output_width=7, sampling_ratio=2,
         coordinate_transformation_mode="half_pixel")
    case("roi_adaptive_grid", 1, 16, 20, 24, 5, 0.125, output_height=5, output_width=4, sampling_ratio=0,
         coordinate_transformation_mode="output_half_pixel")
    case("roi_many_channels", 1, 70, 9, 11, 6, 1 / 32, output_height=1, output_width=1, sampling_ratio=3)
    case("roi_max", 2, 5, 10, 8, 4, 0.5, output_height=3, output_width=3, sampling_ratio=2, mode="max")
