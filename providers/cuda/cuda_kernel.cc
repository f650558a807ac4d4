#include "providers/cuda/cuda_kernel.h"

#include <algorithm>

namespace tandem::cuda {

namespace {
// Out of memory (data == nullptr from CudaAllocator) as a status with the allocator's words.
absl::Status CheckAllocated(const Tensor& t, KernelContext& ctx) {
  if (t.bytes() && !t.raw())
    return absl::ResourceExhaustedError(static_cast<CudaAllocator&>(ctx.allocator()).last_error());
  return absl::OkStatus();
}
}  // namespace

absl::StatusOr<Tensor*> Output(KernelContext& ctx, int i, DataType dtype, Dims dims) {
  Tensor& t = ctx.AllocateOutput(i, dtype, std::move(dims));
  absl::Status s = CheckAllocated(t, ctx);
  if (!s.ok()) return s;
  return &t;
}

absl::StatusOr<Tensor> Scratch(KernelContext& ctx, DataType dtype, Dims dims) {
  Tensor t = AllocateTensor(ctx.allocator(), dtype, std::move(dims));
  absl::Status s = CheckAllocated(t, ctx);
  if (!s.ok()) return s;
  return t;
}

KernelDef FloatKernel(const std::string& domain, const std::string& op, int since, int until,
                      KernelFactory create) {
  KernelDef d;
  d.domain = domain;
  d.op = op;
  d.since = since;
  d.until = until;
  d.types = {DataType::kFloat};
  d.create = std::move(create);
  return d;
}

absl::StatusOr<StridedIndex> BroadcastTo(const Dims& x, const Dims& out) {
  StridedIndex ix;
  if (out.size() > static_cast<size_t>(kMaxRank) || x.size() > out.size())
    return absl::UnimplementedError("broadcast of rank " + std::to_string(out.size()) + " (CUDA kernels take up to " +
                                    std::to_string(kMaxRank) + ")");
  ix.rank = static_cast<int>(out.size());
  const int shift = ix.rank - static_cast<int>(x.size());
  int64_t stride = 1;
  for (int d = ix.rank - 1; d >= 0; --d) {
    ix.dims[d] = out[d];
    const int xd = d - shift;
    if (xd < 0) {
      ix.stride_a[d] = 0;
      continue;
    }
    if (x[xd] != out[d] && x[xd] != 1)
      return absl::InvalidArgumentError("cannot broadcast " + DimsToString(x) + " to " + DimsToString(out));
    ix.stride_a[d] = x[xd] == 1 && out[d] != 1 ? 0 : stride;
    stride *= x[xd];
  }
  return ix;
}

absl::StatusOr<StridedIndex> Broadcast(const Dims& a, const Dims& b) {
  const size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t da = d + a.size() >= rank ? a[d + a.size() - rank] : 1;
    const int64_t db = d + b.size() >= rank ? b[d + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1)
      return absl::InvalidArgumentError("shapes " + DimsToString(a) + " and " + DimsToString(b) +
                                        " do not broadcast");
    out[d] = da == 1 ? db : da;
  }
  auto ia = BroadcastTo(a, out);
  if (!ia.ok()) return ia.status();
  auto ib = BroadcastTo(b, out);
  if (!ib.ok()) return ib.status();
  StridedIndex ix = *ia;
  for (int d = 0; d < ix.rank; ++d) ix.stride_b[d] = ib->stride_a[d];
  return ix;
}

absl::StatusOr<std::vector<int64_t>> HostInts(const Tensor* t, const char* what) {
  if (!t) return absl::InvalidArgumentError(std::string("missing input '") + what + "'");
  if (t->dtype() != DataType::kInt64 && t->dtype() != DataType::kInt32)
    return absl::InvalidArgumentError(std::string("input '") + what + "' must be int64 or int32");
  if (t->device().type != DeviceType::kCpu)
    return absl::InternalError(std::string("input '") + what + "' must be on the host");
  return t->ToInt64Vector();
}

absl::Status AddChannelBias(const float* b, Tensor& y, cudaStream_t stream) {
  Dims bias_dims(y.dims().begin() + 1, y.dims().end());
  std::fill(bias_dims.begin() + 1, bias_dims.end(), 1);
  auto ix = Broadcast(y.dims(), bias_dims);
  if (!ix.ok()) return ix.status();
  TANDEM_CUDA_RETURN(LaunchBinary(BinaryOp::kAdd, y.data<float>(), b, y.data<float>(), y.numel(), &*ix, 0.f, stream));
  return absl::OkStatus();
}

absl::Status RequireSameShape(const Tensor& dy, const Tensor& x) {
  if (dy.dims() == x.dims()) return absl::OkStatus();
  return absl::InvalidArgumentError("dY " + DimsToString(dy.dims()) + " and X " + DimsToString(x.dims()) +
                                    " differ in shape");
}

absl::Status RequireFloat(const KernelContext& ctx, std::initializer_list<int> inputs) {
  for (int i : inputs) {
    const Tensor* t = ctx.input(i);
    if (!t) return absl::InvalidArgumentError("missing input " + std::to_string(i));
    if (t->dtype() != DataType::kFloat)
      return absl::UnimplementedError("input " + std::to_string(i) + " is " + DataTypeName(t->dtype()) +
                                      "; the CUDA kernel takes float32");
  }
  return absl::OkStatus();
}

std::optional<UnaryOp> FusedActivationOp(const std::string& activation) {
  if (activation == "Relu") return UnaryOp::kRelu;
  if (activation == "Tanh") return UnaryOp::kTanh;
  if (activation == "Sigmoid") return UnaryOp::kSigmoid;
  if (activation == "LeakyRelu") return UnaryOp::kLeakyRelu;
  if (activation == "Clip") return UnaryOp::kClip;  // bounds in activation_alpha/beta
  return std::nullopt;
}

}  // namespace tandem::cuda
