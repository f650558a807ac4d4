// ai.tandem FusedAttention (ops/tandem_ops.cc; written by rewrites/attention_fusion.cc):
// Y = softmax(scale * Q Kt + mask) V over the last two dims of each batch matrix, the
// batch dims of Q [..., S, D], Kt [..., D, L], V [..., L, Dv] and the mask broadcast as
// MatMul and Add would. The scores never exist whole: each task takes a block of query
// rows of one batch matrix, multiplies it by Kt into a per-thread [rows, L] buffer that
// stays in cache (oneDNN's sgemm), takes exp(x - max) with the row sums there
// (microkernels/softmax_rows.h), multiplies by V into Y and divides each output row by its
// sum. A row with a NaN or whose every key is masked to -inf gives NaN, as the unfused
// graph does, or zeros with nan_rows_to_zero (the IsNaN/Where exporters put after it).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "oneapi/dnnl/dnnl.h"
#include "providers/cpu/kernel_util.h"
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

// Element offsets of each batch matrix of an operand with dims `dims` (its last two are the
// matrix) in the broadcast batch `out_batch`, one per batch matrix in row-major order.
std::vector<int64_t> BatchOffsets(const Dims& dims, const Dims& out_batch) {
  const Dims batch(dims.begin(), dims.end() - 2);
  const int64_t matrix = dims[dims.size() - 2] * dims[dims.size() - 1];
  std::vector<int64_t> offsets(static_cast<size_t>(NumElements(out_batch)));
  ForEachBroadcast(out_batch, {BroadcastStrides(batch, out_batch)},
                   [&](int64_t b, const std::vector<int64_t>& off) { offsets[static_cast<size_t>(b)] = off[0] * matrix; });
  return offsets;
}

absl::Status SgemmStatus(dnnl_status_t s) {
  return s == dnnl_success ? absl::OkStatus()
                           : absl::InternalError("oneDNN sgemm failed (status " + std::to_string(s) + ")");
}

