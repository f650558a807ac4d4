// Attention (opsets 23-25) and ai.onnx.preview FlexAttention (below): scaled dot-product attention over Q [B, Hq, Sq, D] (or
// [B, Sq, Hq*D] with q_num_heads), K/V [B, Hkv, Skv, D/Dv] with an optional KV cache
// (past_key/past_value, appended along the sequence), grouped-query heads (Hq a multiple
// of Hkv), an additive or boolean mask, causal and sliding-window masking aligned to the
// bottom right (offset = cached length, or nonpad_kv_seqlen - Sq), softcap and the
// optional qk_matmul_output. A row whose every key is masked yields zeros.
//
// Computation follows onnx's reference: Q and K are each scaled by sqrt(scale) and
// rounded to the element type; scores, softmax and Y are computed in float (double for
// double) and rounded to the element type between stages, as the reference's float16 and
// bfloat16 arithmetic does. Reference loops, parallel over (batch, head).
#include <cmath>
#include <limits>
#include <vector>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/elementwise.h"
#include "providers/cpu/kernels/head_view.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Rounds a computed value through element type T (identity for float and double).
template <typename T, typename C>
C Round(C v) {
  if constexpr (kIsHalf<T>) return static_cast<C>(static_cast<float>(T(static_cast<float>(v))));
  else return v;
}

// sqrt of the `scale` attribute (default 1 / sqrt(head size)), rounded to T: each of Q and
// K is multiplied by it, as onnx's reference does.
template <typename T, typename C>
C SqrtScale(bool has_scale, float scale, int64_t head_size) {
  return Round<T>(static_cast<C>(
      std::sqrt(has_scale ? static_cast<double>(scale) : 1.0 / std::sqrt(static_cast<double>(head_size)))));
}

// scores [Sq, L] = (Q_h * s)(K_h * s)^T for query head h of batch b, with the scaled
// operands and the result rounded to T (s = sqrt(scale), already in T). K_h is [L, D].
template <typename T, typename C>
void HeadScores(const T* q, const HeadView& qv, int64_t b, int64_t h, const T* kh, int64_t L, C sqrt_scale,
                C* scores) {
  const int64_t Sq = qv.seq, D = qv.dim;
  // K transposed to [D, L] so each score row accumulates contiguous axpys.
  std::vector<C> kt(static_cast<size_t>(D * L));
  for (int64_t j = 0; j < L; ++j)
    for (int64_t d = 0; d < D; ++d) kt[d * L + j] = Round<T>(static_cast<C>(kh[j * D + d]) * sqrt_scale);
  for (int64_t i = 0; i < Sq; ++i) {
    C* sc = scores + i * L;
    std::fill(sc, sc + L, C(0));
    const T* qr = q + qv.at(b, h, i);
    for (int64_t d = 0; d < D; ++d) {
      const C qd = Round<T>(static_cast<C>(qr[d]) * sqrt_scale);
      const C* kd = &kt[d * L];
      for (int64_t j = 0; j < L; ++j) sc[j] += qd * kd[j];
    }
    for (int64_t j = 0; j < L; ++j) sc[j] = Round<T>(sc[j]);
  }
}

class Attention : public Kernel {
 public:
  explicit Attention(const KernelInfo& info)
      : opset_(info.opset),
        is_causal_(info.node.attr_int("is_causal", 0) != 0),
        q_heads_(info.node.attr_int("q_num_heads", 0)),
        kv_heads_(info.node.attr_int("kv_num_heads", 0)),
        qk_mode_(info.node.attr_int("qk_matmul_output_mode", 0)),
        has_scale_(info.node.has_attr("scale")),
        scale_(info.node.attr_float("scale", 1.f)),
        softcap_(info.node.attr_float("softcap", 0.f)),
        softmax_precision_(info.node.attr_int("softmax_precision", 0)),
        left_window_(info.node.attr_int("left_window_size", -1)),
        right_window_(info.node.attr_int("right_window_size", -1)) {}

