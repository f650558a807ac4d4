#!/bin/bash
# Transformers trained as users train them, against PyTorch (ctest transformer_training):
#   1. tests/parity/transformer_training_parity.py: BERT and GPT-2 (Hugging Face configs), 30
#      AdamW steps, fused and unfused, losses within 1e-4 of PyTorch's;
#   2. examples/python_text_classifier.py: a BertForSequenceClassification fine-tuned with
#      the cross-entropy loss through `import tandem`, its held-out accuracy, the exported
#      model against PyTorch given the trained weights, the first 30 losses against PyTorch.
# usage: transformer_training_test.sh TANDEM_BINARY LIBTANDEM WORK_DIR
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tandem=$1 library=$2 work=$3
mkdir -p "$work"
PY="$(bash "$ROOT/bench/setup_torch2_env.sh" | tail -1)"
"$PY" -W ignore "$ROOT/tests/parity/transformer_training_parity.py" "$tandem" "$work/parity"
# The module from the source tree on this build's library; its compiled fast path is built
# against Debian's numpy, so the environment's numpy takes the ctypes path.
TANDEM_LIBRARY="$library" PYTHONPATH="$ROOT/python" TANDEM_PYTHON_FASTRUN=0 PYTHONDONTWRITEBYTECODE=1 \
  "$PY" -W ignore "$ROOT/examples/python_text_classifier.py" "$work/classifier" 3
