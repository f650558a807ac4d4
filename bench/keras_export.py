"""Exports a Keras application through tf2onnx for the model zoo (bench/zoo.py), in the
Keras environment (.venv-keras; tools/python_env.sh keras), and writes Keras's own output.

usage: keras_export.py APPLICATION BATCH SIZE ONNX_PATH INPUT_NPY OUTPUT_NPY

The application (keras.applications.APPLICATION, weights=None: random, seeded) gets
realistic BatchNorm statistics (moving means in [-0.2, 0.2], variances in [0.5, 1.5]), is
converted with tf2onnx through a tf.function at opset 17 (tf2onnx 1.17's from_keras does not
read Keras 3 models) with input "x" [BATCH, SIZE, SIZE, 3] (channels-last, as Keras keeps it)
and output "y", and run on INPUT_NPY: its answer goes to OUTPUT_NPY, the zoo's reference.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnx.numpy_helper  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
import tf2onnx  # noqa: E402


def main():
    application, batch, size, onnx_path, input_npy, output_npy = sys.argv[1:]
    batch, size = int(batch), int(size)
    keras.utils.set_random_seed(0)
    model = getattr(keras.applications, application)(weights=None, input_shape=(size, size, 3))
    rng = np.random.default_rng(1)
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            n = layer.moving_mean.shape[0]
            layer.moving_mean.assign(rng.uniform(-0.2, 0.2, n).astype(np.float32))
            layer.moving_variance.assign(rng.uniform(0.5, 1.5, n).astype(np.float32))
    spec = (tf.TensorSpec((batch, size, size, 3), tf.float32, name="x"),)
    infer = tf.function(lambda x: model(x, training=False), input_signature=spec)
    proto, _ = tf2onnx.convert.from_function(infer, input_signature=spec, opset=17)
    # tf2onnx leaves a Normalization layer's mean and variance (non-trainable variables of
    # Keras 3: EfficientNet's input normalization) as graph inputs: they become constants.
    for extra in [i for i in proto.graph.input if i.name != "x"]:
        layer = next((l for l in model.layers if isinstance(l, keras.layers.Normalization)
                      and f"/{l.name}_1/" in f"/{extra.name}"), None)
        role = "mean" if "/Sub/" in extra.name else "variance" if "/Sqrt/" in extra.name else None
        if layer is None or role is None:
            sys.exit(f"error: {application}: tf2onnx left the graph input {extra.name}, which no Normalization "
                     "layer's mean or variance explains")
        value = np.asarray(getattr(layer, role), np.float32)
        dims = [d.dim_value for d in extra.type.tensor_type.shape.dim]
        proto.graph.initializer.append(onnx.numpy_helper.from_array(value.reshape(dims), extra.name))
        proto.graph.input.remove(extra)
    first = proto.graph.output[0].name
    for node in proto.graph.node:
        node.output[:] = ["y" if o == first else o for o in node.output]
    proto.graph.output[0].name = "y"
    onnx.save(proto, onnx_path + ".part")
    os.replace(onnx_path + ".part", onnx_path)
    np.save(output_npy, model(np.load(input_npy), training=False).numpy())


if __name__ == "__main__":
    main()
