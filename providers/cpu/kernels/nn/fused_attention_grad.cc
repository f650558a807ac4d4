// ai.tandem FusedAttentionGrad(dY, Q, Kt, V, mask?) -> dQ, dKt, dV[, dScores]
// (training/rules/attention.cc): the gradients of FusedAttention's
//   Y = P V,  P = softmax(scale * Q Kt + mask)
// with the same attributes (scale, nan_rows_to_zero) and operands (kernels/nn/
// attention_operands.h). Each output has Y's broadcast batch dims (the rule sums a
// broadcast operand's gradient down to its shape): dQ [..., S, D], dKt [..., D, L], dV
// [..., L, Dv], and dScores [..., S, L], the gradient of scale * Q Kt + mask (the mask's, before
// the sum to its shape). P is recomputed, never stored: one task per batch matrix takes its
// query rows a block at a time, in cache, with oneDNN's sgemm and the forward's row pass
// (microkernels/softmax_rows.h):
//   P = exp(scale * Q Kt + mask - max) / sum      dV  += P^T dY
//   dP = dY V^T                                   dS   = P * (dP - rowsum(dP * P))
//   dQ = scale * dS Kt^T                          dKt += scale * Q^T dS
// A row that the forward made NaN (a NaN, or every key at -inf) gives NaN gradients, or
// none (zeros) with nan_rows_to_zero, as the forward gives zeros there.
// With heads_interleaved (attention_operands.h) dQ, dK and dV have the shapes and layout of
// Q [B, S, H, D], K [B, L, H, D] and V [B, L, H, Dv] (dK = scale * dS^T Q, K's rows), dY
// and dScores stay [B, H, S, *]; a widened single query row is not supported there.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/nn/attention_operands.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/microkernels/softmax_rows.h"

namespace tandem::cpu {
namespace {

class FusedAttentionGrad : public Kernel {
 public:
  explicit FusedAttentionGrad(const KernelInfo& info)
      : scale_(info.node.attr_float("scale", 1.f)),
        nan_rows_to_zero_(info.node.attr_int("nan_rows_to_zero", 0) != 0),
        heads_interleaved_(info.node.attr_int("heads_interleaved", 0) != 0),
        kernels_(softmax_rows::Builds().best()) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& dy = *ctx.input(0);
    AttentionOperands a;
    if (absl::Status st = a.Prepare(*ctx.input(1), *ctx.input(2), *ctx.input(3),
                                    ctx.num_inputs() > 4 ? ctx.input(4) : nullptr, heads_interleaved_);
        !st.ok())
      return st;
    const int64_t S = a.S, D = a.D, L = a.L, Dv = a.Dv;
    if (dy.dtype() != DataType::kFloat || dy.dims() != a.OutputDims(S, Dv))
      return absl::InvalidArgumentError("dY " + DimsToString(dy.dims()) + " is not the float32 Y " +
                                        DimsToString(a.OutputDims(S, Dv)) + " of these operands");
    const bool il = a.heads_interleaved;
    if (il && a.widened)
      return absl::UnimplementedError("the gradient of heads_interleaved attention with one query row widened to "
                                      "the mask's " + std::to_string(S) + " rows");
    // Interleaved: each gradient in its operand's place; else contiguous with Y's batch.
    Tensor& dq = ctx.AllocateOutput(0, DataType::kFloat, il ? ctx.input(1)->dims() : a.OutputDims(S, D));
    Tensor& dkt = ctx.AllocateOutput(1, DataType::kFloat, il ? ctx.input(2)->dims() : a.OutputDims(D, L));
    Tensor& dv = ctx.AllocateOutput(2, DataType::kFloat, il ? ctx.input(3)->dims() : a.OutputDims(L, Dv));
    const int64_t dq_ld = il ? a.q_ld : D, dv_ld = il ? a.v_ld : Dv;
    Tensor* dscores = ctx.num_outputs() > 3 ? &ctx.AllocateOutput(3, DataType::kFloat, a.OutputDims(S, L)) : nullptr;
    for (Tensor* t : {&dq, &dkt, &dv, dscores})  // what no row writes (S, L or Dv of 0) is 0
      if (t) std::fill(t->data<float>(), t->data<float>() + t->numel(), 0.f);
    if (S == 0 || L == 0) return absl::OkStatus();

    const int64_t batches = a.batches();
    // Query rows per block: the two [rows, L] buffers within ~512 KiB.
    const int64_t rows = std::clamp<int64_t>((int64_t{1} << 16) / L, 8, std::max<int64_t>(S, 8));
    const float* dY = dy.data<float>();
    float *dQ = dq.data<float>(), *dKt = dkt.data<float>(), *dV = dv.data<float>();
    float* dScores = dscores ? dscores->data<float>() : nullptr;

