// ai.tandem FusedGroupNorm (ops/tandem_ops.cc; written by rewrites/group_norm.cc): Y =
// act(GroupNormalization(X) * Scale + Bias) per channel, act none or Swish, X and Y plain,
// channel-blocked or channels-last (channel_block): the diffusion UNet's and VAE's
// normalization, which the exporters write as six to eight nodes and a layout conversion.
// X is seen as [N, outer, S, inner] (channel c = o * inner + i: plain inner = 1, blocked
// inner = B, channels-last outer = 1), cut into N * outer * chunks tasks of whole pixels
// for the threads. One pass over X takes each channel's moments (per block of 256 pixels its
// float sums, then its squared deviations while in L1, merged in float64: Moments), the
// groups' mean and variance come from those, and a second pass writes x * a[c] + b[c] and the
// Swish over each block while it is in cache (swish.h).
#include <algorithm>
#include <cmath>
#include <vector>

#include <omp.h>

#include "providers/cpu/channel_block.h"
#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/microkernels/swish.h"

namespace tandem::cpu {
namespace {

constexpr int64_t kPixelBlock = 256;

struct Layout {
  int64_t N, outer, S, inner;
  int64_t channels() const { return outer * inner; }
};

// Count, mean and sum of squared deviations of a set of values; two sets merge exactly
// (Chan et al.'s pairwise update), so blocks and tasks combine without a second pass.
struct Moments {
  double n = 0, mean = 0, m2 = 0;
  void Merge(double bn, double bmean, double bm2) {
    if (bn == 0) return;
    const double total = n + bn, d = bmean - mean;
    mean += d * bn / total;
    m2 += bm2 + d * d * n * bn / total;
    n = total;
  }
  void Merge(const Moments& o) { Merge(o.n, o.mean, o.m2); }
};

// Per channel of the pixels [s0, s1) at p (each `inner` values), their moments merged into
// out[i]: each block of up to 256 pixels summed in float lanes, then its squared deviations
// from its own mean while it is in L1, then merged in float64.
void AddChannelMoments(const float* p, int64_t s0, int64_t s1, int64_t inner, Moments* out) {
  if (inner == 1) {  // one channel: 16 float lanes along the pixels
    for (int64_t b = s0; b < s1; b += kPixelBlock) {
      const int64_t e = std::min(s1, b + kPixelBlock), len = e - b;
      float lanes[16] = {}, block = 0;
      int64_t s = b;
      for (; s + 16 <= e; s += 16)
        for (int l = 0; l < 16; ++l) lanes[l] += p[s + l];
      for (int l = 0; l < 16; ++l) block += lanes[l];
      for (; s < e; ++s) block += p[s];
      const float mean = block / static_cast<float>(len);
      float sq[16] = {}, m2 = 0;
      for (s = b; s + 16 <= e; s += 16)
        for (int l = 0; l < 16; ++l) sq[l] += (p[s + l] - mean) * (p[s + l] - mean);
      for (int l = 0; l < 16; ++l) m2 += sq[l];
      for (; s < e; ++s) m2 += (p[s] - mean) * (p[s] - mean);
      out[0].Merge(static_cast<double>(len), mean, m2);
    }
    return;
  }
  std::vector<float> mean(inner), m2(inner);
  for (int64_t b = s0; b < s1; b += kPixelBlock) {
    const int64_t e = std::min(s1, b + kPixelBlock), len = e - b;
    std::fill(mean.begin(), mean.end(), 0.f);
    std::fill(m2.begin(), m2.end(), 0.f);
    for (int64_t s = b; s < e; ++s)
      for (int64_t i = 0; i < inner; ++i) mean[i] += p[s * inner + i];
    for (int64_t i = 0; i < inner; ++i) mean[i] /= static_cast<float>(len);
    for (int64_t s = b; s < e; ++s)
      for (int64_t i = 0; i < inner; ++i) m2[i] += (p[s * inner + i] - mean[i]) * (p[s * inner + i] - mean[i]);
    for (int64_t i = 0; i < inner; ++i) out[i].Merge(static_cast<double>(len), mean[i], m2[i]);
  }
}

class FusedGroupNorm : public Kernel {
 public:
  explicit FusedGroupNorm(const KernelInfo& info)
      : node_(info.node),
        groups_(info.node.attr_int("num_groups", 0)),
        epsilon_(info.node.attr_float("epsilon", 1e-5f)),
        swish_(info.node.attr_string("activation", "") == "Swish"),
        block_(static_cast<int>(info.node.attr_int("channel_block", 0))) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x_in = *ctx.input(0);
    const Tensor& scale = *ctx.input(1);
    const Tensor& bias = *ctx.input(2);
    if (!node_.attr_string("activation", "").empty() && !swish_)
      return absl::InvalidArgumentError(node_.Describe() + ": activation must be \"\" or Swish, got " +
                                        node_.attr_string("activation", ""));
    Tensor x = x_in;
    if (block_ != 0) {
      auto view = LogicalView(x_in, block_, 3);
      if (!view.ok()) return view.status();
      x = *std::move(view);
    }
    if (x.dtype() != DataType::kFloat || scale.dtype() != DataType::kFloat || bias.dtype() != DataType::kFloat ||
        x.rank() < 3)
      return absl::InvalidArgumentError(node_.Describe() + ": needs float32 X [N, C, spatial...], Scale and Bias; got X " +
                                        DimsToString(x.dims()));
    const int64_t N = x.dim(0), C = x.dim(1), S = DimProduct(x.dims(), 2, x.rank());
    if (groups_ <= 0 || C % groups_ != 0 || scale.numel() != C || bias.numel() != C)
      return absl::InvalidArgumentError(node_.Describe() + ": num_groups " + std::to_string(groups_) +
                                        " must divide the " + std::to_string(C) +
                                        " channels, and Scale and Bias hold one value per channel; got " +
                                        DimsToString(scale.dims()) + " and " + DimsToString(bias.dims()));
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, x_in.dims());
    if (x.numel() == 0) return absl::OkStatus();
    const Layout layout = block_ == 0               ? Layout{N, C, S, 1}
                          : block_ == kChannelsLast ? Layout{N, 1, S, C}
                                                    : Layout{N, C / block_, S, block_};
    Run(x.data<float>(), y.data<float>(), layout, scale.data<float>(), bias.data<float>(), ctx.num_threads());
    return absl::OkStatus();
  }

