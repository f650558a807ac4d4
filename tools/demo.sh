#!/usr/bin/env bash
# The main demo: installs what is missing, builds Tandem, then
#   1. trains the peaks MLP (2-20-5-1, 40,000 points, full batch, Adam lr 0.08, 2000 epochs)
#      with `tandem train`, exports it, and runs the exported model;
#   2. inspects and runs the reference models with latency;
#   3. prints inference speed beside ONNX Runtime and PyTorch 2.x (PyPI, oneDNN + MKL: the
#      builds with their fast kernels, in the project's own virtual environments), and
#      training speed beside PyTorch 2.x, on this machine's CPU, naming each engine's
#      version and BLAS and the CPU's vector ISA. Debian's PyTorch 1.13 (OpenBLAS, no MKL)
#      is shown beside them for reference, never as the headline.
#   4. the CPU-vs-GPU picture of the peaks MLP's training step: `tandem profile --train
#      --compare cpu,cuda` prints time per op type on each device and the speedup, and sweeps
#      the batch size for the crossover (chart in the outputs); then bench/gpu_bench.py
#      against PyTorch CUDA. Without a GPU, one line says so and the CPU is profiled alone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/tools/setup.sh"
bash "$root/tools/build.sh"
tandem="${BUILD_DIR:-$root/build}/tandem"
work=$(mktemp -d /tmp/tandem_demo_XXXXXX)
/usr/bin/python3 "$root/models/export_models.py" "$root/models" 2>/dev/null
/usr/bin/python3 "$root/models/peaks_data.py" "$work" >/dev/null

echo; echo "=== 1. Training the peaks MLP (the seed workload) ==="
"$tandem" train "$root/models/peaks_mlp.onnx" --x "$work/X.npy" --y "$work/Y.npy" --loss mse \
  --optimizer adam --lr 0.08 --epochs 2000 --batch-size 40000 --seed 1 \
  --history "$work/peaks_loss.csv" --export "$work/peaks_trained.onnx"
"$tandem" run "$work/peaks_trained.onnx" --input "x=$work/X.npy" --repeat 20

echo; echo "=== 2. Reference models ==="
for m in peaks_mlp ode_mlp fashion_cnn cifar_cnn; do
  echo; echo "--- $m ---"
  "$tandem" inspect "$root/models/$m.onnx"
  "$tandem" run "$root/models/$m.onnx" --repeat 50
done

echo; echo "=== 3. Tandem vs ONNX Runtime and PyTorch 2.x on this CPU ==="
# The environments come from PyPI (onnxruntime; PyTorch 2.x, ~5.5 GB): where that fails,
# say so and compare with Debian's PyTorch 1.13 alone.
if bench_python=$(bash "$root/bench/setup_bench_env.sh" | tail -1) &&
   torch2_python=$(bash "$root/bench/setup_torch2_env.sh" | tail -1); then
  echo "(the headline ratios are Tandem / ORT and Tandem / PyTorch 2.x; PyTorch 1.13 is Debian's"
  echo " OpenBLAS build, shown for reference. Same threads, same files and inputs, engines in turns.)"
  TANDEM_LIBRARY="${BUILD_DIR:-$root/build}/libtandem.so" "$bench_python" "$root/bench/cpu_bench.py" \
    --torch2-python "$torch2_python" --rounds 3 --cases \
    cifar_cnn_b1,cifar_cnn_b128,resnet18_b1,mobilenet_v2_b1,transformer_b1,peaks_mlp_40000
  /usr/bin/python3 "$root/bench/training_bench.py" --tandem "$tandem" --torch2-python "$torch2_python" \
    --peaks-epochs 500 --cifar-steps 20 2>/dev/null
else
  echo "could not make the ONNX Runtime and PyTorch 2.x environments (PyPI unreachable?):"
  echo "comparing with Debian's PyTorch 1.13 (OpenBLAS) only, which is not PyTorch's fast build"
  /usr/bin/python3 "$root/bench/inference_bench.py" --tandem "$tandem" 2>/dev/null
  /usr/bin/python3 "$root/bench/training_bench.py" --tandem "$tandem" --peaks-epochs 500 --cifar-steps 20 2>/dev/null
fi
echo; echo "=== 4. CPU vs GPU: the peaks MLP's training step ==="
"$tandem" profile "$root/models/peaks_mlp.onnx" --train --x "$work/X.npy" --y "$work/Y.npy" --loss mse \
  --optimizer adam --lr 0.08 --batch-size 40000 --compare cpu,cuda --repeat 5 \
  --batch-sizes 1,16,256,4096,40000 --chart "$work/peaks_crossover.svg"
/usr/bin/python3 "$root/bench/gpu_bench.py" --tandem "$tandem" --rounds 1 --peaks-epochs 500 --cifar-steps 20 2>/dev/null
echo; echo "demo outputs (loss history CSV/SVG, trained model) are in $work"
