// The plugin's one exported symbol (see framework/plugin/plugin_abi.h).
#include <cuda_runtime.h>

#include <cstdio>

#include "framework/plugin/plugin_abi.h"
#include "providers/cuda/cuda_provider.h"

namespace {

void Write(char* out, size_t size, const std::string& s) {
  if (out && size) std::snprintf(out, size, "%s", s.c_str());
}

int DeviceCount(char* why, size_t why_size) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    Write(why, why_size, std::string("no usable CUDA device (") + cudaGetErrorString(e) + ")");
    return 0;
  }
  if (n == 0) Write(why, why_size, "no CUDA device is visible");
  return n;
}

tandem::ExecutionProvider* Create(int index, const tandem::ResourceLimits* limits,
                                  const tandem::ProviderOptions* options, char* error, size_t error_size) {
  if (limits) tandem::SetResourceLimits(*limits);  // this plugin's own copy of graph/
  auto p = tandem::cuda::CudaProvider::Create(index, options ? *options : tandem::ProviderOptions{});
  if (!p.ok()) {
    Write(error, error_size, std::string(p.status().message()));
    return nullptr;
  }
  return p->release();
}

tandem::ExecutionProvider* CreatePreview(char* error, size_t error_size) {
  return tandem::cuda::CudaProvider::CreatePreview().release();
}

const TandemProviderPlugin kPlugin = {TANDEM_PROVIDER_PLUGIN_ABI, TandemPluginLayoutFingerprint(),
                                      "cuda", &DeviceCount, &Create, &CreatePreview};

}  // namespace

extern "C" __attribute__((visibility("default"))) const TandemProviderPlugin* tandem_provider_plugin() {
  return &kPlugin;
}
