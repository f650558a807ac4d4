"""Builds the Keras CIFAR-10 example CNN in Keras 3, converts it with tf2onnx, and writes
an ONNX backend-test folder holding Keras's own output.

usage: make_keras_exports.py OUT_DIR     (ctest parity_keras_export runs it in .venv-keras
through export_in_venv.sh)

OUT_DIR/keras_cifar_cnn: the CNN of models/reference_models.py's cifar_cnn, exactly
1,667,594 parameters, in Keras's NHWC layout with a softmax head, random weights (seed 0).
tf2onnx 1.17's from_keras does not read Keras 3 models (KeyError on a keras_tensor), so
the model is converted through a tf.function, as tf2onnx's docs suggest for Keras 3.
The graph keeps the NHWC layout with Transposes around the convolutions.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
import tf2onnx  # noqa: E402
from keras import layers  # noqa: E402
from onnx import numpy_helper  # noqa: E402


def cifar_cnn():
    return keras.Sequential([
        keras.Input((32, 32, 3)),
        layers.Conv2D(32, 3, padding="same", activation="relu"), layers.MaxPooling2D(), layers.Dropout(0.25),
        layers.Conv2D(64, 3, padding="same", activation="relu"),
        layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(), layers.Dropout(0.25),
        layers.Flatten(), layers.Dense(512, activation="relu"), layers.Dropout(0.2),
        layers.Dense(10, activation="softmax")])


def main():
    case = os.path.join(sys.argv[1], "keras_cifar_cnn")
    os.makedirs(os.path.join(case, "test_data_set_0"), exist_ok=True)
    keras.utils.set_random_seed(0)
    model = cifar_cnn()
    assert model.count_params() == 1667594, model.count_params()
    spec = (tf.TensorSpec((None, 32, 32, 3), tf.float32, name="x"),)
    infer = tf.function(lambda x: model(x, training=False), input_signature=spec)
    proto, _ = tf2onnx.convert.from_function(infer, input_signature=spec, opset=17,
                                             output_path=os.path.join(case, "model.onnx"))
    x = np.random.RandomState(0).rand(8, 32, 32, 3).astype(np.float32)
    y = model(x, training=False).numpy()
    for kind, name, value in (("input", proto.graph.input[0].name, x), ("output", proto.graph.output[0].name, y)):
        with open(os.path.join(case, "test_data_set_0", kind + "_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())
    ops = sorted({n.op_type for n in proto.graph.node})
    print(f"{case}: {len(proto.graph.node)} nodes ({', '.join(ops)}), output {y.shape}, max y {y.max():.3g}")


if __name__ == "__main__":
    main()
