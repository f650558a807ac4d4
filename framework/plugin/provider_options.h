// How a provider computes, chosen per session (SessionOptions::provider_options, the
// CLI's --precision) and handed to plugin providers when they are created
// (framework/plugin/plugin_abi.h). Providers ignore what does not apply to them.
#pragma once

namespace tandem {

class Communicator;  // framework/communicator.h

enum class Precision {
  kFp32,  // float32 math throughout (the default; what the tests hold every provider to)
  kTf32,  // float32 matrix products and convolutions may round their inputs to TF32 on
          // tensor cores (CUDA: cuBLASLt's FAST_TF32 compute, cuDNN tensor-op math and any
          // algorithm); other ops stay float32. The CPU provider is unaffected.
};

struct ProviderOptions {
  Precision precision = Precision::kFp32;
  // The data-parallel group this process belongs to (not owned), which a provider's own
  // AllReduce kernels reduce across (CUDA: NCCL, its id sent through this group); null
  // outside data-parallel training. CreatePluginProvider fills it from
  // ProcessCommunicator(): a plugin has its own copy of that global.
  Communicator* communicator = nullptr;
};

}  // namespace tandem
