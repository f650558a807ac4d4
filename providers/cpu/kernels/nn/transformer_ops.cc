// Ops of transformer blocks beside Attention (attention.cc):
// - RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim values of each head
//   of X ([B, H, S, D], or [B, S, H*D] with num_heads) by cos/sin caches, as two halves or
//   interleaved pairs; caches are [B, S, rd/2], or [max_position, rd/2] indexed by
//   position_ids [B, S].
// - SwiGLU (opset 28): A * sigmoid(alpha * A) * B, A and B of one shape.
// - TensorScatter (opset 24): a KV cache with `update` written along `axis` from
//   write_indices[b] (per batch), linear or circular.
// Computation in float (double for double), rounded to the element type once.
#include <cmath>
#include <cstring>
#include <vector>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/elementwise.h"
#include "providers/cpu/kernels/head_view.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

class RotaryEmbedding : public Kernel {
 public:
  explicit RotaryEmbedding(const KernelInfo& info)
      : interleaved_(info.node.attr_int("interleaved", 0) != 0),
        rotary_dim_(info.node.attr_int("rotary_embedding_dim", 0)),
        num_heads_(info.node.attr_int("num_heads", 0)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    return VisitFloatLike(x.dtype(), "X", [&](auto tag) { return Run<decltype(tag)>(ctx); });
  }

 private:
  template <typename T>
  absl::Status Run(KernelContext& ctx) {
    using C = ComputeT<T>;
    const Tensor& x = *ctx.input(0);
    const Tensor& cos_t = *ctx.input(1);
    const Tensor& sin_t = *ctx.input(2);
    const Tensor* pos = ctx.input(3);
    auto xv = ViewHeads(x, "X", num_heads_, "num_heads");
    if (!xv.ok()) return xv.status();
    const int64_t B = xv->batch, S = xv->seq, H = xv->heads, D = xv->dim;
    const int64_t rd = rotary_dim_ > 0 ? rotary_dim_ : D, half = rd / 2;
    if (rd > D || rd % 2 != 0)
      return absl::InvalidArgumentError("rotary_embedding_dim " + std::to_string(rd) +
                                        " must be even and at most the head size " + std::to_string(D));
    for (const Tensor* c : {&cos_t, &sin_t}) {
      const bool ok = pos ? c->rank() == 2 && c->dim(1) == half : c->dims() == Dims{B, S, half};
      if (!ok)
        return absl::InvalidArgumentError(
            "cos_cache/sin_cache " + DimsToString(c->dims()) + " must be " +
            (pos ? "[max_position, " + std::to_string(half) + "] with position_ids"
                 : DimsToString({B, S, half}) + " without position_ids"));
    }
    std::vector<int64_t> positions;
    if (pos) {
      if (pos->dims() != Dims{B, S})
        return absl::InvalidArgumentError("position_ids " + DimsToString(pos->dims()) + " must be " +
                                          DimsToString({B, S}));
      positions = pos->ToInt64Vector();
      for (int64_t p : positions)
        if (p < 0 || p >= cos_t.dim(0))
          return absl::InvalidArgumentError("position id " + std::to_string(p) + " is outside the cache of " +
                                            std::to_string(cos_t.dim(0)) + " positions");
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
    const T* in = x.data<T>();
    T* out = y.data<T>();
    const T* cs = cos_t.data<T>();
    const T* sn = sin_t.data<T>();
    ParallelFor(B * S, [&](int64_t bs) {
      const int64_t b = bs / S, s = bs % S;
      const int64_t row = pos ? positions[bs] : bs;  // cache row for this token
      for (int64_t h = 0; h < H; ++h) {
        const int64_t o = xv->at(b, h, s);
        for (int64_t k = 0; k < half; ++k) {
          const int64_t i1 = interleaved_ ? 2 * k : k, i2 = interleaved_ ? 2 * k + 1 : k + half;
          const C c = static_cast<C>(cs[row * half + k]), sv = static_cast<C>(sn[row * half + k]);
          const C x1 = static_cast<C>(in[o + i1]), x2 = static_cast<C>(in[o + i2]);
          out[o + i1] = FromCompute<T>(c * x1 - sv * x2);
          out[o + i2] = FromCompute<T>(sv * x1 + c * x2);
        }
        for (int64_t d = rd; d < D; ++d) out[o + d] = in[o + d];
      }
    }, 64);
    return absl::OkStatus();
  }

  bool interleaved_;
  int64_t rotary_dim_, num_heads_;
};

class SwiGlu : public Kernel {
 public:
  explicit SwiGlu(const KernelInfo& info) : alpha_(info.node.attr_float("alpha", 1.f)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    if (a.dims() != b.dims() || a.dtype() != b.dtype())
      return absl::InvalidArgumentError("A and B must have one shape and type (no broadcasting), got " +
                                        DimsToString(a.dims()) + " and " + DimsToString(b.dims()));
    Tensor& y = ctx.AllocateOutput(0, a.dtype(), a.dims());
    return VisitFloatLike(a.dtype(), "A", [&](auto tag) {
      using T = decltype(tag);
      using C = ComputeT<T>;
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* py = y.data<T>();
      const C alpha = static_cast<C>(alpha_);
      ParallelFor(a.numel(), [&](int64_t i) {
        const C av = static_cast<C>(pa[i]);
        py[i] = FromCompute<T>(av / (C(1) + std::exp(-alpha * av)) * static_cast<C>(pb[i]));
      });
      return absl::OkStatus();
    });
  }

