// ai.tandem FusedAttention (ops/tandem_ops.cc; written by ops/attention_subgraph.h):
// Y = softmax(scale * Q Kt + mask) V over the last two dims of each batch matrix, the
// batch dims of Q [..., S, D], Kt [..., D, L], V [..., L, Dv] and the mask broadcast as
// MatMul and Add would. The scores never exist whole: each task takes a block of query
// rows of one batch matrix, multiplies it by Kt into a per-thread [rows, L] buffer that
// stays in cache (oneDNN's sgemm), takes exp(x - max) with the row sums there
// (microkernels/softmax_rows.h), multiplies by V into Y and divides each output row by its
// sum. A row with a NaN or whose every key is masked to -inf gives NaN, as the unfused
// graph does, or zeros with nan_rows_to_zero (the IsNaN/Where exporters put after it).
// With heads_interleaved, Q [B, S, H, D], K [B, L, H, D] and V [B, L, H, Dv] are read in
// place (attention_operands.h); Y is [B, H, S, Dv] either way.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/nn/attention_operands.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/microkernels/softmax_rows.h"

namespace tandem::cpu {
namespace {

// Query rows per task: the scores block (rows x L floats) within ~512 KiB, 8 to 512 rows
// (sgemm packs Kt and V once per call: the larger the block, the less that costs), in as
// many blocks as give each of `threads` two tasks (blocks of 16 rows at least), the S rows
// split evenly (197 = 4 x 50, not 3 x 64 + 5).
int64_t RowsPerTask(int64_t S, int64_t L, int64_t batches, int64_t threads) {
  const int64_t most = std::clamp<int64_t>((int64_t{1} << 17) / std::max<int64_t>(L, 1), 8, 512);
  const int64_t for_threads = std::min((S + 15) / 16, (2 * threads + batches - 1) / std::max<int64_t>(batches, 1));
  const int64_t blocks = std::max({(S + most - 1) / most, for_threads, int64_t{1}});
  return std::max<int64_t>(1, (S + blocks - 1) / blocks);
}

class FusedAttention : public Kernel {
 public:
  explicit FusedAttention(const KernelInfo& info)
      : scale_(info.node.attr_float("scale", 1.f)),
        nan_rows_to_zero_(info.node.attr_int("nan_rows_to_zero", 0) != 0),
        heads_interleaved_(info.node.attr_int("heads_interleaved", 0) != 0),
        kernels_(softmax_rows::Builds().best()) {}

  absl::Status Compute(KernelContext& ctx) override {
    AttentionOperands a;
    if (absl::Status st = a.Prepare(*ctx.input(0), *ctx.input(1), *ctx.input(2),
                                    ctx.num_inputs() > 3 ? ctx.input(3) : nullptr, heads_interleaved_);
        !st.ok())
      return st;
    const int64_t S = a.S, D = a.D, L = a.L, Dv = a.Dv;
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, a.OutputDims(S, Dv));
    if (y.numel() == 0) return absl::OkStatus();
    if (L == 0) {  // no keys: an empty sum for every output, as MatMul gives
      std::fill(y.data<float>(), y.data<float>() + y.numel(), 0.f);
      return absl::OkStatus();
    }
    const int64_t batches = a.batches();
    const int64_t rows = RowsPerTask(S, L, batches, omp_get_max_threads());
    const int64_t blocks = (S + rows - 1) / rows, tasks = batches * blocks;
    float* Y = y.data<float>();

    // One task: a block of rows of one batch matrix, with this thread's scores buffer.
    auto run = [&](int64_t t, std::vector<float>& buf, std::vector<float>& sums) -> absl::Status {
      const int64_t b = t / blocks, r0 = (t % blocks) * rows, m = std::min(rows, S - r0);
      float* yb = Y + (b * S + r0) * Dv;
      absl::Status st = a.Scores(b, r0, m, buf.data());
      if (!st.ok()) return st;
      const float* mrow = a.mask ? a.mask + a.mask_off[b] + r0 * a.mask_ld : nullptr;
      kernels_.exp_rows(buf.data(), m, L, L, scale_, mrow, a.mask_ld, sums.data());
      for (int64_t i = 0; i < m; ++i) {  // sums[i] becomes the row's divisor's inverse
        if (DividingRowSum(sums[i])) {
          sums[i] = 1.f / sums[i];
          continue;
        }
        // NaN: a NaN in the row, or every key at -inf
        std::fill(buf.begin() + i * L, buf.begin() + (i + 1) * L, RowFill(nan_rows_to_zero_));
        sums[i] = 1.f;
      }
      st = Sgemm('N', 'N', m, Dv, L, 1.f, buf.data(), L, a.v + a.v_off[b], a.v_ld, 0.f, yb, Dv);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < Dv; ++j) yb[i * Dv + j] *= sums[i];
      return st;
    };
    struct Scratch {
      std::vector<float> buf, sums;
    };
    // Small: no OpenMP region at all.
    return RunAttentionTasks(
        tasks, tasks > 1 && S * L * D * batches >= (int64_t{1} << 16),
        [&] { return Scratch{std::vector<float>(static_cast<size_t>(rows * L)), std::vector<float>(static_cast<size_t>(rows))}; },
        [&](int64_t t, Scratch& s) { return run(t, s.buf, s.sums); });
  }

 private:
  float scale_;
  bool nan_rows_to_zero_, heads_interleaved_;
  const softmax_rows::Kernels& kernels_;
};

}  // namespace

void RegisterFusedAttentionKernels(KernelRegistry& r) {
  r.Add(TandemKernel("FusedAttention", {DataType::kFloat},
                     [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
                       return std::unique_ptr<Kernel>(new FusedAttention(info));
                     }));
}

}  // namespace tandem::cpu
