// CudaKernelAccepts: the static checks behind CudaProvider::Capability beyond the
// registry's (domain, op, opset, dtype-of-one-input) key. What is declined here runs on
// the CPU, joined to the GPU part by Copy nodes.
#include <algorithm>
#include <initializer_list>

#include "framework/copy_kernel.h"
#include "providers/cuda/cuda_provider.h"
#include "providers/cuda/kernels/launch.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {

namespace {

// The data inputs that are not float32, by op: class labels, Dropout's mask, counter and first row,
// Gather's and GatherGrad's indices, the optimizer updates' step (all read on the device).
bool NonFloatDataInput(const Node& n, size_t input, DataType t) {
  struct Allowed {
    const char* op;
    size_t input;
    std::initializer_list<DataType> types;
  };
  static const Allowed kAllowed[] = {
      {"SoftmaxCrossEntropyLoss", 1, {DataType::kInt64}},
      {"NegativeLogLikelihoodLoss", 1, {DataType::kInt64}},
      {"SoftmaxCrossEntropyLossGrad", 2, {DataType::kInt64}},
      {"NegativeLogLikelihoodLossGrad", 2, {DataType::kInt64}},
      {"DropoutGrad", 1, {DataType::kBool}},
      {"Dropout", 3, {DataType::kInt64}},
      {"Dropout", 4, {DataType::kInt64}},
      {"SGDUpdate", 2, {DataType::kInt64}},
      {"MomentumUpdate", 3, {DataType::kInt64}},
      {"AdamUpdate", 4, {DataType::kInt64}},
      {"AdamWUpdate", 4, {DataType::kInt64}},
      {"Gather", 1, {DataType::kInt64, DataType::kInt32}},
      {"GatherGrad", 2, {DataType::kInt64, DataType::kInt32}},
  };
  for (const Allowed& a : kAllowed)
    if (n.op_type == a.op && input == a.input && std::find(a.types.begin(), a.types.end(), t) != a.types.end())
      return true;
  return false;
}

// Outputs past the first that the graph reads (ClipGrad's bound gradients).
bool ReadsOutputsPastTheFirst(const Node& n) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty()) return true;
  return false;
}

}  // namespace

bool CudaKernelAccepts(const KernelInfo& info) {
  const Node& n = info.node;
  if (IsDeviceCopy(n)) return true;
  const KernelDef* def =
      CudaKernelRegistry().Find(n.domain, n.op_type, info.opset, KernelLookupType(CudaKernelRegistry(), info));
  if (!def) return false;
  // Our launchers index up to kMaxRank dims.
  for (const auto* shapes : {&info.input_shapes, &info.output_shapes})
    for (const Shape& s : *shapes)
      if (s.rank_known && s.dims.size() > static_cast<size_t>(kMaxRank)) return false;
  if (IsTypedOp(n)) return TypedOpAccepts(info);
  // Every data input is float32 but those NonFloatDataInput names (host and metadata
  // inputs are read as they are).
  for (size_t i = 0; i < info.input_types.size(); ++i) {
    const DataType t = info.input_types[i];
    if (t == DataType::kUndefined || t == DataType::kFloat || NonFloatDataInput(n, i, t)) continue;
    if (def->reads_on_host(static_cast<int>(i)) || def->reads_metadata_only(static_cast<int>(i))) continue;
    return false;
  }
  if (n.op_type == "MatMul" || n.op_type == "Gemm" || n.op_type == "FusedGemm" || n.op_type == "FusedMatMul")
    return MatMulAccepts(info);
  if (n.op_type == "Conv" || n.op_type == "FusedConv") return CudnnConvAccepts(info);
  if (n.op_type == "ConvTranspose") return ConvTransposeAccepts(info);
  if (n.op_type.find("Pool") != std::string::npos) return CudnnPoolAccepts(info);
  if (n.op_type.rfind("BatchNormalization", 0) == 0) return BatchNormAccepts(info);
  if (n.op_type == "ClipGrad") return !ReadsOutputsPastTheFirst(n);  // no reductions for the bounds
  if (n.op_type == "LayerNormalization")  // Mean / InvStdDev in float32 only (stash_type 1)
    for (size_t i = 1; i < info.output_types.size(); ++i)
      if (info.output_types[i] != DataType::kUndefined && info.output_types[i] != DataType::kFloat) return false;
  return true;
}

}  // namespace tandem::cuda