  absl::Status Compute(KernelContext& ctx) override {
    return VisitFloatLike(ctx.input(0)->dtype(), "Q", [&](auto tag) { return Run<decltype(tag)>(ctx); });
  }

 private:
  template <typename T>
  absl::Status Run(KernelContext& ctx) {
    using C = ComputeT<T>;
    const Tensor& q_t = *ctx.input(0);
    const Tensor& k_t = *ctx.input(1);
    const Tensor& v_t = *ctx.input(2);
    const Tensor* mask = ctx.input(3);
    const Tensor* past_k = ctx.input(4);
    const Tensor* past_v = ctx.input(5);
    const Tensor* nonpad = ctx.input(6);
    if (q_t.rank() != k_t.rank() || q_t.rank() != v_t.rank())
      return absl::InvalidArgumentError("Q, K and V must have the same rank, got " +
                                        DimsToString(q_t.dims()) + ", " +
                                        DimsToString(k_t.dims()) + ", " + DimsToString(v_t.dims()));
    if (k_t.dtype() != q_t.dtype() || v_t.dtype() != q_t.dtype())
      return absl::InvalidArgumentError("Q, K and V must have the same element type");
    if (q_t.rank() == 4 && opset_ >= 25 && (q_heads_ > 0 || kv_heads_ > 0))
      return absl::InvalidArgumentError(
          "q_num_heads and kv_num_heads must not be set for 4-D inputs (opset 25)");
    if ((past_k == nullptr) != (past_v == nullptr))
      return absl::InvalidArgumentError("past_key and past_value must be given together");
    if (nonpad && past_k)
      return absl::InvalidArgumentError("nonpad_kv_seqlen cannot be combined with past_key");
    auto qv = ViewHeads(q_t, "Q", q_heads_, "q_num_heads");
    if (!qv.ok()) return qv.status();
    auto kv = ViewHeads(k_t, "K", kv_heads_, "kv_num_heads");
    if (!kv.ok()) return kv.status();
    auto vv = ViewHeads(v_t, "V", kv_heads_, "kv_num_heads");
    if (!vv.ok()) return vv.status();
    const int64_t B = qv->batch, Hq = qv->heads, Sq = qv->seq, D = qv->dim;
    const int64_t Hkv = kv->heads, Dv = vv->dim;
    if (kv->batch != B || vv->batch != B || vv->heads != Hkv || vv->seq != kv->seq || kv->dim != D)
      return absl::InvalidArgumentError("K " + DimsToString(k_t.dims()) + " and V " +
                                        DimsToString(v_t.dims()) + " do not fit Q " +
                                        DimsToString(q_t.dims()));
    if (Hkv <= 0 || Hq % Hkv != 0)
      return absl::InvalidArgumentError("Q's " + std::to_string(Hq) +
                                        " heads are not a multiple of K/V's " + std::to_string(Hkv));
    const int64_t P = past_k ? past_k->dim(2) : 0;
    if (past_k && (past_k->rank() != 4 || past_k->dims() != Dims{B, Hkv, P, D} ||
                   past_v->rank() != 4 || past_v->dims() != Dims{B, Hkv, P, Dv}))
      return absl::InvalidArgumentError("past_key " + DimsToString(past_k->dims()) + " / past_value " +
                                        DimsToString(past_v->dims()) + " must be [" +
                                        std::to_string(B) + ", " + std::to_string(Hkv) +
                                        ", past, head size]");
    const int64_t L = P + kv->seq;  // total keys

    // present_key / present_value: the cache with this step's K/V appended, [B, Hkv, L, D].
    Tensor pk = AllocateTensorLike(ctx, 1, q_t.dtype(), {B, Hkv, L, D});
    Tensor pv = AllocateTensorLike(ctx, 2, q_t.dtype(), {B, Hkv, L, Dv});
    AppendCache<T>(past_k, k_t, *kv, pk);
    AppendCache<T>(past_v, v_t, *vv, pv);

    std::vector<int64_t> nonpad_len;
    if (nonpad) {
      if (nonpad->numel() != B)
        return absl::InvalidArgumentError("nonpad_kv_seqlen must have one entry per batch (" +
                                          std::to_string(B) + "), got " + DimsToString(nonpad->dims()));
      nonpad_len = nonpad->ToInt64Vector();
    }
    std::vector<int64_t> mask_strides;
    if (mask) {
      if (mask->rank() > 4 || mask->rank() < 1 || mask->dim(-1) > L)
        return absl::InvalidArgumentError("attn_mask " + DimsToString(mask->dims()) +
                                          " does not broadcast to [" + std::to_string(B) + ", " +
                                          std::to_string(Hq) + ", " + std::to_string(Sq) + ", " +
                                          std::to_string(L) + "]");
      Dims md = mask->dims();
      md.back() = L;  // a shorter last dim is padded with masked keys
      auto bs = BroadcastShapes(md, {B, Hq, Sq, L});
      if (!bs.ok() || *bs != Dims{B, Hq, Sq, L})
        return absl::InvalidArgumentError("attn_mask " + DimsToString(mask->dims()) +
                                          " does not broadcast to [B, heads, Sq, keys] = " +
                                          DimsToString({B, Hq, Sq, L}));
      mask_strides = BroadcastStrides(mask->dims(), {B, Hq, Sq, mask->dim(-1)});
    }

    const Dims y_dims = q_t.rank() == 3 ? Dims{B, Sq, Hq * Dv} : Dims{B, Hq, Sq, Dv};
    Tensor& y = ctx.AllocateOutput(0, q_t.dtype(), y_dims);
    Tensor* qk_out = ctx.output_wanted(3) ? &ctx.AllocateOutput(3, q_t.dtype(), {B, Hq, Sq, L}) : nullptr;
    if (y.numel() == 0 && !qk_out) return absl::OkStatus();

    const C sqrt_scale = SqrtScale<T, C>(has_scale_, scale_, D);
    const T* q = q_t.data<T>();
    const T* kp = pk.data<T>();
    const T* vp = pv.data<T>();
    T* yp = y.data<T>();
    const HeadView yv = *ViewHeads(y, "Y", Hq, "q_num_heads");  // y has Q's layout
    const int64_t group = Hq / Hkv;

    ParallelForIf(B * Hq > 1, B * Hq, [&](int64_t bh) {
      const int64_t b = bh / Hq, h = bh % Hq, hk = h / group;
      std::vector<C> scores(Sq * L), bias(Sq * L);
      HeadScores<T>(q, *qv, b, h, kp + (b * Hkv + hk) * L * D, L, sqrt_scale, scores.data());
      for (int64_t i = 0; i < Sq; ++i) {
        C* sc = &scores[i * L];
        for (int64_t j = 0; j < L; ++j) {
          C x = sc[j];
          if (softcap_ > 0) x = Round<T>(static_cast<C>(softcap_) * std::tanh(x / static_cast<C>(softcap_)));
          sc[j] = x;
          bias[i * L + j] = static_cast<C>(Bias(mask, mask_strides, nonpad_len, b, h, i, j, Sq, P));
        }
      }
      if (qk_out && qk_mode_ <= 1) CopyOut<T>(scores, qk_out->data<T>() + bh * Sq * L);
      for (int64_t i = 0; i < Sq * L; ++i) scores[i] = Round<T>(scores[i] + bias[i]);
      if (qk_out && qk_mode_ == 2) CopyOut<T>(scores, qk_out->data<T>() + bh * Sq * L);
      for (int64_t i = 0; i < Sq; ++i) SoftmaxRow<T>(&scores[i * L], &bias[i * L], L);
      if (qk_out && qk_mode_ == 3) CopyOut<T>(scores, qk_out->data<T>() + bh * Sq * L);
      // Y = P V for this head.
      const T* vh = vp + (b * Hkv + hk) * L * Dv;
      std::vector<C> acc(Dv);
      for (int64_t i = 0; i < Sq; ++i) {
        std::fill(acc.begin(), acc.end(), C(0));
        for (int64_t j = 0; j < L; ++j) {
          const C p = scores[i * L + j];
          if (p == C(0)) continue;
          const T* vr = vh + j * Dv;
          for (int64_t d = 0; d < Dv; ++d) acc[d] += p * static_cast<C>(vr[d]);
        }
        T* out = yp + yv.at(b, h, i);
        for (int64_t d = 0; d < Dv; ++d) out[d] = FromCompute<T>(acc[d]);
      }
    });
    return absl::OkStatus();
  }

