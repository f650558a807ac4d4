// Opset-27 blocks of linear-attention and state-space models that carry a state from one
// call to the next (decoding step by step, or prefill then decode):
// - LinearAttention: per kv head a [d_k, d_v] state S; for each token t, optionally
//   S *= exp(decay_t) (gated), v_t = beta_t * (v_t - S^T k_t) (delta rule), then
//   S += k_t v_t^T and y_t = scale * q_t^T S (query heads grouped over kv heads).
//   Inputs [B, T, H*D]; outputs Y [B, T, Hq*d_v] and present_state [B, Hkv, d_k, d_v].
// - CausalConvWithState: depthwise causal Conv1d of x [B, C, L] with weight [C, 1, k]
//   over past_state (the previous k-1 inputs, zeros when absent) followed by x; optional
//   SiLU; present_state holds the last k-1 positions.
// Both compute in float32 (double for double) like onnx's reference.
#include <cmath>
#include <vector>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/elementwise.h"
#include "providers/cpu/kernels/head_view.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

// All values of a float-like tensor in compute type C (read once, outside the loops).
template <typename C>
std::vector<C> ReadAs(const Tensor& t) {
  std::vector<C> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<C>(t.ElementAsDouble(static_cast<int64_t>(i)));
  return v;
}

class LinearAttention : public Kernel {
 public:
  explicit LinearAttention(const KernelInfo& info)
      : rule_(info.node.attr_string("update_rule", "gated_delta")),
        q_heads_(info.node.attr_int("q_num_heads", 0)),
        kv_heads_(info.node.attr_int("kv_num_heads", 0)),
        scale_(info.node.attr_float("scale", 0.f)) {}

  absl::Status Compute(KernelContext& ctx) override {
    return VisitFloatLike(ctx.input(0)->dtype(), "query", [&](auto tag) { return Run<decltype(tag)>(ctx); });
  }

