// The CPU execution provider: oneDNN primitives for the heavy ops, plain C++ for the rest.
#pragma once
#include <memory>

#include "framework/execution_provider.h"
#include "providers/cpu/cpu_allocator.h"

namespace tandem {

class CpuProvider : public ExecutionProvider {
 public:
  CpuProvider();
  std::string name() const override { return "cpu"; }
  Device device() const override { return Device{DeviceType::kCpu, 0}; }
  Allocator& allocator() override { return allocator_; }
  const KernelRegistry& registry() const override;
  absl::Status Copy(const Tensor& src, Tensor& dst) override;
  // Roofline estimate (placement/cost_model.h) with this machine's calibrated speed.
  std::optional<double> Capability(const KernelInfo& info) const override;
  bool CanRun(const KernelInfo& info) const override { return FindKernel(info) != nullptr; }
  // Folds MatMul + bias Adds (matmul_bias.h) and keeps convolution chains in oneDNN's
  // channel-blocked layout (blocked_layout.h).
  int OptimizeGraph(Graph& graph) override;

 private:
  CpuAllocator allocator_;
};

// The CPU kernel registry (built once).
const KernelRegistry& CpuKernelRegistry();

}  // namespace tandem
