// Shape and movement ops on the GPU: Reshape, Flatten, Squeeze, Unsqueeze and Identity
// alias their input (no copy, no launch); Expand and Transpose are strided copies.
#include <algorithm>

#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {
namespace {

// Output dims of Reshape/Flatten/Squeeze/Unsqueeze from the input and the op's data.
class Alias : public Kernel {
 public:
  explicit Alias(const KernelInfo& info)
      : op_(info.node.op_type),
        opset_(info.opset),
        axis_(info.node.attr_int("axis", 1)),
        allowzero_(info.node.attr_int("allowzero", 0) != 0),
        attr_axes_(info.node.attr_ints("axes")) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return absl::InvalidArgumentError("missing input 0");
    auto dims = OutputDims(ctx, *x);
    if (!dims.ok()) return dims.status();
    if (NumElements(*dims) != x->numel())
      return absl::InvalidArgumentError("cannot reshape " + DimsToString(x->dims()) + " to " + DimsToString(*dims));
    ctx.SetOutput(0, x->Reshaped(*dims));
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<std::vector<int64_t>> Axes(KernelContext& ctx) const {
    if (opset_ >= 13 && ctx.input(1)) return HostInts(ctx.input(1), "axes");
    return attr_axes_;
  }

  absl::StatusOr<Dims> OutputDims(KernelContext& ctx, const Tensor& x) const {
    const Dims& in = x.dims();
    if (op_ == "Identity") return in;
    if (op_ == "Flatten") {
      const int64_t axis = axis_ < 0 ? axis_ + x.rank() : axis_;
      if (axis < 0 || axis > x.rank()) return absl::InvalidArgumentError("axis out of range");
      int64_t outer = 1;
      for (int64_t d = 0; d < axis; ++d) outer *= in[d];
      return Dims{outer, outer ? x.numel() / outer : 0};
    }
    if (op_ == "Reshape") {
      auto shape = HostInts(ctx.input(1), "shape");
      if (!shape.ok()) return shape.status();
      Dims out = *shape;
      int infer = -1;
      int64_t known = 1;
      for (size_t d = 0; d < out.size(); ++d) {
        if (out[d] == 0 && !allowzero_) out[d] = d < in.size() ? in[d] : 0;
        if (out[d] == -1) {
          if (infer >= 0) return absl::InvalidArgumentError("more than one -1 in the shape");
          infer = static_cast<int>(d);
        } else {
          known *= out[d];
        }
      }
      if (infer >= 0) out[infer] = known ? x.numel() / known : 0;
      return out;
    }
    auto axes = Axes(ctx);
    if (!axes.ok()) return axes.status();
    if (op_ == "Squeeze") {
      Dims out;
      for (int d = 0; d < x.rank(); ++d) {
        bool drop = axes->empty() ? in[d] == 1 : false;
        for (int64_t a : *axes) drop |= (a < 0 ? a + x.rank() : a) == d;
        if (!drop) out.push_back(in[d]);
      }
      return out;
    }
    // Unsqueeze
    const int64_t rank = x.rank() + static_cast<int64_t>(axes->size());
    std::vector<bool> inserted(rank, false);
    for (int64_t a : *axes) {
      const int64_t p = a < 0 ? a + rank : a;
      if (p < 0 || p >= rank) return absl::InvalidArgumentError("axis out of range");
      inserted[p] = true;
    }
    Dims out;
    size_t next = 0;
    for (int64_t d = 0; d < rank; ++d) out.push_back(inserted[d] ? 1 : in[next++]);
    return out;
  }

  std::string op_;
  int opset_;
  int64_t axis_;
  bool allowzero_;
  std::vector<int64_t> attr_axes_;
};

class Expand : public Kernel {
 public:
  explicit Expand(const KernelInfo& info) : stream_(ProviderOf(info).stream()) {}
  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    const Tensor& x = *ctx.input(0);
    auto shape = HostInts(ctx.input(1), "shape");
    if (!shape.ok()) return shape.status();
    // The output is the broadcast of x's dims with the requested shape.
    auto both = Broadcast(x.dims(), *shape);
    if (!both.ok()) return both.status();
    Dims out(both->dims, both->dims + both->rank);
    auto ix = BroadcastTo(x.dims(), out);
    if (!ix.ok()) return ix.status();
    auto y = Output(ctx, 0, DataType::kFloat, out);
    if (!y.ok()) return y.status();
    TANDEM_CUDA_RETURN(LaunchStridedCopy(x.data<float>(), (*y)->data<float>(), (*y)->numel(), *ix, stream_));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
};

class Transpose : public Kernel {
 public:
  explicit Transpose(const KernelInfo& info)
      : stream_(ProviderOf(info).stream()), perm_(info.node.attr_ints("perm")) {}
  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    const Tensor& x = *ctx.input(0);
    const int rank = x.rank();
    if (rank > kMaxRank) return absl::UnimplementedError("rank above 8");
    std::vector<int64_t> perm = perm_;
    if (perm.empty())
      for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
    if (static_cast<int>(perm.size()) != rank) return absl::InvalidArgumentError("perm has the wrong length");
    Dims strides(rank, 1);
    for (int d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * x.dim(d + 1);
    StridedIndex ix;
    ix.rank = rank;
    Dims out(rank);
    for (int d = 0; d < rank; ++d) {
      if (perm[d] < 0 || perm[d] >= rank) return absl::InvalidArgumentError("perm value out of range");
      out[d] = x.dim(static_cast<int>(perm[d]));
      ix.dims[d] = out[d];
      ix.stride_a[d] = strides[perm[d]];
    }
    auto y = Output(ctx, 0, DataType::kFloat, out);
    if (!y.ok()) return y.status();
    TANDEM_CUDA_RETURN(LaunchStridedCopy(x.data<float>(), (*y)->data<float>(), (*y)->numel(), ix, stream_));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
  std::vector<int64_t> perm_;
};

}  // namespace

void RegisterShapeKernels(KernelRegistry& r) {
  KernelDef reshape = FloatKernel("", "Reshape", 5, kMaxOpset, Make<Alias>());
  reshape.host_inputs = {1};
  r.Add(std::move(reshape));
  r.Add(FloatKernel("", "Flatten", 1, kMaxOpset, Make<Alias>()));
  r.Add(FloatKernel("", "Identity", 1, kMaxOpset, Make<Alias>()));
  for (const char* op : {"Squeeze", "Unsqueeze"}) {
    r.Add(FloatKernel("", op, 1, 12, Make<Alias>()));
    KernelDef d = FloatKernel("", op, 13, kMaxOpset, Make<Alias>());
    d.host_inputs = {1};
    r.Add(std::move(d));
  }
  KernelDef expand = FloatKernel("", "Expand", 8, kMaxOpset, Make<Expand>());
  expand.host_inputs = {1};
  r.Add(std::move(expand));
  r.Add(FloatKernel("", "Transpose", 1, kMaxOpset, Make<Transpose>()));
}

}  // namespace tandem::cuda