  // Output `i` when the graph wants it (present_key/present_value), else a scratch tensor.
  static Tensor AllocateTensorLike(KernelContext& ctx, int i, DataType dtype, Dims dims) {
    if (ctx.output_wanted(i)) return ctx.AllocateOutput(i, dtype, std::move(dims));
    return Tensor::Host(dtype, std::move(dims));
  }

  // dst [B, H, P + S, D] = past [B, H, P, D] followed by `cur` (viewed by `v`) on axis 2.
  template <typename T>
  static void AppendCache(const Tensor* past, const Tensor& cur, const HeadView& v, Tensor& dst) {
    const int64_t P = past ? past->dim(2) : 0, L = P + v.seq;
    T* out = dst.data<T>();
    for (int64_t b = 0; b < v.batch; ++b)
      for (int64_t h = 0; h < v.heads; ++h) {
        T* o = out + (b * v.heads + h) * L * v.dim;
        if (past) std::copy_n(past->data<T>() + (b * v.heads + h) * P * v.dim, P * v.dim, o);
        for (int64_t s = 0; s < v.seq; ++s)
          std::copy_n(cur.data<T>() + v.at(b, h, s), v.dim, o + (P + s) * v.dim);
      }
  }

  // The additive bias of score (b, h, i, j): attn_mask (boolean false or a padded key
  // -> -inf), causal and window limits, and keys past nonpad_kv_seqlen[b].
  double Bias(const Tensor* mask, const std::vector<int64_t>& ms, const std::vector<int64_t>& nonpad,
              int64_t b, int64_t h, int64_t i, int64_t j, int64_t Sq, int64_t P) const {
    double bias = 0;
    if (mask) {
      if (j >= mask->dim(-1)) return kNegInf;
      const int64_t off = b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3];
      if (mask->dtype() == DataType::kBool) {
        if (!mask->data<bool>()[off]) return kNegInf;
      } else {
        bias = mask->ElementAsDouble(off);
      }
    }
    // Queries sit at the end of the key range: query i is at absolute position i + offset.
    const int64_t offset = P > 0 ? P : (!nonpad.empty() ? nonpad[b] - Sq : 0);
    const int64_t diff = i + offset - j;
    if (is_causal_ && diff < 0) return kNegInf;
    if (left_window_ >= 0 && diff > left_window_) return kNegInf;
    if (right_window_ >= 0 && -diff > right_window_) return kNegInf;
    if (!nonpad.empty() && j >= nonpad[b]) return kNegInf;
    return bias;
  }

  // Softmax of one score row in place; a row whose bias is -inf everywhere becomes zeros.
  template <typename T, typename C>
  void SoftmaxRow(C* x, const C* bias, int64_t n) const {
    bool all_masked = true;
    for (int64_t j = 0; j < n && all_masked; ++j) all_masked = std::isinf(bias[j]) && bias[j] < 0;
    if (all_masked) {
      std::fill(x, x + n, C(0));
      return;
    }
    // softmax_precision (an element type) may ask for more precision than T; float16 and
    // bfloat16 rows are otherwise rounded to T after each step, as the reference does.
    const bool round = softmax_precision_ == 0 || softmax_precision_ == static_cast<int>(DataType::kFloat16) ||
                       softmax_precision_ == static_cast<int>(DataType::kBfloat16);
    auto r = [&](C v) { return round ? Round<T>(v) : v; };
    C mx = -std::numeric_limits<C>::infinity();
    for (int64_t j = 0; j < n; ++j) mx = std::max(mx, x[j]);
    if (std::isinf(mx) && mx < 0) mx = 0;
    // numpy sums float16 in float, but ml_dtypes' bfloat16 one addition at a time in bfloat16.
    constexpr bool kStepwiseSum = std::is_same_v<T, BFloat16>;
    C sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      x[j] = r(std::exp(r(x[j] - mx)));
      sum = kStepwiseSum ? r(sum + x[j]) : sum + x[j];
    }
    sum = r(sum);
    if (sum == C(0)) sum = 1;
    for (int64_t j = 0; j < n; ++j) x[j] = Round<T>(x[j] / sum);
  }

  template <typename T, typename C>
  static void CopyOut(const std::vector<C>& v, T* out) {
    for (size_t i = 0; i < v.size(); ++i) out[i] = FromCompute<T>(v[i]);
  }

  int opset_;
  bool is_causal_;
  int64_t q_heads_, kv_heads_, qk_mode_;
  bool has_scale_;
  float scale_, softcap_;
  int64_t softmax_precision_, left_window_, right_window_;
};

