// FromBlocked (ai.tandem, attribute channel_block = B): a channel-blocked float32 (or 8-bit:
// quantized convolutions' outputs) tensor
// [N, C/B, spatial..., B] (or channels-last, B = C: providers/cpu/channel_block.h) back
// to plain [N, C, spatial...], where a chain of the CPU
// provider's blocked-layout pass (providers/cpu/rewrites/blocked_layout.h) meets a reader of the
// plain layout. Small tensors (e.g. after a global pool) by a direct transpose of each
// block, no primitive to set up; feature maps from 4K elements on (a model returning
// one, a plain reader after a convolution) by oneDNN's reorder, kept per shape (a
// channels-last 7 x 7 x 1024 map: 11 us, against 39 us by the scalar transpose, Zen 5).
// ToBlocked (the same attribute) the other way, plain [N, C, spatial...] float32 into the
// blocks (C a multiple of B), where the pass starts a chain at a plain value (an upsampling
// Resize converts its smaller input): always by oneDNN's reorder, kept per shape.
#include <algorithm>
#include <string>

#include "providers/cpu/channel_block.h"
#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

// A reorder between two layouts of one tensor, built once per shape and kept.
struct Reorder {
  dnnl::reorder prim;
  dnnl::memory from, to;
};

// Reorders `x` (laid out as `from`) into `y` (as `to`) with the entry of `key` in `cache`,
// built on first use; `what` names the direction in errors.
absl::Status RunReorder(ShapeCache<Reorder>& cache, const std::vector<Dims>& key, const dnnl::memory::desc& from,
                        const dnnl::memory::desc& to, const Tensor& x, Tensor& y, const char* what) {
  try {
    Reorder& r = cache.Get(key, [&] {
      return Reorder{dnnl::reorder(dnnl::reorder::primitive_desc(DnnlEngine(), from, DnnlEngine(), to)),
                     UnboundMemory(from), UnboundMemory(to)};
    });
    PointAt(r.from, x.raw());
    PointAt(r.to, y.raw());
    r.prim.execute(DnnlStream(), r.from, r.to);
    DnnlStream().wait();
    return absl::OkStatus();
  } catch (const dnnl::error& e) {
    return absl::InternalError(std::string("oneDNN reorder ") + what + " failed: " + e.what());
  }
}

class FromBlocked : public Kernel {
 public:
  explicit FromBlocked(const KernelInfo& info)
      : block_(info.node.attr_int("channel_block", 0)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    auto plain = LogicalView(x, static_cast<int>(block_), 2);
    if (!plain.ok()) return plain.status();
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), plain->dims());
    const size_t rank = plain->rank();
    if (x.numel() >= kReorderFrom && rank >= 3 && rank <= 5) {
      const auto type = *ToDnnl(x.dtype());
      return RunReorder(cache_, {plain->dims(), {static_cast<int64_t>(x.dtype())}},
                        BlockedDesc(plain->dims(), static_cast<int>(block_), type), PlainDesc(plain->dims(), type), x, y,
                        "out of channel blocks");
    }
    if (x.dtype() == DataType::kFloat) Transpose(x.data<float>(), x, y.data<float>());
    else if (x.dtype() == DataType::kUint8) Transpose(x.data<uint8_t>(), x, y.data<uint8_t>());
    else Transpose(x.data<int8_t>(), x, y.data<int8_t>());
    return absl::OkStatus();
  }

 private:
  template <typename T>
  static void Transpose(const T* px, const Tensor& x, T* py) {
    const int64_t blocks = x.dim(0) * x.dim(1), S = DimProduct(x.dims(), 2, x.rank() - 1),
                  B = x.dims().back();
    // Block (n, cb) holds channels cb*B.. of image n: x[s][k] -> y[k][s], both contiguous.
    // In tiles of kTile x kTile, so that reads and writes each stay on a few cache lines
    // (channels-last blocks are as wide as all channels), spread over the threads.
    constexpr int64_t kTile = 16;
    const int64_t tiles = (S + kTile - 1) / kTile;
    ParallelForIf(blocks * S * B >= (1 << 14), blocks * tiles, [&](int64_t task) {
      const int64_t blk = task / tiles, s0 = task % tiles * kTile, s1 = std::min(S, s0 + kTile);
      const T* xb = px + blk * S * B;
      T* yb = py + blk * S * B;
      for (int64_t k0 = 0; k0 < B; k0 += kTile)
        for (int64_t k = k0; k < std::min(B, k0 + kTile); ++k)
          for (int64_t s = s0; s < s1; ++s) yb[k * S + s] = xb[s * B + k];
    });
  }

  static constexpr int64_t kReorderFrom = int64_t{1} << 12;  // elements
  int64_t block_;
  ShapeCache<Reorder> cache_;
};

class ToBlocked : public Kernel {
 public:
  explicit ToBlocked(const KernelInfo& info) : block_(static_cast<int>(info.node.attr_int("channel_block", 0))) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const int64_t channels = x.rank() >= 2 ? x.dim(1) : 0;
    if (x.rank() < 3 || x.rank() > 5 || (block_ != kChannelsLast && (block_ <= 0 || channels % block_ != 0)))
      return absl::InvalidArgumentError("ToBlocked takes a float [N, C, spatial...] of rank 3 to 5 with C a multiple of " +
                                        std::to_string(block_) + ", got " + DimsToString(x.dims()));
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), BlockedDims(x.dims(), block_));
    const auto type = dnnl::memory::data_type::f32;
    return RunReorder(cache_, {x.dims()}, PlainDesc(x.dims(), type), BlockedDesc(x.dims(), block_, type), x, y,
                      "into channel blocks");
  }

 private:
  int block_;
  ShapeCache<Reorder> cache_;
};

}  // namespace

void RegisterBlockedLayoutKernels(KernelRegistry& r) {
  r.Add(TandemKernel("FromBlocked", {DataType::kFloat, DataType::kUint8, DataType::kInt8}, Make<FromBlocked>()));
  r.Add(TandemKernel("ToBlocked", {DataType::kFloat}, Make<ToBlocked>()));
}

}  // namespace tandem::cpu
