#include "framework/execution_provider.h"

namespace tandem {

namespace {
const KernelDef* FindDef(const KernelRegistry& registry, const KernelInfo& info) {
  // Try each plausible type input: most kernels key on input 0.
  const KernelDef* any = registry.Find(info.node.domain, info.node.op_type, info.opset,
                                       DataType::kUndefined);
  if (!any) return nullptr;
  return registry.Find(info.node.domain, info.node.op_type, info.opset,
                       info.input_type(any->type_input));
}
}  // namespace

DataType KernelLookupType(const KernelRegistry& registry, const KernelInfo& info) {
  const KernelDef* any = registry.Find(info.node.domain, info.node.op_type, info.opset,
                                       DataType::kUndefined);
  return any ? info.input_type(any->type_input) : DataType::kUndefined;
}

const KernelDef* ExecutionProvider::FindKernel(const KernelInfo& info) const {
  return FindDef(registry(), info);
}

std::optional<double> ExecutionProvider::Capability(const KernelInfo& info) const {
  if (!FindDef(registry(), info)) return std::nullopt;
  return launch_overhead_us();
}

absl::StatusOr<std::unique_ptr<Kernel>> ExecutionProvider::MakeKernel(const KernelInfo& info) {
  const KernelDef* def = FindDef(registry(), info);
  if (!def) {
    DataType t = KernelLookupType(registry(), info);
    return absl::UnimplementedError("[" + name() + "] " + info.node.Describe() + ": " +
                                    registry().ExplainMiss(info.node.domain, info.node.op_type,
                                                           info.opset, t));
  }
  return def->create(info);
}

ExecutionProvider* ProviderOn(const std::vector<ExecutionProvider*>& providers, const Device& d) {
  for (ExecutionProvider* p : providers)
    if (p->device() == d) return p;
  return nullptr;
}

absl::StatusOr<Tensor> CopyToHost(const std::vector<ExecutionProvider*>& providers, const Tensor& t) {
  if (!t.is_tensor() || t.device().type == DeviceType::kCpu) return t;
  ExecutionProvider* p = ProviderOn(providers, t.device());
  if (!p)
    return absl::InvalidArgumentError("[run] a value lives on " + t.device().ToString() +
                                      ", which no provider of this session owns");
  Tensor host = Tensor::Host(t.dtype(), t.dims());
  absl::Status s = p->Copy(t, host);
  if (!s.ok()) return s;
  return host;
}

}  // namespace tandem