 private:
  float alpha_;
};

class TensorScatter : public Kernel {
 public:
  explicit TensorScatter(const KernelInfo& info)
      : circular_(info.node.attr_string("mode", "linear") == "circular"),
        mode_(info.node.attr_string("mode", "linear")),
        axis_(info.node.attr_int("axis", -2)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& past = *ctx.input(0);
    const Tensor& update = *ctx.input(1);
    const Tensor* idx = ctx.input(2);
    if (mode_ != "linear" && mode_ != "circular")
      return absl::InvalidArgumentError("attribute mode must be linear or circular, got " + mode_);
    auto axis = NormalizeAxis(axis_, past.rank());
    if (!axis.ok()) return axis.status();
    if (*axis == 0) return absl::InvalidArgumentError("axis must not be the batch axis 0");
    bool fits = past.rank() == update.rank() && past.dtype() == update.dtype();
    for (int d = 0; fits && d < past.rank(); ++d)
      fits = d == *axis ? update.dim(d) <= past.dim(d) : update.dim(d) == past.dim(d);
    if (!fits)
      return absl::InvalidArgumentError("update " + DimsToString(update.dims()) + " does not fit past_cache " +
                                        DimsToString(past.dims()) + " along axis " + std::to_string(*axis));
    const int64_t batch = past.dim(0);
    std::vector<int64_t> start(batch, 0);
    if (idx) {
      if (idx->numel() != batch)
        return absl::InvalidArgumentError("write_indices must have one entry per batch (" +
                                          std::to_string(batch) + "), got " + DimsToString(idx->dims()));
      start = idx->ToInt64Vector();
    }
    const int64_t max_len = past.dim(*axis), len = update.dim(*axis);
    for (int64_t s : start)
      if (s < 0 || (!circular_ && s + len > max_len))
        return absl::InvalidArgumentError("write index " + std::to_string(s) + " with " + std::to_string(len) +
                                          " updates runs outside the cache of " + std::to_string(max_len));
    Tensor& y = ctx.AllocateOutput(0, past.dtype(), past.dims());
    const size_t elem = SizeOf(past.dtype());
    if (past.bytes()) std::memcpy(y.raw(), past.raw(), past.bytes());
    // [outer, axis, inner] blocks: outer = batch * dims between 0 and axis.
    const int64_t inner = DimProduct(past.dims(), *axis + 1, past.rank()) * static_cast<int64_t>(elem);
    const int64_t per_batch = DimProduct(past.dims(), 1, *axis);
    char* dst = static_cast<char*>(y.raw());
    const char* src = static_cast<const char*>(update.raw());
    for (int64_t o = 0; o < batch * per_batch; ++o) {
      const int64_t b = o / per_batch;
      for (int64_t s = 0; s < len; ++s) {
        const int64_t at = circular_ ? (start[b] + s) % max_len : start[b] + s;
        std::memcpy(dst + (o * max_len + at) * inner, src + (o * len + s) * inner, inner);
      }
    }
    return absl::OkStatus();
  }

 private:
  bool circular_;
  std::string mode_;
  int64_t axis_;
};

}  // namespace

void RegisterTransformerKernels(KernelRegistry& r) {
  r.Add("RotaryEmbedding", 23, kMaxOpset, {DataType::kFloat, DataType::kFloat16, DataType::kBfloat16},
        Make<RotaryEmbedding>());
  r.Add("SwiGLU", 28, kMaxOpset, types::kFloats, Make<SwiGlu>());
  std::vector<DataType> scatter_types = types::kNumeric;  // moved as bytes: no strings
  scatter_types.push_back(DataType::kBool);
  r.Add("TensorScatter", 24, kMaxOpset, scatter_types, Make<TensorScatter>());
}

}  // namespace tandem::cpu
