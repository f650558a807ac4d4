#!/bin/bash
# Makes the Keras environment of the Keras/tf2onnx export test (default .venv-keras in the
# source tree, or $TANDEM_KERAS_VENV) from its lock: tensorflow-cpu (Keras 3 comes with it)
# and tf2onnx, ~1.5 GB (tools/python_envs/keras.in). Prints the python on its last line.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/../python_env.sh" keras
