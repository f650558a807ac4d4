// What the GPU tests (tests/cuda/*_test.cc, binary tandem_cuda_tests) share: skipping
// without a GPU (failing instead with TANDEM_REQUIRE_GPU=1), finding the models, random
// inputs, and a few training steps of a model.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "framework/plugin/provider_plugin.h"
#include "graph/tensor.h"
#include "onnx_import/import.h"
#include "placement/device_selection.h"
#include "training/trainer.h"

namespace tandem {

#define REQUIRE_GPU()                                                                        \
  do {                                                                                       \
    const PluginProbe& probe = ProbeProviderPlugin("cuda");                                  \
    if (!probe.loaded || probe.devices == 0) {                                               \
      if (GpuRequired()) FAIL() << "TANDEM_REQUIRE_GPU=1 and no usable GPU: " << probe.why;  \
      GTEST_SKIP() << "no GPU: " << probe.why;                                               \
    }                                                                                        \
  } while (0)

// A committed model of models/ (a GPU machine gets the repository and a pack of binaries,
// never generated files; tests/gpu/run_gpu_checks.sh's preflight checks every name given
// here): in $TANDEM_MODELS_DIR when set (the copied repository's models/), else in the
// models/ folder of the source this binary was built from.
inline std::string ModelPath(const std::string& name) {
  const char* dir = std::getenv("TANDEM_MODELS_DIR");
  return (dir && *dir ? std::string(dir) : std::string(TANDEM_SOURCE_DIR) + "/models") + "/" + name;
}

// Uniform floats in [lo, hi), the same for the same seed.
inline Tensor Random(Dims dims, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  Tensor t = Tensor::Host(DataType::kFloat, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// Training parity: the same model, seed and batches on the GPU and on the CPU.
struct TrainRun {
  std::vector<double> losses;
  std::map<std::string, std::vector<std::string>> ops_on;  // provider -> op types of the step's nodes
  std::string graph_status;  // Session::device_graph_status of the step
  int64_t replays = 0;

  // How many of the step's nodes on `provider` have an op type starting with `prefix`.
  int CountOn(const std::string& provider, const std::string& prefix) const {
    auto it = ops_on.find(provider);
    int n = 0;
    if (it != ops_on.end())
      for (const std::string& op : it->second) n += op.rfind(prefix, 0) == 0;
    return n;
  }
};

// `steps` steps of models/`model` on one batch (random x of `x_dims`, seed 50; y random of
// `y_dims`, seed 51, or class i % 10 for cross-entropy), lr 1e-3; `configure` may change
// the options after those defaults.
inline absl::StatusOr<TrainRun> Train(const std::string& model, const std::vector<std::string>& providers,
                                      Dims x_dims, Dims y_dims, training::LossKind loss, int steps,
                                      bool device_graphs = false,
                                      const std::function<void(training::TrainerOptions&)>& configure = nullptr) {
  auto g = ImportModelFile(ModelPath(model));
  if (!g.ok()) return g.status();
  training::TrainerOptions o;
  o.providers = providers;
  o.spec.loss = loss;
  o.spec.optimizer.lr = 1e-3f;
  o.device_graphs = device_graphs;
  if (configure) configure(o);
  auto t = training::Trainer::Create(*g, o);
  if (!t.ok()) return t.status();
  TrainRun run;
  for (const Node& n : (*t)->training_session().graph().nodes) run.ops_on[n.provider].push_back(n.op_type);
  Tensor x = Random(x_dims, 50), y = Random(y_dims, 51);
  if (loss == training::LossKind::kCrossEntropy) {
    y = Tensor::Host(DataType::kInt64, y_dims);
    for (int64_t i = 0; i < y.numel(); ++i) y.data<int64_t>()[i] = i % 10;
  }
  for (int s = 0; s < steps; ++s) {
    auto l = (*t)->Step({{(*t)->training_graph().data_inputs[0], x}}, y);
    if (!l.ok()) return absl::Status(l.status().code(), "step " + std::to_string(s + 1) + ": " + std::string(l.status().message()));
    run.losses.push_back(*l);
  }
  run.graph_status = (*t)->training_session().device_graph_status();
  run.replays = (*t)->training_session().device_graph_replays();
  return run;
}

}  // namespace tandem