 private:
  template <typename T>
  absl::Status Run(KernelContext& ctx) {
    using C = ComputeT<T>;
    const Tensor& q = *ctx.input(0);
    const Tensor& k = *ctx.input(1);
    const Tensor& v = *ctx.input(2);
    const Tensor* past = ctx.input(3);
    const Tensor* decay = ctx.input(4);
    const Tensor* beta = ctx.input(5);
    const bool gating = rule_ == "gated" || rule_ == "gated_delta";
    const bool delta = rule_ == "delta" || rule_ == "gated_delta";
    if (!gating && !delta && rule_ != "linear")
      return absl::InvalidArgumentError("update_rule must be linear, gated, delta or gated_delta, got " + rule_);
    if (gating != (decay != nullptr))
      return absl::InvalidArgumentError("update_rule " + rule_ + (gating ? " needs" : " forbids") + " input decay");
    if (delta != (beta != nullptr))
      return absl::InvalidArgumentError("update_rule " + rule_ + (delta ? " needs" : " forbids") + " input beta");
    const int64_t Hq = q_heads_, Hkv = kv_heads_;
    if (Hq <= 0 || Hkv <= 0 || Hq % Hkv != 0)
      return absl::InvalidArgumentError("q_num_heads must be a positive multiple of kv_num_heads");
    if (q.rank() != 3 || k.rank() != 3 || v.rank() != 3 || q.dim(2) % Hq || k.dim(2) % Hkv || v.dim(2) % Hkv)
      return absl::InvalidArgumentError("query, key and value must be [B, T, heads * head size]");
    const int64_t B = q.dim(0), Tn = q.dim(1), Dk = q.dim(2) / Hq, Dv = v.dim(2) / Hkv;
    if (k.dim(0) != B || v.dim(0) != B || k.dim(1) != Tn || v.dim(1) != Tn || k.dim(2) / Hkv != Dk ||
        k.dtype() != q.dtype() || v.dtype() != q.dtype())
      return absl::InvalidArgumentError("key " + DimsToString(k.dims()) + " and value " + DimsToString(v.dims()) +
                                        " do not fit query " + DimsToString(q.dims()));
    // decay: one value per kv head, or one per head and key dim.
    int64_t decay_width = 0;
    if (decay) {
      if (decay->rank() != 3 || decay->dim(0) != B || decay->dim(1) != Tn ||
          (decay->dim(2) != Hkv && decay->dim(2) != Hkv * Dk))
        return absl::InvalidArgumentError("decay " + DimsToString(decay->dims()) + " must be [B, T, kv heads] or "
                                          "[B, T, kv heads * d_k]");
      decay_width = decay->dim(2) / Hkv;
    }
    if (beta && (beta->rank() != 3 || beta->dim(0) != B || beta->dim(1) != Tn ||
                 (beta->dim(2) != Hkv && beta->dim(2) != 1)))
      return absl::InvalidArgumentError("beta " + DimsToString(beta->dims()) + " must be [B, T, kv heads] or [B, T, 1]");
    const Dims state_dims = {B, Hkv, Dk, Dv};
    if (past && past->dims() != state_dims)
      return absl::InvalidArgumentError("past_state " + DimsToString(past->dims()) + " must be " +
                                        DimsToString(state_dims));
    const DataType state_type = past ? past->dtype() : q.dtype();
    std::vector<C> state = past ? ReadAs<C>(*past) : std::vector<C>(static_cast<size_t>(NumElements(state_dims)), C(0));
    const std::vector<C> decay_v = decay ? ReadAs<C>(*decay) : std::vector<C>();
    const std::vector<C> beta_v = beta ? ReadAs<C>(*beta) : std::vector<C>();
    const int64_t beta_width = beta ? beta->dim(2) : 0;
    const C scale = scale_ != 0.f ? static_cast<C>(scale_) : static_cast<C>(1.0 / std::sqrt(static_cast<double>(Dk)));
    Tensor& y = ctx.AllocateOutput(0, q.dtype(), {B, Tn, Hq * Dv});
    // [B, T, H*D] tensors viewed per head (shapes checked above).
    const HeadView qv = *ViewHeads(q, "query", Hq, "q_num_heads"), kv = *ViewHeads(k, "key", Hkv, "kv_num_heads");
    const HeadView vv = *ViewHeads(v, "value", Hkv, "kv_num_heads"), yv = *ViewHeads(y, "Y", Hq, "q_num_heads");
    const T* qp = q.data<T>();
    const T* kp = k.data<T>();
    const T* vp = v.data<T>();
    T* yp = y.data<T>();
    const int64_t group = Hq / Hkv;
    ParallelForIf(B * Hkv > 1, B * Hkv, [&](int64_t bh) {
      const int64_t b = bh / Hkv, h = bh % Hkv;
      C* S = &state[bh * Dk * Dv];
      std::vector<C> vt(Dv), kt(Dk);
      for (int64_t t = 0; t < Tn; ++t) {
        for (int64_t d = 0; d < Dk; ++d) kt[d] = static_cast<C>(kp[kv.at(b, h, t) + d]);
        for (int64_t m = 0; m < Dv; ++m) vt[m] = static_cast<C>(vp[vv.at(b, h, t) + m]);
        if (gating)
          for (int64_t d = 0; d < Dk; ++d) {
            const C g = std::exp(decay_v[(b * Tn + t) * Hkv * decay_width + h * decay_width + (decay_width == 1 ? 0 : d)]);
            for (int64_t m = 0; m < Dv; ++m) S[d * Dv + m] *= g;
          }
        if (delta) {
          const C bt = beta_v[(b * Tn + t) * beta_width + (beta_width == 1 ? 0 : h)];
          for (int64_t m = 0; m < Dv; ++m) {
            C retrieved = 0;
            for (int64_t d = 0; d < Dk; ++d) retrieved += S[d * Dv + m] * kt[d];
            vt[m] = bt * (vt[m] - retrieved);
          }
        }
        for (int64_t d = 0; d < Dk; ++d)
          for (int64_t m = 0; m < Dv; ++m) S[d * Dv + m] += kt[d] * vt[m];
        for (int64_t hq = h * group; hq < (h + 1) * group; ++hq)
          for (int64_t m = 0; m < Dv; ++m) {
            C acc = 0;
            for (int64_t d = 0; d < Dk; ++d) acc += static_cast<C>(qp[qv.at(b, hq, t) + d]) * S[d * Dv + m];
            yp[yv.at(b, hq, t) + m] = FromCompute<T>(scale * acc);
          }
      }
    });
    if (ctx.output_wanted(1)) {
      Tensor& present = ctx.AllocateOutput(1, state_type, state_dims);
      absl::Status s = VisitFloatLike(state_type, "past_state", [&](auto tag) {
        using S = decltype(tag);
        for (size_t i = 0; i < state.size(); ++i) present.data<S>()[i] = FromCompute<S>(state[i]);
        return absl::OkStatus();
      });
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  std::string rule_;
  int64_t q_heads_, kv_heads_;
  float scale_;
};

class CausalConvWithState : public Kernel {
 public:
  explicit CausalConvWithState(const KernelInfo& info) : activation_(info.node.attr_string("activation", "none")) {}

  absl::Status Compute(KernelContext& ctx) override {
    return VisitFloatLike(ctx.input(0)->dtype(), "input", [&](auto tag) { return Run<decltype(tag)>(ctx); });
  }

 private:
  template <typename T>
  absl::Status Run(KernelContext& ctx) {
    using C = ComputeT<T>;
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor* bias = ctx.input(2);
    const Tensor* past = ctx.input(3);
    const bool silu = activation_ == "silu" || activation_ == "swish";
    if (!silu && activation_ != "none")
      return absl::InvalidArgumentError("activation must be none, silu or swish, got " + activation_);
    if (x.rank() != 3) return absl::InvalidArgumentError("input must be [B, C, L], got " + DimsToString(x.dims()));
    const int64_t B = x.dim(0), C_ = x.dim(1), L = x.dim(2);
    if (w.rank() != 3 || w.dim(0) != C_ || w.dim(1) != 1 || w.dim(2) < 1 || w.dtype() != x.dtype())
      return absl::InvalidArgumentError("weight " + DimsToString(w.dims()) + " must be [" + std::to_string(C_) +
                                        ", 1, k] of the input's type");
    const int64_t K = w.dim(2), P = K - 1;
    if (bias && (bias->numel() != C_ || bias->dtype() != x.dtype()))
      return absl::InvalidArgumentError("bias must have one value per channel");
    if (past && (past->dims() != Dims{B, C_, P} || past->dtype() != x.dtype()))
      return absl::InvalidArgumentError("past_state " + DimsToString(past->dims()) + " must be " +
                                        DimsToString({B, C_, P}));
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
    Tensor* present = ctx.output_wanted(1) ? &ctx.AllocateOutput(1, x.dtype(), {B, C_, P}) : nullptr;
    const T* xp = x.data<T>();
    const T* wp = w.data<T>();
    ParallelFor(B * C_, [&](int64_t bc) {
      const int64_t c = bc % C_;
      // The padded line: past (or zeros) followed by the input.
      std::vector<T> line(static_cast<size_t>(P + L), FromCompute<T>(C(0)));
      if (past) std::copy_n(past->data<T>() + bc * P, P, line.begin());
      std::copy_n(xp + bc * L, L, line.begin() + P);
      const C b0 = bias ? static_cast<C>(bias->data<T>()[c]) : C(0);
      for (int64_t i = 0; i < L; ++i) {
        C acc = b0;
        for (int64_t j = 0; j < K; ++j) acc += static_cast<C>(wp[c * K + j]) * static_cast<C>(line[i + j]);
        if (silu) {
          const float a = static_cast<float>(static_cast<T>(FromCompute<T>(acc)));  // the reference rounds first
          acc = static_cast<C>(a / (1.f + std::exp(-a)));
        }
        y.data<T>()[bc * L + i] = FromCompute<T>(acc);
      }
      if (present) std::copy_n(line.begin() + L, P, present->data<T>() + bc * P);
    }, 1);
    return absl::OkStatus();
  }

  std::string activation_;
};

}  // namespace

void RegisterRecurrentStateKernels(KernelRegistry& r) {
  r.Add("LinearAttention", 27, kMaxOpset, {DataType::kFloat, DataType::kFloat16, DataType::kBfloat16},
        Make<LinearAttention>());
  r.Add("CausalConvWithState", 27, kMaxOpset, {DataType::kFloat, DataType::kFloat16, DataType::kBfloat16},
        Make<CausalConvWithState>());
}

}  // namespace tandem::cpu
