"""Checks a model written by `tandem convert` with the tools of record: the current onnx
checker (full_check: types and shapes too) and ONNX Runtime, which must load it and give
the original model's outputs on the same random inputs.

usage: check_converted.py ORIGINAL CONVERTED [--rtol R] [--atol A] [--fewer-nodes]
         [--fix-dims NAME=N ...] [--transposes-at-most K]
Fails (exit 1) on a checker error, an ORT load error, an output beyond
atol + rtol * max|original|, or, with --fewer-nodes, a graph that did not shrink.
"""
import argparse
import sys

import numpy as np
import onnx
import onnxruntime as ort

NUMPY_TYPES = {1: np.float32, 11: np.float64, 10: np.float16, 7: np.int64, 6: np.int32, 9: np.bool_}


def random_inputs(model, fixed, rng):
    init = {i.name for i in model.graph.initializer}
    feeds = {}
    for i in model.graph.input:
        if i.name in init:
            continue
        t = i.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else fixed.get(d.dim_param, 1) for d in t.shape.dim]
        feeds[i.name] = rng.uniform(-1, 1, shape).astype(NUMPY_TYPES[t.elem_type])
    return feeds


def main():
    p = argparse.ArgumentParser()
    p.add_argument("original")
    p.add_argument("converted")
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-5)
    p.add_argument("--fewer-nodes", action="store_true")
    p.add_argument("--transposes-at-most", type=int, default=-1)
    p.add_argument("--fix-dims", nargs="*", default=[])
    a = p.parse_args()
    fixed = {k: int(v) for k, v in (s.split("=") for s in a.fix_dims)}
    original, converted = onnx.load(a.original), onnx.load(a.converted)
    onnx.checker.check_model(a.converted, full_check=True)  # by path: external data too
    ops = lambda m: [n.op_type for n in m.graph.node]
    print(f"{a.converted}: onnx {onnx.__version__} checker passed; nodes {len(original.graph.node)} -> "
          f"{len(converted.graph.node)}: {' '.join(ops(converted))}")
    ok = True
    if a.fewer_nodes and len(converted.graph.node) >= len(original.graph.node):
        print("FAIL: the converted graph has no fewer nodes")
        ok = False
    transposes = ops(converted).count("Transpose")
    if a.transposes_at_most >= 0 and transposes > a.transposes_at_most:
        print(f"FAIL: {transposes} Transpose nodes remain (at most {a.transposes_at_most} expected)")
        ok = False
    feeds = random_inputs(original, fixed, np.random.default_rng(0))
    want = ort.InferenceSession(a.original, providers=["CPUExecutionProvider"]).run(None, feeds)
    got = ort.InferenceSession(a.converted, providers=["CPUExecutionProvider"]).run(None, feeds)
    for name, w, g in zip([o.name for o in original.graph.output], want, got):
        diff = float(np.max(np.abs(g.astype(np.float64) - w))) if w.size else 0.0
        scale = float(np.max(np.abs(w))) if w.size else 0.0
        within = g.shape == w.shape and diff <= a.atol + a.rtol * scale
        print(f"  onnxruntime {ort.__version__}, output {name}: max abs diff {diff:.3g} (scale {scale:.3g}) "
              f"{'ok' if within else 'FAIL'}")
        ok &= within
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
