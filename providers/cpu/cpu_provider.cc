#include "providers/cpu/cpu_provider.h"

#include <chrono>
#include <cstring>
#include <vector>

#include <dnnl.hpp>

#include "placement/cost_model.h"
#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/rewrites/add_layer_norm.h"
#include "providers/cpu/rewrites/attention_fusion.h"
#include "providers/cpu/rewrites/blocked_flatten.h"
#include "providers/cpu/rewrites/blocked_layout.h"
#include "providers/cpu/rewrites/concat_norm.h"
#include "providers/cpu/rewrites/conv_input_scale.h"
#include "providers/cpu/rewrites/conv_mean.h"
#include "providers/cpu/rewrites/conv_sum.h"
#include "providers/cpu/rewrites/group_norm.h"
#include "providers/cpu/rewrites/integer_matmul_to_float.h"
#include "providers/cpu/rewrites/matmul_bias.h"
#include "providers/cpu/rewrites/norm_relu.h"
#include "providers/cpu/rewrites/qlinear_conv_in_float.h"
#include "providers/cpu/rewrites/quantized_add.h"
#include "providers/cpu/rewrites/token_maps.h"

namespace tandem {

const KernelRegistry& CpuKernelRegistry() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry;
    cpu::RegisterAllCpuKernels(*r);
    return r;
  }();
  return *registry;
}

CpuProvider::CpuProvider() = default;

std::unique_ptr<ExecutionProvider> CreateCpuProvider() { return std::make_unique<CpuProvider>(); }

namespace {
// One 512x512x512 sgemm through oneDNN, in microseconds (the calibration's compute probe).
double SgemmUs() {
  static std::vector<float> a(512 * 512, 1.f), b(512 * 512, 1.f), c(512 * 512);
  const auto t0 = std::chrono::steady_clock::now();
  dnnl::sgemm('N', 'N', 512, 512, 512, 1.f, a.data(), 512, b.data(), 512, 0.f, c.data(), 512);
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

std::optional<double> CpuProvider::Capability(const KernelInfo& info) const {
  if (!FindKernel(info)) return std::nullopt;
  return EstimateUs(EstimateWork(info), CpuSpeed(&SgemmUs));
}

const KernelRegistry& CpuProvider::registry() const { return CpuKernelRegistry(); }

int CpuProvider::OptimizeGraph(Graph& graph) {
  const int float_convs = cpu::QLinearConvInFloat(graph, name());  // without VNNI only
  const int attentions = cpu::FuseAttention(graph, name());
  const int add_norms = cpu::FuseAddLayerNorm(graph, name());
  const int biases = cpu::FuseMatMulBias(graph, name());
  const int int8_layers = cpu::FuseMatMulIntegerToFloat(graph, name());
  const int int8_sums = cpu::FuseQuantizedAdd(graph, name());
  const int relus = cpu::FuseBatchNormRelu(graph, name());
  const int group_norms = cpu::FuseGroupNorm(graph, name());
  const int gates = cpu::FuseConvInputScale(graph, name());
  const int blocked = cpu::UseChannelBlockedLayout(graph, name(), cpu::ConvChannelBlock(), cpu::ChannelBlock());
  const int token_maps = cpu::ReadTokensAsChannelsLast(graph, name(), cpu::ConvChannelBlock());
  // These read the blocked layout, one after the other (an operator+ chain would leave their
  // order to the compiler).
  const int norms = cpu::FuseConcatBatchNorm(graph, name());
  const int flattened = cpu::FlattenBlockedIntoDense(graph, name());
  const int sums = cpu::FuseConvResidualSum(graph, name());
  const int means = cpu::FuseConvChannelMean(graph, name());
  return float_convs + attentions + add_norms + biases + int8_layers + int8_sums + relus + group_norms + gates + blocked +
         token_maps + norms + flattened + sums + means;
}

absl::Status CpuProvider::Copy(const Tensor& src, Tensor& dst) {
  if (src.device().type != DeviceType::kCpu || dst.device().type != DeviceType::kCpu)
    return absl::InvalidArgumentError("[cpu] copy between host tensors only");
  if (src.bytes() != dst.bytes())
    return absl::InvalidArgumentError("[cpu] copy size mismatch");
  if (src.dtype() == DataType::kString) {
    for (int64_t i = 0; i < src.numel(); ++i)
      dst.data<std::string>()[i] = src.data<std::string>()[i];
  } else if (src.bytes()) {
    std::memcpy(dst.raw(), src.raw(), src.bytes());
  }
  return absl::OkStatus();
}

}  // namespace tandem