    auto run = [&](int64_t b, std::vector<float>& p, std::vector<float>& dp, std::vector<float>& sums) -> absl::Status {
      const float *q = a.q + a.q_off[b], *kt = a.kt + a.k_off[b], *v = a.v + a.v_off[b];
      float *dq_b = dQ + (il ? a.q_off[b] : b * S * D), *dkt_b = dKt + (il ? a.k_off[b] : b * D * L),
            *dv_b = dV + (il ? a.v_off[b] : b * L * Dv);
      for (int64_t r0 = 0; r0 < S; r0 += rows) {
        const int64_t m = std::min(rows, S - r0);
        const float* dy_blk = dY + (b * S + r0) * Dv;
        const float beta = r0 == 0 ? 0.f : 1.f;  // dV and dKt: the first block writes, the rest add
        absl::Status st = a.Scores(b, r0, m, p.data());
        if (!st.ok()) return st;
        const float* mrow = a.mask ? a.mask + a.mask_off[b] + r0 * a.mask_ld : nullptr;
        kernels_.exp_rows(p.data(), m, L, L, scale_, mrow, a.mask_ld, sums.data());
        for (int64_t i = 0; i < m; ++i) {
          float* row = p.data() + i * L;
          const bool divides = DividingRowSum(sums[i]);
          const float fill = RowFill(nan_rows_to_zero_), inv = 1.f / sums[i];
          for (int64_t j = 0; j < L; ++j) row[j] = divides ? row[j] * inv : fill;
        }
        if (Dv > 0) {
          st = Sgemm('T', 'N', L, Dv, m, 1.f, p.data(), L, dy_blk, Dv, beta, dv_b, dv_ld);
          if (st.ok()) st = Sgemm('N', 'T', m, L, Dv, 1.f, dy_blk, Dv, v, a.v_ld, 0.f, dp.data(), L);
          if (!st.ok()) return st;
        } else {
          std::fill(dp.begin(), dp.begin() + m * L, 0.f);
        }
        for (int64_t i = 0; i < m; ++i) {  // dS = P * (dP - rowsum(dP * P)), in dp
          const float* pr = p.data() + i * L;
          float* dr = dp.data() + i * L;
          float part[8] = {};  // eight running sums: a vectorisable dot product
          int64_t j = 0;
          for (; j + 8 <= L; j += 8)
            for (int k = 0; k < 8; ++k) part[k] += pr[j + k] * dr[j + k];
          float dot = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
          for (; j < L; ++j) dot += pr[j] * dr[j];
          for (int64_t j = 0; j < L; ++j) dr[j] = pr[j] * (dr[j] - dot);
        }
        if (dScores) std::copy(dp.begin(), dp.begin() + m * L, dScores + (b * S + r0) * L);
        if (D > 0) {
          // dQ = scale dS Kt^T (Kt^T: K's rows as stored, or Kt read transposed).
          st = Sgemm('N', a.k_rows ? 'N' : 'T', m, D, L, scale_, dp.data(), L, kt, a.k_ld, 0.f, dq_b + r0 * dq_ld,
                     dq_ld);
          // dKt += scale Q^T dS, or K's rows: dK += scale dS^T Q.
          if (st.ok())
            st = a.k_rows ? Sgemm('T', 'N', L, D, m, scale_, dp.data(), L, q + r0 * a.q_ld, a.q_ld, beta, dkt_b, a.k_ld)
                          : Sgemm('T', 'N', D, L, m, scale_, q + r0 * a.q_ld, a.q_ld, dp.data(), L, beta, dkt_b, L);
          if (!st.ok()) return st;
        }
      }
      return absl::OkStatus();
    };
    struct Scratch {
      std::vector<float> p, dp, sums;
    };
    return RunAttentionTasks(
        batches, batches > 1 && S * L * (D + Dv) * batches >= (int64_t{1} << 16),
        [&] {
          return Scratch{std::vector<float>(static_cast<size_t>(rows * L)),
                         std::vector<float>(static_cast<size_t>(rows * L)), std::vector<float>(static_cast<size_t>(rows))};
        },
        [&](int64_t b, Scratch& s) { return run(b, s.p, s.dp, s.sums); });
  }

 private:
  float scale_;
  bool nan_rows_to_zero_, heads_interleaved_;
  const softmax_rows::Kernels& kernels_;
};

}  // namespace

void RegisterFusedAttentionGradKernels(KernelRegistry& r) {
  r.Add(TandemKernel("FusedAttentionGrad", {DataType::kFloat},
                     [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
                       return std::unique_ptr<Kernel>(new FusedAttentionGrad(info));
                     }));
}

}  // namespace tandem::cpu
