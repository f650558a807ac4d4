// The operands of ai.tandem FusedAttention(Q, Kt, V, mask) and of its gradient, checked and
// laid out for the kernels (fused_attention.cc, fused_attention_grad.cc): Q [..., S, D],
// Kt [..., D, L], V [..., L, Dv] and the mask broadcast to the scores [..., S, L] as MatMul
// and Add would; each operand's batch matrices found by offset in the broadcast batch, the
// mask as rows of L contiguous floats. A single query row widened to the mask's S rows is
// copied S times (Widened: the kernels then see S rows).
// With heads_interleaved (the layout exporters reshape Q, K and V into before the heads'
// Transposes, which the fusion absorbs) the operands are Q [B, S, H, D], K [B, L, H, D] (not
// transposed) and V [B, L, H, Dv], no batch broadcast among them; the batch is [B, H] and
// each head's matrix is read in place, its rows H heads apart.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "graph/tensor.h"
#include "providers/cpu/dnnl_util.h"

namespace tandem::cpu {

struct AttentionOperands {
  int64_t S = 0, D = 0, L = 0, Dv = 0;
  Dims batch;  // the broadcast batch dims of Y
  const float *q = nullptr, *kt = nullptr, *v = nullptr;
  std::vector<int64_t> q_off, k_off, v_off;  // element offset of each batch matrix
  // Elements between the rows of each operand's matrices: D, L and Dv, or H times their
  // rows' lengths with heads_interleaved, where kt holds K's rows (k_rows: op 'T' reads Kt).
  int64_t q_ld = 0, k_ld = 0, v_ld = 0;
  bool k_rows = false;
  bool heads_interleaved = false;
  // Row i of batch matrix b's mask is mask + mask_off[b] + i * mask_ld (mask_ld 0: one row
  // for every query); null without a mask.
  const float* mask = nullptr;
  int64_t mask_ld = 0;
  std::vector<int64_t> mask_off;
  bool widened = false;  // Q had one row, widened to the mask's S

  int64_t batches() const { return static_cast<int64_t>(q_off.size()); }
  Dims OutputDims(int64_t rows, int64_t cols) const;  // batch + [rows, cols]

  // Checks and lays out the operands (mask may be null); the result points into them (and
  // into its own copies of a widened Q or a mask expanded along the keys).
  absl::Status Prepare(const Tensor& q_in, const Tensor& kt_in, const Tensor& v_in, const Tensor* mask_in,
                       bool interleaved = false);

  // scores [m, L] (row stride L) = Q's rows [r0, r0 + m) of batch matrix b times Kt.
  absl::Status Scores(int64_t b, int64_t r0, int64_t m, float* scores) const {
    return Sgemm('N', k_rows ? 'T' : 'N', m, L, D, 1.f, q + q_off[b] + r0 * q_ld, q_ld, kt + k_off[b], k_ld, 0.f,
                 scores, L);
  }

 private:
  absl::Status PrepareInterleaved(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, const Tensor* mask_in);
  // The mask's dims right-aligned to the scores' rank (empty without one), checked against S and L.
  absl::Status MaskDims(const Tensor* mask_in, Dims* full) const;
  void SetMask(const Tensor* mask_in, Dims full);  // mask, mask_ld and mask_off over `batch`

  Tensor widened_q_, expanded_mask_;
};

// Whether a score row's sum of exponentials (microkernels/softmax_rows.h) can divide it: not
// NaN (a NaN in the row), not 0 (every key at -inf), not infinite. A row whose sum cannot
// holds NaN, as ONNX Softmax gives, or 0 with nan_rows_to_zero (RowFill).
inline bool DividingRowSum(float sum) { return sum > 0.f && !std::isinf(sum); }
inline float RowFill(bool nan_rows_to_zero) {
  return nan_rows_to_zero ? 0.f : std::numeric_limits<float>::quiet_NaN();
}

// Runs task(t, scratch) for each t in [0, tasks): in an OpenMP team when `parallel` (each
// thread with its own scratch, made by make_scratch()), else in order on one scratch. A
// failed task stops its thread's later tasks; the first error (in thread order) is returned.
template <typename MakeScratch, typename Task>
absl::Status RunAttentionTasks(int64_t tasks, bool parallel, MakeScratch make_scratch, Task task) {
  if (!parallel) {
    auto scratch = make_scratch();
    for (int64_t t = 0; t < tasks; ++t)
      if (absl::Status st = task(t, scratch); !st.ok()) return st;
    return absl::OkStatus();
  }
  std::vector<absl::Status> errors(static_cast<size_t>(std::max(1, omp_get_max_threads())));
#pragma omp parallel
  {
    auto scratch = make_scratch();
    absl::Status& err = errors[static_cast<size_t>(omp_get_thread_num()) % errors.size()];
#pragma omp for schedule(static)
    for (int64_t t = 0; t < tasks; ++t)
      if (err.ok()) err = task(t, scratch);
  }
  for (const absl::Status& e : errors)
    if (!e.ok()) return e;
  return absl::OkStatus();
}

}  // namespace tandem::cpu
