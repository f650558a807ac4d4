// oneDNN plumbing for CPU kernels: one engine and stream per process, dtype and
// memory-descriptor helpers, and a small per-kernel primitive cache keyed by shape.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include <dnnl.hpp>

#include "absl/status/statusor.h"
#include "graph/tensor.h"
#include "providers/cpu/channel_block.h"

namespace tandem::cpu {

dnnl::engine& DnnlEngine();
dnnl::stream& DnnlStream();

// eltwise_hardswish's alpha and beta: from oneDNN 3.0 it computes x * clip(alpha x + beta,
// 0, 1) (ONNX's HardSwish with these); 2.x computes x * relu6(x + 3) / 6 and ignores them.
constexpr float kDnnlHardSwishAlpha = 1.f / 6.f, kDnnlHardSwishBeta = 0.5f;

// oneDNN data type for `t`, or nullopt when oneDNN has none (int64, double, ...).
std::optional<dnnl::memory::data_type> ToDnnl(DataType t);
dnnl::memory::dims ToDnnlDims(const Dims& d);
// Plain row-major descriptor for dims (rank 0 is treated as [1]).
dnnl::memory::desc PlainDesc(const Dims& d, dnnl::memory::data_type dt);
// Channel-blocked layouts (block B or kChannelsLast): providers/cpu/channel_block.h.
// The block the jit pooling kernels of this CPU use: 16 with AVX-512, else 8.
int ChannelBlock();
// The layout the CPU provider's convolution chains run in (providers/cpu/rewrites/blocked_layout.h):
// the one oneDNN's convolutions choose on this CPU (asked once, for a 3x3 convolution with
// format_tag::any: kChannelsLast where its AVX-512 brgemm kernels run, else 16 or 8), or
// what TANDEM_CPU_CONV_LAYOUT says: nhwc (kChannelsLast), nChw16c (16), nChw8c (8) or nchw
// (0: no blocked layout). Any other value of the variable is ignored with a warning.
int ConvChannelBlock();
// [N, C, s...] -> [N, C/B, s..., B] (C must be a multiple of B); [N, 1, s..., C] for
// kChannelsLast.
Dims BlockedDims(const Dims& logical, int block);
// The logical [N, C, s...] view of a channel-blocked tensor [N, C/B, s..., B] (the same
// bytes), or InvalidArgument naming its shape when it does not end in the block (for
// kChannelsLast: has more than one block) or its logical rank would be below `min_rank`.
absl::StatusOr<Tensor> LogicalView(const Tensor& blocked, int block, int min_rank);
// Descriptor of a logical [N, C, s...] tensor (rank 3 to 5) stored channel-blocked by B.
dnnl::memory::desc BlockedDesc(const Dims& logical, int block, dnnl::memory::data_type dt);
// A dnnl::memory wrapping the tensor's storage (no copy).
dnnl::memory WrapTensor(const Tensor& t, const dnnl::memory::desc& md);
// A dnnl::memory of `md` without storage, for a kernel to keep and point at each call's
// data with PointAt: creating one per call (WrapTensor) costs an allocation, ~0.2-0.5 us.
dnnl::memory UnboundMemory(const dnnl::memory::desc& md);
inline void PointAt(dnnl::memory& m, const void* data) { m.set_data_handle(const_cast<void*>(data)); }

// A primitive's arguments kept from call to call: memories without storage (Bind), pointed
// at each call's tensors (Point), and fixed ones such as prepacked weights (Fix).
class BoundArgs {
 public:
  void Bind(int arg, const dnnl::memory::desc& md) { args_[arg] = UnboundMemory(md); }
  void Fix(int arg, const dnnl::memory& m) { args_[arg] = m; }
  void Point(int arg, const void* data) { PointAt(args_.at(arg), data); }
  const std::unordered_map<int, dnnl::memory>& map() const { return args_; }

 private:
  std::unordered_map<int, dnnl::memory> args_;
};

// md's dims and data type with format_tag::any: oneDNN picks the layout.
inline dnnl::memory::desc AnyLayout(const dnnl::memory::desc& md) {
  return dnnl::memory::desc(md.dims(), md.data_type(), dnnl::memory::format_tag::any);
}

// Caches one built object (e.g. a primitive and its descriptors) per input shape key.
template <typename Entry>
class ShapeCache {
 public:
  template <typename Build>
  Entry& Get(const std::vector<Dims>& key, Build&& build) {
    auto it = entries_.find(key);
    if (it == entries_.end()) it = entries_.emplace(key, build()).first;
    return it->second;
  }

 private:
  std::map<std::vector<Dims>, Entry> entries_;
};

// oneDNN's sgemm (row-major C = alpha op(A) op(B) + beta C, op 'N' or 'T'), its status as
// an absl::Status.
absl::Status Sgemm(char trans_a, char trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace tandem::cpu
