// What the GPU tests (tests/cuda/*_test.cc, binary tandem_cuda_tests) share: skipping
// without a GPU (failing instead with TANDEM_REQUIRE_GPU=1), finding the models, and
// random inputs.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "graph/tensor.h"
#include "providers/device_selection.h"
#include "providers/provider_plugin.h"

namespace tandem {

#define REQUIRE_GPU()                                                                        \
  do {                                                                                       \
    const PluginProbe& probe = ProbeProviderPlugin("cuda");                                  \
    if (!probe.loaded || probe.devices == 0) {                                               \
      if (GpuRequired()) FAIL() << "TANDEM_REQUIRE_GPU=1 and no usable GPU: " << probe.why;  \
      GTEST_SKIP() << "no GPU: " << probe.why;                                               \
    }                                                                                        \
  } while (0)

// A model of models/: under $TANDEM_SOURCE_DIR when set, else where this binary was built from.
inline std::string ModelPath(const std::string& name) {
  const char* root = std::getenv("TANDEM_SOURCE_DIR");
  return std::string(root && *root ? root : TANDEM_SOURCE_DIR) + "/models/" + name;
}

// Uniform floats in [lo, hi), the same for the same seed.
inline Tensor Random(Dims dims, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  Tensor t = Tensor::Host(DataType::kFloat, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

}  // namespace tandem
