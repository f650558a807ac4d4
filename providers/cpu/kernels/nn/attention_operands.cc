#include "providers/cpu/kernels/nn/attention_operands.h"

#include <algorithm>
#include <string>

#include "providers/cpu/kernel_util.h"

namespace tandem::cpu {
namespace {

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

Dims BatchOf(const Dims& d) { return Dims(d.begin(), d.end() - 2); }

}  // namespace

Dims AttentionOperands::OutputDims(int64_t rows, int64_t cols) const {
  Dims d = batch;
  d.push_back(rows);
  d.push_back(cols);
  return d;
}

absl::Status AttentionOperands::Prepare(const Tensor& q_in, const Tensor& kt_in, const Tensor& v_in,
                                        const Tensor* mask_in, bool interleaved) {
  for (const Tensor* t : {&q_in, &kt_in, &v_in, mask_in})
    if (t && (t->dtype() != DataType::kFloat || (t != mask_in && t->rank() < 2)))
      return absl::InvalidArgumentError("Q, Kt, V (rank 2 or more) and the mask must be float32; got " +
                                        std::string(DataTypeName(t->dtype())) + DimsToString(t->dims()));
  heads_interleaved = interleaved;
  if (interleaved) return PrepareInterleaved(q_in, kt_in, v_in, mask_in);
  S = q_in.dim(-2);
  D = q_in.dim(-1);
  L = kt_in.dim(-1);
  Dv = v_in.dim(-1);
  if (kt_in.dim(-2) != D || v_in.dim(-2) != L)
    return absl::InvalidArgumentError("Q " + DimsToString(q_in.dims()) + ", Kt " + DimsToString(kt_in.dims()) +
                                      " and V " + DimsToString(v_in.dims()) + " do not chain as Q Kt V");
  q_ld = D;
  k_ld = L;
  v_ld = Dv;
  k_rows = false;
  Dims full;
  if (absl::Status st = MaskDims(mask_in, &full); !st.ok()) return st;
  auto out_batch = BroadcastShapes({BatchOf(q_in.dims()), BatchOf(kt_in.dims()), BatchOf(v_in.dims()),
                                    mask_in ? BatchOf(full) : Dims{}});
  if (!out_batch.ok()) return out_batch.status();
  batch = *out_batch;
  q = q_in.data<float>();
  Dims q_dims = q_in.dims();
  widened = mask_in && S == 1 && full[full.size() - 2] != 1;
  if (widened) {  // one query row, as many mask rows: the row repeated
    S = full[full.size() - 2];
    q_dims[q_dims.size() - 2] = S;
    widened_q_ = Tensor::Host(DataType::kFloat, q_dims);
    float* w = widened_q_.data<float>();
    const int64_t q_rows = DimProduct(q_dims, 0, static_cast<int>(q_dims.size()) - 1);
    for (int64_t r = 0; r < q_rows; ++r) std::copy(q + r / S * D, q + (r / S + 1) * D, w + r * D);
    q = w;
  }
  kt = kt_in.data<float>();
  v = v_in.data<float>();
  q_off = BatchOffsets(q_dims, batch);
  k_off = BatchOffsets(kt_in.dims(), batch);
  v_off = BatchOffsets(v_in.dims(), batch);
  SetMask(mask_in, std::move(full));
  return absl::OkStatus();
}

absl::Status AttentionOperands::PrepareInterleaved(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                                                   const Tensor* mask_in) {
  const Dims &qd = q_in.dims(), &kd = k_in.dims(), &vd = v_in.dims();
  if (qd.size() != 4 || kd.size() != 4 || vd.size() != 4 || kd[0] != qd[0] || vd[0] != qd[0] || kd[2] != qd[2] ||
      vd[2] != qd[2] || kd[3] != qd[3] || vd[1] != kd[1])
    return absl::InvalidArgumentError("Q " + DimsToString(qd) + ", K " + DimsToString(kd) + " and V " +
                                      DimsToString(vd) +
                                      " are not heads_interleaved Q [B, S, H, D], K [B, L, H, D], V [B, L, H, Dv]");
  const int64_t B = qd[0], H = qd[2];
  S = qd[1];
  D = qd[3];
  L = kd[1];
  Dv = vd[3];
  Dims full;
  if (absl::Status st = MaskDims(mask_in, &full); !st.ok()) return st;
  batch = {B, H};
  if (mask_in) {
    auto with_mask = BroadcastShapes({batch, BatchOf(full)});
    if (!with_mask.ok() || *with_mask != batch)
      return absl::InvalidArgumentError("mask " + DimsToString(mask_in->dims()) + " does not broadcast to the scores " +
                                        DimsToString({B, H, S, L}));
  }
  q = q_in.data<float>();
  kt = k_in.data<float>();
  v = v_in.data<float>();
  q_ld = H * D;
  k_ld = H * D;
  v_ld = H * Dv;
  k_rows = true;
  q_off.clear();
  k_off.clear();
  v_off.clear();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      q_off.push_back((b * S * H + h) * D);
      k_off.push_back((b * L * H + h) * D);
      v_off.push_back((b * L * H + h) * Dv);
    }
  widened = mask_in && S == 1 && full[full.size() - 2] != 1;
  if (widened) {  // one query row, as many mask rows: each head's row repeated, [B, H, S, D]
    S = full[full.size() - 2];
    widened_q_ = Tensor::Host(DataType::kFloat, {B, H, S, D});
    float* w = widened_q_.data<float>();
    for (int64_t bh = 0; bh < B * H; ++bh) {
      for (int64_t r = 0; r < S; ++r) std::copy(q + q_off[bh], q + q_off[bh] + D, w + (bh * S + r) * D);
      q_off[bh] = bh * S * D;
    }
    q = w;
    q_ld = D;
  }
  SetMask(mask_in, std::move(full));
  return absl::OkStatus();
}

absl::Status AttentionOperands::MaskDims(const Tensor* mask_in, Dims* full) const {
  // The mask right-aligned to the scores' rank (or beyond): its batch dims broadcast with
  // the operands', its rows are 1 or S (or widen a single query row), its keys 1 or L.
  full->clear();
  if (!mask_in) return absl::OkStatus();
  full->assign(mask_in->rank() < 2 ? 2 - mask_in->rank() : 0, 1);
  full->insert(full->end(), mask_in->dims().begin(), mask_in->dims().end());
  const int64_t mask_rows = (*full)[full->size() - 2], mask_keys = full->back();
  if ((mask_rows != 1 && mask_rows != S && S != 1) || (mask_keys != 1 && mask_keys != L))
    return absl::InvalidArgumentError("mask " + DimsToString(mask_in->dims()) + " does not broadcast to the scores [..., " +
                                      std::to_string(S) + ", " + std::to_string(L) + "]");
  return absl::OkStatus();
}

void AttentionOperands::SetMask(const Tensor* mask_in, Dims full) {
  mask = nullptr;
  mask_ld = 0;
  mask_off.clear();
  if (!mask_in) return;
  mask = mask_in->data<float>();
  if (full.back() != L) {  // [..., 1]: one value per row, spread along the keys
    full.back() = L;
    expanded_mask_ = Tensor::Host(DataType::kFloat, full);
    float* e = expanded_mask_.data<float>();
    for (int64_t r = 0; r < expanded_mask_.numel() / std::max<int64_t>(L, 1); ++r)
      std::fill(e + r * L, e + (r + 1) * L, mask[r]);
    mask = e;
  }
  mask_ld = full[full.size() - 2] == 1 ? 0 : L;
  mask_off = BatchOffsets(full, batch);
}

}  // namespace tandem::cpu