// ai.onnx.preview FlexAttention: 4-D Q [B, Hq, L, E], K/V [B, Hkv, S, E/Ev]; scores in
// float32 (float16/bfloat16 inputs) or the input type pass through the optional score_mod
// subgraph, a softmax, and the optional prob_mod subgraph (each takes and returns the
// whole [B, Hq, L, S] tensor), then multiply V. softmax_precision may ask for float or
// double scores.
class FlexAttention : public Kernel {
 public:
  explicit FlexAttention(const KernelInfo& info)
      : has_scale_(info.node.has_attr("scale")),
        scale_(info.node.attr_float("scale", 1.f)),
        score_mod_(info.node.has_attr("score_mod")),
        prob_mod_(info.node.has_attr("prob_mod")),
        precision_(static_cast<DataType>(info.node.attr_int("softmax_precision", 0))) {}

  absl::Status Compute(KernelContext& ctx) override {
    return VisitFloatLike(ctx.input(0)->dtype(), "Q", [&](auto tag) { return Run<decltype(tag)>(ctx); });
  }

 private:
  template <typename T>
  absl::Status Run(KernelContext& ctx) {
    const Tensor& q_t = *ctx.input(0);
    const Tensor& k_t = *ctx.input(1);
    const Tensor& v_t = *ctx.input(2);
    if (q_t.rank() != 4 || k_t.rank() != 4 || v_t.rank() != 4)
      return absl::InvalidArgumentError("Q, K and V must be 4-D");
    if (k_t.dtype() != q_t.dtype() || v_t.dtype() != q_t.dtype())
      return absl::InvalidArgumentError("Q, K and V must have the same element type");
    auto qv = ViewHeads(q_t, "Q", 0, "");
    if (!qv.ok()) return qv.status();
    const int64_t B = q_t.dim(0), Hq = q_t.dim(1), E = q_t.dim(3);
    const int64_t Hkv = k_t.dim(1), S = k_t.dim(2);
    if (k_t.dim(0) != B || v_t.dim(0) != B || v_t.dim(1) != Hkv || v_t.dim(2) != S || k_t.dim(3) != E ||
        Hkv <= 0 || Hq % Hkv != 0)
      return absl::InvalidArgumentError("K " + DimsToString(k_t.dims()) + " and V " + DimsToString(v_t.dims()) +
                                        " do not fit Q " + DimsToString(q_t.dims()));
    const bool double_scores = precision_ == DataType::kDouble ||
                               (std::is_same_v<T, double> && precision_ != DataType::kFloat);
    return double_scores ? Attend<T, double>(ctx, *qv) : Attend<T, float>(ctx, *qv);
  }