 private:
  void Run(const float* x, float* y, const Layout& l, const float* gamma, const float* beta, int threads) const {
    const int64_t C = l.channels(), cg = C / groups_, runs = l.N * l.outer;
    const int64_t chunks = std::clamp<int64_t>((4 * threads + runs - 1) / runs, 1, std::max<int64_t>(l.S / 64, 1));
    const int64_t span = (l.S + chunks - 1) / chunks, tasks = runs * chunks;
    const bool parallel = threads > 1 && tasks > 1 && runs * l.S * l.inner >= (int64_t{1} << 15);
    // Task t: pixels [s0, s1) of run t / chunks (image n, channel block o).
    auto range = [&](int64_t t) {
      const int64_t s0 = std::min(l.S, t % chunks * span);
      return std::pair<int64_t, int64_t>{s0, std::min(l.S, s0 + span)};
    };
    std::vector<Moments> part(tasks * l.inner);
    ParallelForIf(parallel, tasks, [&](int64_t t) {
      const auto [s0, s1] = range(t);
      AddChannelMoments(x + t / chunks * l.S * l.inner, s0, s1, l.inner, &part[t * l.inner]);
    });
    std::vector<Moments> group(l.N * groups_);
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t run = t / chunks, n = run / l.outer, o = run % l.outer;
      for (int64_t i = 0; i < l.inner; ++i) group[n * groups_ + (o * l.inner + i) / cg].Merge(part[t * l.inner + i]);
    }
    // y = x * a[c] + b[c]: a = gamma / std, b = beta - mean * a.
    std::vector<float> a(l.N * C), b(l.N * C);
    for (int64_t n = 0; n < l.N; ++n)
      for (int64_t c = 0; c < C; ++c) {
        const Moments& m = group[n * groups_ + c / cg];
        const double inv = 1.0 / std::sqrt(m.m2 / std::max(m.n, 1.0) + epsilon_);
        a[n * C + c] = static_cast<float>(gamma[c] * inv);
        b[n * C + c] = static_cast<float>(beta[c] - m.mean * gamma[c] * inv);
      }
    const auto& swish = swish::Builds().best();
    ParallelForIf(parallel, tasks, [&](int64_t t) {
      const int64_t run = t / chunks, n = run / l.outer, o = run % l.outer;
      const float* pa = &a[n * C + o * l.inner];
      const float* pb = &b[n * C + o * l.inner];
      const auto [s0, s1] = range(t);
      for (int64_t blk = s0; blk < s1; blk += kPixelBlock) {  // the Swish while the block is in cache
        const int64_t begin = (run * l.S + blk) * l.inner, end = (run * l.S + std::min(s1, blk + kPixelBlock)) * l.inner;
        if (l.inner == 1) {
          for (int64_t k = begin; k < end; ++k) y[k] = x[k] * pa[0] + pb[0];
        } else {
          for (int64_t at = begin; at < end; at += l.inner)
            for (int64_t i = 0; i < l.inner; ++i) y[at + i] = x[at + i] * pa[i] + pb[i];
        }
        if (swish_) swish.run(y + begin, end - begin, 1.f);
      }
    });
  }

  const Node node_;
  int64_t groups_;
  float epsilon_;
  bool swish_;
  int block_;  // channel_block: 0 = plain, B or kChannelsLast (channel_block.h)
};

}  // namespace

void RegisterFusedGroupNormKernels(KernelRegistry& r) {
  r.Add(TandemKernel("FusedGroupNorm", {DataType::kFloat},
                     [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
                       return std::unique_ptr<Kernel>(new FusedGroupNorm(info));
                     }));
}

}  // namespace tandem::cpu
