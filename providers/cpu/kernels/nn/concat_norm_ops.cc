// ConcatBatchNorm (ai.tandem, providers/cpu/rewrites/concat_norm.h): a Concat of channel-blocked
// float32 pieces read only by an inference BatchNormalization [+ Relu], in one pass.
// Inputs: scale, B, mean, var ([C] each), then the pieces in Concat's order, stored with
// attribute channel_block = B (kChannelsLast or 8 / 16: [N, C_i/B, spatial..., B],
// providers/cpu/channel_block.h). Output: the normalized concatenation, stored the same
// way. Attributes epsilon and activation ("Relu" or none) as BatchNormalization's.
// Each element is read once and written once; the concatenation itself is never stored.
#include <algorithm>

#include "providers/cpu/channel_block.h"
#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/nn/scale_shift.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

class ConcatBatchNorm : public Kernel {
 public:
  explicit ConcatBatchNorm(const KernelInfo& info)
      : epsilon_(info.node.attr_float("epsilon", 1e-5f)),
        block_(static_cast<int>(info.node.attr_int("channel_block", 0))),
        relu_(info.node.attr_string("activation", "") == "Relu") {}

  absl::Status Compute(KernelContext& ctx) override {
    if (block_ != kChannelsLast && block_ != 8 && block_ != 16)
      return absl::InvalidArgumentError("ConcatBatchNorm needs channel_block -1 (channels-last), 8 or 16, got " +
                                        std::to_string(block_));
    if (ctx.num_inputs() < 5) return absl::InvalidArgumentError("ConcatBatchNorm needs 4 parameters and a piece");
    // Every piece's logical [N, C_i, spatial...] view: the same N and spatial dims.
    std::vector<Tensor> pieces;
    Dims out;
    for (int i = 4; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      if (!t || t->dtype() != DataType::kFloat)
        return absl::InvalidArgumentError("piece " + std::to_string(i - 4) + " is not float32");
      auto view = LogicalView(*t, block_, 3);
      if (!view.ok()) return view.status();
      if (out.empty()) {
        out = view->dims();
        out[1] = 0;
      }
      Dims d = view->dims();
      d[1] = 0;
      if (d != out)
        return absl::InvalidArgumentError("pieces of shapes " + DimsToString(pieces.front().dims()) + " and " +
                                          DimsToString(view->dims()) + " cannot be concatenated on the channels");
      pieces.push_back(*std::move(view));
    }
    int64_t C = 0;
    for (const Tensor& piece : pieces) C += piece.dim(1);
    out[1] = C;
    static const char* names[4] = {"scale", "B", "mean", "var"};
    for (int i = 0; i < 4; ++i) {
      const Tensor* p = ctx.input(i);
      if (!p || p->dtype() != DataType::kFloat || p->numel() != C)
        return absl::InvalidArgumentError(std::string(names[i]) + " must be float32 with " + std::to_string(C) +
                                          " values (one per channel)");
    }
    std::vector<float> a, b;
    InferenceScaleShift(ctx.input(0)->data<float>(), ctx.input(1)->data<float>(), ctx.input(2)->data<float>(),
                        ctx.input(3)->data<float>(), epsilon_, C, a, b);
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, BlockedDims(out, block_));
    if (y.numel() == 0) return absl::OkStatus();
    const int64_t N = out[0], S = DimProduct(out, 2, out.size());
    if (block_ == kChannelsLast) {
      ChannelsLast(pieces, a, b, y.data<float>(), N * S, C);
    } else {
      Blocks(pieces, a, b, y.data<float>(), N, S, C);
    }
    return absl::OkStatus();
  }

 private:
  // Pixels [N*S] of C channels: each piece's C_i channels of a pixel land at its offset.
  void ChannelsLast(const std::vector<Tensor>& pieces, const std::vector<float>& a, const std::vector<float>& b,
                    float* y, int64_t pixels, int64_t C) const {
    constexpr int64_t kRows = 64;  // pixels per task
    const int64_t tasks = (pixels + kRows - 1) / kRows;
    ParallelForIf(pixels * C >= (1 << 14), tasks, [&](int64_t task) {
      const int64_t p0 = task * kRows, rows = std::min(kRows, pixels - p0);
      int64_t offset = 0;
      for (const Tensor& piece : pieces) {
        const int64_t w = piece.dim(1);
        const float* x = piece.data<float>() + p0 * w;
        float* yo = y + p0 * C + offset;
        ScaleShiftStridedRows(x, w, yo, C, rows, w, a.data() + offset, b.data() + offset, relu_);
        offset += w;
      }
    });
  }

  // Blocks of B channels: image n's output blocks are its pieces' blocks in order.
  void Blocks(const std::vector<Tensor>& pieces, const std::vector<float>& a, const std::vector<float>& b, float* y,
              int64_t N, int64_t S, int64_t C) const {
    const int64_t B = block_, CB = C / B;
    std::vector<const float*> source(CB);  // image 0's block ob in its piece
    std::vector<int64_t> piece_blocks(CB);   // that piece's blocks per image
    int64_t ob = 0;
    for (const Tensor& piece : pieces)
      for (int64_t j = 0; j < piece.dim(1) / B; ++j, ++ob) {
        source[ob] = piece.data<float>() + j * S * B;
        piece_blocks[ob] = piece.dim(1) / B;
      }
    const int64_t rows = std::max<int64_t>(1, 4096 / B), parts = (S + rows - 1) / rows;
    ParallelForIf(N * C * S >= (1 << 14), N * CB * parts, [&](int64_t task) {
      const int64_t n = task / (CB * parts), blk = task / parts % CB, r0 = task % parts * rows;
      const int64_t nr = std::min(rows, S - r0);
      const float* x = source[blk] + (n * piece_blocks[blk] * S + r0) * B;
      float* yo = y + ((n * CB + blk) * S + r0) * B;
      ScaleShiftBlockRows(x, yo, nr, B, a.data() + blk * B, b.data() + blk * B, relu_);
    });
  }

  float epsilon_;
  int block_;
  bool relu_;
};

}  // namespace

void RegisterConcatNormKernels(KernelRegistry& r) {
  r.Add(TandemKernel("ConcatBatchNorm", {DataType::kFloat}, Make<ConcatBatchNorm>()));
}

}  // namespace tandem::cpu
