"""Fashion-MNIST data for tests/convert/quantize_test.sh, and its check.

prepare OUT: OUT/calibration.npy (256 training images, seeded), OUT/test_x.npy and
  OUT/test_y.npy (the 10,000 test images, pixels / 255 as `tandem train --fashion-mnist`
  reads them, and their labels) from Debian's dataset-fashion-mnist.
check OUT FLOAT_MODEL: with Tandem's outputs in OUT/{float,static,dynamic}/y.npy, each int8
  model passes onnx's checker, onnx.reference (the operators' exact definitions) picks
  Tandem's class for at least 99.5% of the first 2,000 images (its convolutions are slow), and Tandem's accuracy is within 1 point
  of the float model's. ONNX Runtime runs each model too and its agreement is printed, not
  judged: on CPUs without VNNI its u8 x s8 products are summed in pairs with int16
  saturation (vpmaddubsw), which moves ~1% of this model's classes on an AVX2 Zen 3.
"""
import gzip
import os
import sys

import numpy as np

DATA = "/usr/share/datasets/fashion-mnist"
REFERENCE_IMAGES = 2000


def images(name):
    raw = gzip.open(os.path.join(DATA, name)).read()
    return (np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 1, 28, 28) / np.float32(255)).astype(np.float32)


def prepare(out):
    train = images("train-images-idx3-ubyte.gz")
    pick = np.random.default_rng(0).choice(len(train), 256, replace=False)
    np.save(os.path.join(out, "calibration.npy"), train[pick])
    np.save(os.path.join(out, "test_x.npy"), images("t10k-images-idx3-ubyte.gz"))
    labels = gzip.open(os.path.join(DATA, "t10k-labels-idx1-ubyte.gz")).read()
    np.save(os.path.join(out, "test_y.npy"), np.frombuffer(labels, np.uint8, offset=8))


def reference_outputs(path, x):
    """The model's outputs by onnx.reference, which implements the QDQ and integer operators
    from opset 19 on; this converter writes opset 13, whose definitions of them are the same."""
    import onnx
    from onnx.reference import ReferenceEvaluator
    model = onnx.load(path)
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx") and opset.version < 19:
            opset.version = 19
    evaluator = ReferenceEvaluator(model)
    return np.concatenate([evaluator.run(None, {"x": x[i:i + 500]})[0] for i in range(0, len(x), 500)])


def check(out, float_model):
    import onnx
    import onnxruntime as ort
    x, y = np.load(os.path.join(out, "test_x.npy")), np.load(os.path.join(out, "test_y.npy"))
    accuracy = {m: 100 * float((np.load(os.path.join(out, m, "y.npy")).argmax(1) == y).mean())
                for m in ("float", "static", "dynamic")}
    print(f"float32: Tandem test accuracy {accuracy['float']:.2f}%")
    failed = False
    for m in ("static", "dynamic"):
        path = os.path.join(out, m + ".onnx")
        onnx.checker.check_model(onnx.load(path))
        tandem_class = np.load(os.path.join(out, m, "y.npy")).argmax(1)
        reference = reference_outputs(path, x[:REFERENCE_IMAGES])
        agree = 100 * float((reference.argmax(1) == tandem_class[:REFERENCE_IMAGES]).mean())
        options = ort.SessionOptions()
        options.intra_op_num_threads = 2
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        ort_class = np.concatenate([session.run(None, {"x": x[i:i + 1000]})[0] for i in range(0, len(x), 1000)]).argmax(1)
        drop = accuracy["float"] - accuracy[m]
        print(f"int8 {m}: Tandem {accuracy[m]:.2f}% (drop {drop:+.2f} points), same class as onnx.reference for "
              f"{agree:.2f}% of the first {REFERENCE_IMAGES} images; ONNX Runtime {100 * float((ort_class == y).mean()):.2f}%, "
              f"same class as Tandem for {100 * float((ort_class == tandem_class).mean()):.2f}%")
        if drop > 1.0 or agree < 99.5:
            print(f"FAIL: int8 {m}: accuracy drop {drop:.2f} > 1 point or agreement with onnx.reference {agree:.2f}% < 99.5%")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3]))
