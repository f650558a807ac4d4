"""Writes ONNX test folders of NonMaxSuppression with expected selections from onnx's
reference implementation (onnx.reference, in float32 as the op's inputs are), for
`tandem test-onnx` to match exactly (tests/CMakeLists.txt: nms_reference). The cases cover
the CPU kernel (providers/cpu/kernels/tensor/non_max_suppression.cc) and its overlap loop
(microkernels/box_overlap.h): several batch items and classes (run in parallel), a score
threshold, one class of thousands of boxes with thousands kept (torchvision's batched_nms
as detectors export it: many blocks of kept boxes per test), center-point boxes, and
boxes of no area or with their corners swapped, a detector's 91 classes offset apart (the
kernel's buckets of kept boxes by x1), tiny boxes over a long range (more buckets than the
kernel makes), one box spanning the whole range, and boxes with infinite corners.
make_cases.sh calls write_all(OUT_DIR).
"""
import os

import numpy as np
from onnx import TensorProto, helper

from case_writer import const, write_case

RNG = np.random.default_rng(11)


def random_boxes(batches, n, extent=100.0, size=(2.0, 30.0)):
    """[batches, n, 4] boxes as [y1, x1, y2, x2] within extent, sides in `size`."""
    corner = RNG.uniform(0, extent, (batches, n, 2))
    side = RNG.uniform(*size, (batches, n, 2))
    return np.concatenate([corner, corner + side], axis=2).astype(np.float32)


def nms_case(out, name, boxes, scores, max_out, iou, score=None, center_point_box=0):
    inits = [const("max_out", np.array([max_out], np.int64)), const("iou", np.array([iou], np.float32))]
    ins = ["boxes", "scores", "max_out", "iou"]
    if score is not None:
        inits.append(const("score", np.array([score], np.float32)))
        ins.append("score")
    node = helper.make_node("NonMaxSuppression", ins, ["selected"], center_point_box=center_point_box)
    write_case(out, name, [node], inits, {"boxes": boxes, "scores": scores}, {"selected": TensorProto.INT64}, 11,
               in_double=False)


def write_all(out):
    os.makedirs(out)
    nms_case(out, "classes_and_batches", random_boxes(2, 300), RNG.random((2, 5, 300), np.float32), 50, 0.5,
             score=0.3)
    # batched_nms: each class's boxes offset by class * (extent + 1), one class in all
    classes, per_class = 12, 400
    boxes = random_boxes(1, classes * per_class)
    boxes += (np.repeat(np.arange(classes), per_class) * 101.0).astype(np.float32)[None, :, None]
    nms_case(out, "one_class_thousands_kept", boxes, RNG.random((1, 1, classes * per_class), np.float32), 100000,
             0.45)
    centers = RNG.uniform(0, 50, (1, 500, 2))
    sides = RNG.uniform(1, 20, (1, 500, 2))
    nms_case(out, "center_point_boxes", np.concatenate([centers, sides], axis=2).astype(np.float32),
             RNG.random((1, 3, 500), np.float32), 40, 0.6, center_point_box=1)
    odd = random_boxes(1, 200, extent=20.0)
    odd[0, :40, 2:] = odd[0, :40, :2]  # no area
    odd[0, 40:80] = odd[0, 40:80][:, [2, 3, 0, 1]]  # corners swapped
    nms_case(out, "empty_and_swapped_boxes", odd, RNG.random((1, 2, 200), np.float32), 100, 0.3, score=0.1)
    # Faster R-CNN's post-processing: 91 classes offset apart, thousands of candidates, most
    # kept; the kernel tests each against the kept boxes in buckets of x1 that can reach it.
    classes, per_class = 91, 60
    boxes = random_boxes(1, classes * per_class, extent=320.0, size=(4.0, 200.0))
    boxes += (np.repeat(np.arange(classes), per_class) * 521.0).astype(np.float32)[None, :, None]
    nms_case(out, "detector_classes_offset", boxes, RNG.random((1, 1, classes * per_class), np.float32), 100000,
             0.5)
    # tiny boxes over a long range (more buckets than the kernel makes: wider buckets), IoU 0
    tiny = random_boxes(1, 3000, extent=1e5, size=(0.5, 3.0))
    nms_case(out, "tiny_boxes_long_range", tiny, RNG.random((1, 1, 3000), np.float32), 100000, 0.0)
    # one box as wide as the whole range among them (one bucket's width covers everything)
    wide = boxes.copy()
    wide[0, 7] = [0.0, -10.0, 300.0, classes * 521.0]
    nms_case(out, "one_box_spans_the_range", wide, RNG.random((1, 1, classes * per_class), np.float32), 100000,
             0.3)
    # infinite corners (kept apart from the buckets) among ordinary boxes
    far = random_boxes(1, 1500, extent=400.0)
    far[0, 0:10, 1] = -np.inf
    far[0, 10:20, 3] = np.inf
    far[0, 20:30, 0] = -np.inf
    nms_case(out, "infinite_corners", far, RNG.random((1, 2, 1500), np.float32), 100000, 0.4)
    print(f"wrote {len(os.listdir(out))} NonMaxSuppression cases to {out}")