class FusedAttention : public Kernel {
 public:
  explicit FusedAttention(const KernelInfo& info)
      : scale_(info.node.attr_float("scale", 1.f)),
        nan_rows_to_zero_(info.node.attr_int("nan_rows_to_zero", 0) != 0),
        kernels_(softmax_rows::Builds().best()) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& q = *ctx.input(0);
    const Tensor& kt = *ctx.input(1);
    const Tensor& v = *ctx.input(2);
    const Tensor* mask = ctx.num_inputs() > 3 ? ctx.input(3) : nullptr;
    for (const Tensor* t : {&q, &kt, &v, mask})
      if (t && (t->dtype() != DataType::kFloat || (t != mask && t->rank() < 2)))
        return absl::InvalidArgumentError("Q, Kt, V (rank 2 or more) and the mask must be float32; got " +
                                          std::string(DataTypeName(t->dtype())) + DimsToString(t->dims()));
    int64_t S = q.dim(-2);
    const int64_t D = q.dim(-1), L = kt.dim(-1), Dv = v.dim(-1);
    if (kt.dim(-2) != D || v.dim(-2) != L)
      return absl::InvalidArgumentError("Q " + DimsToString(q.dims()) + ", Kt " + DimsToString(kt.dims()) + " and V " +
                                        DimsToString(v.dims()) + " do not chain as Q Kt V");
    // The mask right-aligned to the scores' rank (or beyond): its batch dims broadcast with
    // the operands', its rows are 1 or S (or widen a single query row), its keys 1 or L.
    auto batch_of = [](const Dims& d) { return Dims(d.begin(), d.end() - 2); };
    Dims full;
    if (mask) {
      full.assign(mask->rank() < 2 ? 2 - mask->rank() : 0, 1);
      full.insert(full.end(), mask->dims().begin(), mask->dims().end());
      const int64_t mask_rows = full[full.size() - 2], mask_keys = full.back();
      if ((mask_rows != 1 && mask_rows != S && S != 1) || (mask_keys != 1 && mask_keys != L))
        return absl::InvalidArgumentError("mask " + DimsToString(mask->dims()) + " does not broadcast to the scores [..., " +
                                          std::to_string(S) + ", " + std::to_string(L) + "]");
    }
    auto out_batch = BroadcastShapes({batch_of(q.dims()), batch_of(kt.dims()), batch_of(v.dims()),
                                      mask ? batch_of(full) : Dims{}});
    if (!out_batch.ok()) return out_batch.status();
    Tensor widened_q;  // one query row, as many mask rows: the row repeated
    const float* Q = q.data<float>();
    Dims q_dims = q.dims();
    if (mask && S == 1 && full[full.size() - 2] != 1) {
      S = full[full.size() - 2];
      q_dims[q_dims.size() - 2] = S;
      widened_q = Tensor::Host(DataType::kFloat, q_dims);
      float* w = widened_q.data<float>();
      const int64_t q_rows = DimProduct(q_dims, 0, static_cast<int>(q_dims.size()) - 1);
      for (int64_t r = 0; r < q_rows; ++r) std::copy(Q + r / S * D, Q + (r / S + 1) * D, w + r * D);
      Q = w;
    }
    Dims y_dims = *out_batch;
    y_dims.push_back(S);
    y_dims.push_back(Dv);
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, y_dims);
    if (y.numel() == 0) return absl::OkStatus();
    if (L == 0) {  // no keys: an empty sum for every output, as MatMul gives
      std::fill(y.data<float>(), y.data<float>() + y.numel(), 0.f);
      return absl::OkStatus();
    }

    // The mask as rows of L contiguous floats: mask_ld apart within a batch matrix (0: one
    // row for all queries), at mask_offsets per batch matrix. A mask broadcast along keys is
    // expanded first.
    const float* mask_data = nullptr;
    int64_t mask_ld = 0;
    std::vector<int64_t> mask_offsets;
    Tensor expanded;
    if (mask) {
      mask_data = mask->data<float>();
      if (full.back() != L) {  // [..., 1]: one value per row, spread along the keys
        full.back() = L;
        expanded = Tensor::Host(DataType::kFloat, full);
        float* e = expanded.data<float>();
        for (int64_t r = 0; r < expanded.numel() / L; ++r) std::fill(e + r * L, e + (r + 1) * L, mask_data[r]);
        mask_data = e;
      }
      mask_ld = full[full.size() - 2] == 1 ? 0 : L;
      mask_offsets = BatchOffsets(full, *out_batch);
    }
    const std::vector<int64_t> q_off = BatchOffsets(q_dims, *out_batch), k_off = BatchOffsets(kt.dims(), *out_batch),
                               v_off = BatchOffsets(v.dims(), *out_batch);
    const int64_t batches = static_cast<int64_t>(q_off.size());
    const int64_t rows = RowsPerTask(S, L, batches, omp_get_max_threads());
    const int64_t blocks = (S + rows - 1) / rows, tasks = batches * blocks;
    const float *K = kt.data<float>(), *V = v.data<float>();
    float* Y = y.data<float>();

    // One task: a block of rows of one batch matrix, with this thread's scores buffer.
    auto run = [&](int64_t t, std::vector<float>& buf, std::vector<float>& sums) -> absl::Status {
      const int64_t b = t / blocks, r0 = (t % blocks) * rows, m = std::min(rows, S - r0);
      float* yb = Y + (b * S + r0) * Dv;
      const int64_t lda = std::max<int64_t>(D, 1);  // sgemm wants leading dims of 1 or more
      absl::Status st = SgemmStatus(
          dnnl_sgemm('N', 'N', m, L, D, 1.f, Q + q_off[b] + r0 * D, lda, K + k_off[b], L, 0.f, buf.data(), L));
      if (!st.ok()) return st;
      const float* mrow = mask_data ? mask_data + mask_offsets[b] + r0 * mask_ld : nullptr;
      kernels_.exp_rows(buf.data(), m, L, L, scale_, mrow, mask_ld, sums.data());
      for (int64_t i = 0; i < m; ++i) {  // sums[i] becomes the row's divisor's inverse
        if (sums[i] > 0.f && !std::isinf(sums[i])) {
          sums[i] = 1.f / sums[i];
          continue;
        }
        // NaN: a NaN in the row, or every key at -inf
        std::fill(buf.begin() + i * L, buf.begin() + (i + 1) * L,
                  nan_rows_to_zero_ ? 0.f : std::numeric_limits<float>::quiet_NaN());
        sums[i] = 1.f;
      }
      st = SgemmStatus(dnnl_sgemm('N', 'N', m, Dv, L, 1.f, buf.data(), L, V + v_off[b], std::max<int64_t>(Dv, 1), 0.f,
                                  yb, std::max<int64_t>(Dv, 1)));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < Dv; ++j) yb[i * Dv + j] *= sums[i];
      return st;
    };
    auto scratch = [&] { return std::vector<float>(static_cast<size_t>(rows * L)); };
    if (tasks == 1 || S * L * D * batches < (int64_t{1} << 16)) {  // small: no OpenMP region at all
      std::vector<float> buf = scratch(), sums(static_cast<size_t>(rows));
      for (int64_t t = 0; t < tasks; ++t)
        if (absl::Status st = run(t, buf, sums); !st.ok()) return st;
      return absl::OkStatus();
    }
    std::vector<absl::Status> errors(static_cast<size_t>(std::max(1, omp_get_max_threads())));
#pragma omp parallel
    {
      std::vector<float> buf = scratch(), sums(static_cast<size_t>(rows));
      absl::Status& err = errors[static_cast<size_t>(omp_get_thread_num()) % errors.size()];
#pragma omp for schedule(static)
      for (int64_t t = 0; t < tasks; ++t)
        if (err.ok()) err = run(t, buf, sums);
    }
    for (const absl::Status& e : errors)
      if (!e.ok()) return e;
    return absl::OkStatus();
  }

 private:
  float scale_;
  bool nan_rows_to_zero_;
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
