// Concat and ai.tandem ConcatGrad (dY, shape_0 .. shape_n-1 -> the n pieces of dY along
// `axis`) on the GPU, float32: with `outer` the product of the dims before the axis, each
// piece is `outer` rows of its own width inside rows of the output's width, so one
// cudaMemcpy2DAsync (device to device) moves each piece, no kernel of our own.
#include <numeric>
#include <vector>

#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {
namespace {

// outer = product of dims[0, axis), and each piece's row width in bytes.
struct ConcatLayout {
  size_t outer = 1, row_bytes = 0;
  std::vector<size_t> piece_bytes;
};

absl::StatusOr<ConcatLayout> Layout(const std::vector<Dims>& pieces, int64_t axis, const Dims& joined) {
  ConcatLayout l;
  for (int64_t d = 0; d < axis; ++d) l.outer *= static_cast<size_t>(joined[d]);
  for (const Dims& p : pieces) {
    if (p.size() != joined.size()) return absl::InvalidArgumentError("Concat inputs differ in rank");
    size_t bytes = sizeof(float);
    for (size_t d = axis; d < p.size(); ++d) bytes *= static_cast<size_t>(p[d]);
    l.piece_bytes.push_back(bytes);
    l.row_bytes += bytes;
  }
  return l;
}

absl::StatusOr<int64_t> Axis(int64_t axis, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return absl::InvalidArgumentError("axis " + std::to_string(axis) + " is out of range");
  return axis < 0 ? axis + r : axis;
}

class ConcatKernel : public Kernel {
 public:
  explicit ConcatKernel(const KernelInfo& info)
      : prov_(ProviderOf(info)), axis_(info.node.attr_int("axis", info.opset < 4 ? 1 : 0)) {}

  absl::Status Compute(KernelContext& ctx) override {
    std::vector<const Tensor*> in;
    std::vector<Dims> dims;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      if (!ctx.input(i)) continue;
      if (ctx.input(i)->dtype() != DataType::kFloat) return absl::UnimplementedError("the CUDA Concat takes float32");
      in.push_back(ctx.input(i));
      dims.push_back(ctx.input(i)->dims());
    }
    if (in.empty()) return absl::InvalidArgumentError("Concat needs an input");
    auto axis = Axis(axis_, dims[0].size());
    if (!axis.ok()) return axis.status();
    Dims joined = dims[0];
    joined[*axis] = 0;
    for (const Dims& d : dims) {
      for (size_t k = 0; k < d.size() && k < joined.size(); ++k)
        if (static_cast<int64_t>(k) != *axis && d[k] != joined[k])
          return absl::InvalidArgumentError("Concat inputs " + DimsToString(dims[0]) + " and " + DimsToString(d) +
                                            " differ off the axis");
      if (d.size() == joined.size()) joined[*axis] += d[*axis];
    }
    auto layout = Layout(dims, *axis, joined);
    if (!layout.ok()) return layout.status();
    auto y = Output(ctx, 0, DataType::kFloat, joined);
    if (!y.ok()) return y.status();
    if ((*y)->numel() == 0) return absl::OkStatus();
    char* dst = static_cast<char*>((*y)->raw());
    for (size_t i = 0; i < in.size(); ++i) {
      const size_t w = layout->piece_bytes[i];
      if (w && layout->outer == 1)  // one row: a plain copy (2-D pitches are capped near 2 GiB)
        TANDEM_CUDA_RETURN(cudaMemcpyAsync(dst, in[i]->raw(), w, cudaMemcpyDeviceToDevice, prov_.stream()));
      else if (w)
        TANDEM_CUDA_RETURN(cudaMemcpy2DAsync(dst, layout->row_bytes, in[i]->raw(), w, w, layout->outer,
                                             cudaMemcpyDeviceToDevice, prov_.stream()));
      dst += w;
    }
    return absl::OkStatus();
  }

 private:
  CudaProvider& prov_;
  int64_t axis_;
};

class ConcatGradKernel : public Kernel {
 public:
  explicit ConcatGradKernel(const KernelInfo& info) : prov_(ProviderOf(info)), axis_(info.node.attr_int("axis", 0)) {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    const Tensor& dy = *ctx.input(0);
    std::vector<Dims> dims;
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      auto d = HostInts(ctx.input(i), "shape");
      if (!d.ok()) return d.status();
      dims.push_back(*d);
    }
    auto axis = Axis(axis_, dy.rank());
    if (!axis.ok()) return axis.status();
    auto layout = Layout(dims, *axis, dy.dims());
    if (!layout.ok()) return layout.status();
    if (layout->row_bytes * layout->outer != dy.bytes())
      return absl::InvalidArgumentError("the pieces' shapes do not add up to dY " + DimsToString(dy.dims()));
    const char* src = static_cast<const char*>(dy.raw());
    for (size_t i = 0; i < dims.size(); ++i) {
      const size_t w = layout->piece_bytes[i];
      if (ctx.output_wanted(static_cast<int>(i))) {
        auto piece = Output(ctx, static_cast<int>(i), DataType::kFloat, dims[i]);
        if (!piece.ok()) return piece.status();
        if (w && layout->outer == 1)
          TANDEM_CUDA_RETURN(cudaMemcpyAsync((*piece)->raw(), src, w, cudaMemcpyDeviceToDevice, prov_.stream()));
        else if (w && layout->outer)
          TANDEM_CUDA_RETURN(cudaMemcpy2DAsync((*piece)->raw(), w, src, layout->row_bytes, w, layout->outer,
                                               cudaMemcpyDeviceToDevice, prov_.stream()));
      }
      src += w;
    }
    return absl::OkStatus();
  }

 private:
  CudaProvider& prov_;
  int64_t axis_;
};

}  // namespace

void RegisterConcatKernels(KernelRegistry& r) {
  r.Add(FloatKernel("", "Concat", 1, kMaxOpset, Make<ConcatKernel>()));
  KernelDef grad = FloatKernel("ai.tandem", "ConcatGrad", 1, kMaxOpset, Make<ConcatGradKernel>());
  for (int i = 1; i <= 64; ++i) grad.host_inputs.push_back(i);  // the pieces' shapes
  r.Add(std::move(grad));
}

}  // namespace tandem::cuda