  // Scores of type S (float or double) through score_mod, softmax (accumulated in double)
  // and prob_mod, then Y = P V.
  template <typename T, typename S>
  absl::Status Attend(KernelContext& ctx, const HeadView& qv) {
    using C = ComputeT<T>;
    const Tensor& k_t = *ctx.input(1);
    const Tensor& v_t = *ctx.input(2);
    const int64_t B = qv.batch, Hq = qv.heads, L = qv.seq, E = qv.dim;
    const int64_t Hkv = k_t.dim(1), S_len = k_t.dim(2), Ev = v_t.dim(3), group = Hq / Hkv;
    const C sqrt_scale = SqrtScale<T, C>(has_scale_, scale_, E);
    Tensor scores = Tensor::Host(DataTypeOf<S>::value, {B, Hq, L, S_len});
    std::vector<C> head(static_cast<size_t>(L * S_len));
    for (int64_t bh = 0; bh < B * Hq; ++bh) {
      const int64_t b = bh / Hq, h = bh % Hq;
      HeadScores<T>(ctx.input(0)->data<T>(), qv, b, h, k_t.data<T>() + (b * Hkv + h / group) * S_len * E, S_len,
                    sqrt_scale, head.data());
      std::copy(head.begin(), head.end(), scores.data<S>() + bh * L * S_len);
    }
    if (score_mod_) {
      auto out = Modify(ctx, "score_mod", scores);
      if (!out.ok()) return out.status();
      scores = std::move(*out);
    }
    for (int64_t row = 0; row < B * Hq * L; ++row) {
      S* p = scores.data<S>() + row * S_len;
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t j = 0; j < S_len; ++j) mx = std::max(mx, static_cast<double>(p[j]));
      for (int64_t j = 0; j < S_len; ++j) {
        p[j] = static_cast<S>(std::exp(static_cast<double>(p[j]) - mx));
        sum += p[j];
      }
      for (int64_t j = 0; j < S_len; ++j) p[j] = static_cast<S>(p[j] / sum);
    }
    if (prob_mod_) {
      auto out = Modify(ctx, "prob_mod", scores);
      if (!out.ok()) return out.status();
      scores = std::move(*out);
    }
    Tensor& y = ctx.AllocateOutput(0, v_t.dtype(), {B, Hq, L, Ev});
    for (int64_t bh = 0; bh < B * Hq; ++bh) {
      const T* vh = v_t.data<T>() + ((bh / Hq) * Hkv + (bh % Hq) / group) * S_len * Ev;
      for (int64_t i = 0; i < L; ++i) {
        const S* p = scores.data<S>() + (bh * L + i) * S_len;
        for (int64_t d = 0; d < Ev; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < S_len; ++j)
            acc += static_cast<double>(p[j]) * static_cast<double>(static_cast<C>(vh[j * Ev + d]));
          y.data<T>()[(bh * L + i) * Ev + d] = FromCompute<T>(static_cast<C>(acc));
        }
      }
    }
    return absl::OkStatus();
  }

  // Runs a score_mod/prob_mod subgraph on the scores; its output must keep their shape. The
  // result is a copy (CastTo), which the softmax may overwrite even when the subgraph
  // returned one of its own constants.
  static absl::StatusOr<Tensor> Modify(KernelContext& ctx, const char* attr, const Tensor& scores) {
    auto out = ctx.RunSubgraph(attr, {scores});
    if (!out.ok()) return out.status();
    if (out->size() != 1 || (*out)[0].dims() != scores.dims())
      return absl::InvalidArgumentError(std::string(attr) + " must return one tensor of the scores' shape " +
                                        DimsToString(scores.dims()));
    return (*out)[0].CastTo(scores.dtype());
  }

  bool has_scale_;
  float scale_;
  bool score_mod_, prob_mod_;
  DataType precision_;
};

}  // namespace

void RegisterAttentionKernels(KernelRegistry& r) {
  r.Add("Attention", 23, kMaxOpset, types::kFloats, Make<Attention>());
  KernelDef flex;
  flex.domain = "ai.onnx.preview";
  flex.op = "FlexAttention";
  flex.types = types::kFloats;
  flex.create = Make<FlexAttention>();
  r.Add(flex);
}

}  // namespace tandem::cpu
