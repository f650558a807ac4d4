#!/usr/bin/env bash
# The main demo: installs what is missing, builds Tandem, exports the reference models
# and shows what Tandem does with them — inspect, run with latency, and the inference
# benchmark beside PyTorch on this machine's CPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/tools/setup.sh"
bash "$root/tools/build.sh"
tandem="${BUILD_DIR:-$root/build}/tandem"
/usr/bin/python3 "$root/models/export_models.py" "$root/models" 2>/dev/null
for m in peaks_mlp ode_mlp fashion_cnn cifar_cnn; do
  echo; echo "=== $m ==="
  "$tandem" inspect "$root/models/$m.onnx"
  "$tandem" run "$root/models/$m.onnx" --repeat 50
done
echo; echo "=== CIFAR CNN and peaks MLP inference: Tandem vs PyTorch (CPU) ==="
/usr/bin/python3 "$root/tools/bench/inference_bench.py" --tandem "$tandem" 2>/dev/null
