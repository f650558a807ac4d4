// Recurrent kernels: RNN, GRU and LSTM (opset 7+, layout attribute from opset 14).
// Reference loops over time; the input projection for all steps and the recurrent
// projection of each step are GEMMs (oneDNN sgemm for float, plain loops for double).
// Supports forward/reverse/bidirectional, sequence_lens, initial states, peepholes,
// clip, custom activations with alpha/beta, GRU linear_before_reset and LSTM
// input_forget.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include <dnnl.hpp>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

enum class Cell { kRnn, kGru, kLstm };

// c[M,N] (row stride ldc) = a[M,K] * b[N,K]^T, all row-major.
void GemmNT(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
            int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.f);
    return;
  }
  dnnl::sgemm('N', 'T', m, n, k, 1.f, a, k, b, k, 0.f, c, ldc);
}
void GemmNT(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c,
            int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (int64_t p = 0; p < k; ++p) s += a[i * k + p] * b[j * k + p];
      c[i * ldc + j] = s;
    }
}

struct Activation {
  enum Kind { kSigmoid, kTanh, kRelu, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh,
              kHardSigmoid, kElu, kSoftsign, kSoftplus } kind = kTanh;
  double alpha = 0, beta = 0;
  template <typename A>
  A operator()(A x) const {
    switch (kind) {
      case kSigmoid: return A(1) / (A(1) + std::exp(-x));
      case kTanh: return std::tanh(x);
      case kRelu: return std::max(x, A(0));
      case kAffine: return A(alpha) * x + A(beta);
      case kLeakyRelu: return x >= 0 ? x : A(alpha) * x;
      case kThresholdedRelu: return x > A(alpha) ? x : A(0);
      case kScaledTanh: return A(alpha) * std::tanh(A(beta) * x);
      case kHardSigmoid: return std::min(A(1), std::max(A(0), A(alpha) * x + A(beta)));
      case kElu: return x >= 0 ? x : A(alpha) * (std::exp(x) - A(1));
      case kSoftsign: return x / (A(1) + std::fabs(x));
      case kSoftplus: return std::log1p(std::exp(-std::fabs(x))) + std::max(x, A(0));
    }
    return x;
  }
};

class Recurrent : public Kernel {
 public:
  Recurrent(const KernelInfo& info, Cell cell) : cell_(cell) {
    const Node& n = info.node;
    gates_ = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
    hidden_ = n.attr_int("hidden_size", 0);
    clip_ = n.attr_float("clip", 0.f);
    has_clip_ = n.has_attr("clip");
    layout_ = info.opset >= 14 ? n.attr_int("layout", 0) : 0;
    lbr_ = n.attr_int("linear_before_reset", 0) != 0;
    input_forget_ = n.attr_int("input_forget", 0) != 0;
    std::string dir = n.attr_string("direction", "forward");
    if (dir == "forward") dirs_ = 1;
    else if (dir == "reverse") { dirs_ = 1; reverse_ = true; }
    else if (dir == "bidirectional") dirs_ = 2;
    else error_ = "unsupported direction '" + dir + "'";
    if (layout_ != 0 && layout_ != 1) error_ = "layout must be 0 or 1";
    // Activations: per direction RNN has 1, GRU 2 (f, g), LSTM 3 (f, g, h).
    const int per = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3;
    std::vector<std::string> names = n.attr_strings("activations");
    if (names.empty()) {
      for (int d = 0; d < dirs_; ++d) {
        if (cell == Cell::kRnn) names.push_back("Tanh");
        else {
          names.push_back("Sigmoid");
          for (int i = 1; i < per; ++i) names.push_back("Tanh");
        }
      }
    } else if (static_cast<int>(names.size()) == per && dirs_ == 2) {
      for (int i = 0; i < per; ++i) names.push_back(names[i]);
    }
    if (static_cast<int>(names.size()) != per * dirs_) {
      error_ = "expected " + std::to_string(per * dirs_) + " activations, got " +
               std::to_string(names.size());
      return;
    }
    std::vector<float> alphas = n.attr_floats("activation_alpha");
    std::vector<float> betas = n.attr_floats("activation_beta");
    size_t ai = 0, bi = 0;
    for (const std::string& raw : names) {
      std::string s;
      for (char c : raw) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      Activation a;
      double da = 0, db = 0;
      bool use_a = false, use_b = false;
      if (s == "sigmoid") a.kind = Activation::kSigmoid;
      else if (s == "tanh") a.kind = Activation::kTanh;
      else if (s == "relu") a.kind = Activation::kRelu;
      else if (s == "affine") { a.kind = Activation::kAffine; da = 1; use_a = use_b = true; }
      else if (s == "leakyrelu") { a.kind = Activation::kLeakyRelu; da = 0.01; use_a = true; }
      else if (s == "thresholdedrelu") { a.kind = Activation::kThresholdedRelu; da = 1; use_a = true; }
      else if (s == "scaledtanh") { a.kind = Activation::kScaledTanh; da = db = 1; use_a = use_b = true; }
      else if (s == "hardsigmoid") { a.kind = Activation::kHardSigmoid; da = 0.2; db = 0.5; use_a = use_b = true; }
      else if (s == "elu") { a.kind = Activation::kElu; da = 1; use_a = true; }
      else if (s == "softsign") a.kind = Activation::kSoftsign;
      else if (s == "softplus") a.kind = Activation::kSoftplus;
      else { error_ = "unsupported activation '" + raw + "'"; return; }
      a.alpha = use_a && ai < alphas.size() ? alphas[ai++] : da;
      a.beta = use_b && bi < betas.size() ? betas[bi++] : db;
      acts_.push_back(a);
    }
  }

  absl::Status Compute(KernelContext& ctx) override {
    if (!error_.empty()) return absl::InvalidArgumentError(error_);
    const Tensor& x = *ctx.input(0);
    switch (x.dtype()) {
      case DataType::kDouble: return Run<double>(ctx);
      default: return Run<float>(ctx);
    }
  }

 private:
  // Reads any float tensor into a vector of A.
  template <typename A>
  static std::vector<A> Read(const Tensor& t) {
    std::vector<A> v(static_cast<size_t>(t.numel()));
    VisitNumericType(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* p = t.data<T>();
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<A>(p[i]);
    });
    return v;
  }
  template <typename A>
  static void Write(const std::vector<A>& v, Tensor& t) {
    VisitNumericType(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* p = t.data<T>();
      for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(v[i]);
    });
  }
  static absl::Status CheckShape(const Tensor& t, const Dims& want, const char* name) {
    if (t.dims() != want)
      return absl::InvalidArgumentError(std::string("input ") + name + " must have shape " +
                                        DimsToString(want) + ", got " + DimsToString(t.dims()));
    return absl::OkStatus();
  }

  template <typename A>
  absl::Status Run(KernelContext& ctx) {
    const Tensor& x = *ctx.input(0);
    const Tensor* wp = ctx.input(1);
    const Tensor* rp = ctx.input(2);
    if (!wp || !rp) return absl::InvalidArgumentError("inputs W and R are required");
    if (x.rank() != 3) return absl::InvalidArgumentError("input X must have rank 3");
    const int64_t T = layout_ ? x.dim(1) : x.dim(0);
    const int64_t B = layout_ ? x.dim(0) : x.dim(1);
    const int64_t I = x.dim(2);
    const int64_t H = hidden_ > 0 ? hidden_ : (rp->rank() == 3 ? rp->dim(2) : 0);
    const int64_t G = gates_, D = dirs_;
    if (H <= 0) return absl::InvalidArgumentError("hidden_size must be positive");
    if (auto s = CheckShape(*wp, {D, G * H, I}, "W"); !s.ok()) return s;
    if (auto s = CheckShape(*rp, {D, G * H, H}, "R"); !s.ok()) return s;
    const Tensor* bp = ctx.input(3);
    const Tensor* lp = ctx.input(4);
    const Tensor* h0p = ctx.input(5);
    const Tensor* c0p = cell_ == Cell::kLstm ? ctx.input(6) : nullptr;
    const Tensor* pp = cell_ == Cell::kLstm ? ctx.input(7) : nullptr;
    if (bp) if (auto s = CheckShape(*bp, {D, 2 * G * H}, "B"); !s.ok()) return s;
    if (lp) if (auto s = CheckShape(*lp, {B}, "sequence_lens"); !s.ok()) return s;
    const Dims state_dims = layout_ ? Dims{B, D, H} : Dims{D, B, H};
    if (h0p) if (auto s = CheckShape(*h0p, state_dims, "initial_h"); !s.ok()) return s;
    if (c0p) if (auto s = CheckShape(*c0p, state_dims, "initial_c"); !s.ok()) return s;
    if (pp) if (auto s = CheckShape(*pp, {D, 3 * H}, "P"); !s.ok()) return s;

    std::vector<int64_t> lens(B, T);
    if (lp) {
      lens = lp->ToInt64Vector();
      for (int64_t l : lens)
        if (l < 0 || l > T)
          return absl::InvalidArgumentError("sequence_lens value " + std::to_string(l) +
                                            " is out of range [0, " + std::to_string(T) + "]");
    }
    // X as [T, B, I].
    std::vector<A> xs = Read<A>(x);
    if (layout_) {
      std::vector<A> t(xs.size());
      for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < T; ++s)
          std::copy_n(&xs[(b * T + s) * I], I, &t[(s * B + b) * I]);
      xs.swap(t);
    }
    std::vector<A> w = Read<A>(*wp), r = Read<A>(*rp);
    std::vector<A> bias = bp ? Read<A>(*bp) : std::vector<A>(D * 2 * G * H, A(0));
    std::vector<A> peep = pp ? Read<A>(*pp) : std::vector<A>(D * 3 * H, A(0));
    std::vector<A> h0 = h0p ? Read<A>(*h0p) : std::vector<A>(D * B * H, A(0));
    std::vector<A> c0 = c0p ? Read<A>(*c0p) : std::vector<A>(D * B * H, A(0));
    // State index helper for [D, B, H] or [B, D, H].
    auto sidx = [&](int64_t d, int64_t b) { return layout_ ? (b * D + d) * H : (d * B + b) * H; };

    std::vector<A> y(T * D * B * H, A(0));  // [T, D, B, H]
    std::vector<A> yh(D * B * H), yc(D * B * H);
    const A clip = static_cast<A>(clip_);
    auto cl = [&](A v) { return has_clip_ ? std::min(clip, std::max(-clip, v)) : v; };
    std::vector<A> xw(T * B * G * H), hr(B * G * H), hcur(B * H), ccur(B * H), rh(B * H);
    for (int64_t d = 0; d < D; ++d) {
      const bool rev = reverse_ || d == 1;
      const A* wd = w.data() + d * G * H * I;
      const A* rd = r.data() + d * G * H * H;
      const A* wb = bias.data() + d * 2 * G * H;
      const A* rb = wb + G * H;
      const A* pd = peep.data() + d * 3 * H;
      const Activation* act = &acts_[d * (cell_ == Cell::kRnn ? 1 : cell_ == Cell::kGru ? 2 : 3)];
      // Input projection for all steps, with the biases that are plain additions.
      GemmNT(T * B, G * H, I, xs.data(), wd, xw.data(), G * H);
      for (int64_t row = 0; row < T * B; ++row)
        for (int64_t j = 0; j < G * H; ++j) {
          bool fold_rb = !(cell_ == Cell::kGru && lbr_ && j >= 2 * H);
          xw[row * G * H + j] += wb[j] + (fold_rb ? rb[j] : A(0));
        }
      for (int64_t b = 0; b < B; ++b) {
        std::copy_n(&h0[sidx(d, b)], H, &hcur[b * H]);
        std::copy_n(&c0[sidx(d, b)], H, &ccur[b * H]);
      }
      for (int64_t s = 0; s < T; ++s) {
        // Recurrent projection (for GRU without linear_before_reset only z and r here).
        const int64_t rg = (cell_ == Cell::kGru && !lbr_) ? 2 : G;
        GemmNT(B, rg * H, H, hcur.data(), rd, hr.data(), G * H);
        // GRU (no linear_before_reset): h-gate needs (r * H_prev) R_h^T.
        if (cell_ == Cell::kGru && !lbr_) {
          for (int64_t b = 0; b < B; ++b) {
            if (s >= lens[b]) continue;
            int64_t t = rev ? lens[b] - 1 - s : s;
            const A* g = &xw[(t * B + b) * G * H];
            for (int64_t j = 0; j < H; ++j) {
              A rv = act[0](cl(g[H + j] + hr[b * G * H + H + j]));
              rh[b * H + j] = rv * hcur[b * H + j];
            }
          }
          GemmNT(B, H, H, rh.data(), rd + 2 * H * H, hr.data() + 2 * H, G * H);
        }
        for (int64_t b = 0; b < B; ++b) {
          if (s >= lens[b]) continue;
          const int64_t t = rev ? lens[b] - 1 - s : s;
          const A* gx = &xw[(t * B + b) * G * H];
          const A* gh = &hr[b * G * H];
          A* hb = &hcur[b * H];
          A* cb = &ccur[b * H];
          for (int64_t j = 0; j < H; ++j) {
            if (cell_ == Cell::kRnn) {
              hb[j] = act[0](cl(gx[j] + gh[j]));
            } else if (cell_ == Cell::kGru) {
              A z = act[0](cl(gx[j] + gh[j]));
              A hh;
              if (lbr_) {
                A rv = act[0](cl(gx[H + j] + gh[H + j]));
                hh = act[1](cl(gx[2 * H + j] + rv * (gh[2 * H + j] + rb[2 * H + j])));
              } else {
                hh = act[1](cl(gx[2 * H + j] + gh[2 * H + j]));
              }
              hb[j] = (A(1) - z) * hh + z * hb[j];
            } else {
              A cprev = cb[j];
              A ig = act[0](cl(gx[j] + gh[j] + pd[j] * cprev));
              A fg = act[0](cl(gx[2 * H + j] + gh[2 * H + j] + pd[2 * H + j] * cprev));
              if (input_forget_) fg = A(1) - ig;
              A cg = act[1](cl(gx[3 * H + j] + gh[3 * H + j]));
              A c = fg * cprev + ig * cg;
              A og = act[0](cl(gx[H + j] + gh[H + j] + pd[H + j] * c));
              cb[j] = c;
              hb[j] = og * act[2](c);
            }
          }
          std::copy_n(hb, H, &y[((t * D + d) * B + b) * H]);
        }
      }
      for (int64_t b = 0; b < B; ++b) {
        std::copy_n(&hcur[b * H], H, &yh[sidx(d, b)]);
        std::copy_n(&ccur[b * H], H, &yc[sidx(d, b)]);
      }
    }
    const DataType dt = x.dtype();
    if (ctx.output_wanted(0)) {
      if (layout_) {
        Tensor& out = ctx.AllocateOutput(0, dt, {B, T, D, H});
        std::vector<A> t(y.size());
        for (int64_t s = 0; s < T; ++s)
          for (int64_t d = 0; d < D; ++d)
            for (int64_t b = 0; b < B; ++b)
              std::copy_n(&y[((s * D + d) * B + b) * H], H, &t[((b * T + s) * D + d) * H]);
        Write(t, out);
      } else {
        Write(y, ctx.AllocateOutput(0, dt, {T, D, B, H}));
      }
    }
    if (ctx.output_wanted(1)) Write(yh, ctx.AllocateOutput(1, dt, state_dims));
    if (cell_ == Cell::kLstm && ctx.output_wanted(2))
      Write(yc, ctx.AllocateOutput(2, dt, state_dims));
    return absl::OkStatus();
  }

  Cell cell_;
  int64_t gates_, hidden_, layout_;
  float clip_;
  bool has_clip_, lbr_, input_forget_, reverse_ = false;
  int dirs_ = 1;
  std::vector<Activation> acts_;
  std::string error_;
};

struct RnnKernel : Recurrent {
  explicit RnnKernel(const KernelInfo& i) : Recurrent(i, Cell::kRnn) {}
};
struct GruKernel : Recurrent {
  explicit GruKernel(const KernelInfo& i) : Recurrent(i, Cell::kGru) {}
};
struct LstmKernel : Recurrent {
  explicit LstmKernel(const KernelInfo& i) : Recurrent(i, Cell::kLstm) {}
};

}  // namespace

void RegisterRnnKernels(KernelRegistry& r) {
  r.Add("RNN", 7, 13, types::kFloats, Make<RnnKernel>());
  r.Add("RNN", 14, kMaxOpset, types::kFloats, Make<RnnKernel>());
  r.Add("GRU", 7, 13, types::kFloats, Make<GruKernel>());
  r.Add("GRU", 14, kMaxOpset, types::kFloats, Make<GruKernel>());
  r.Add("LSTM", 7, 13, types::kFloats, Make<LstmKernel>());
  r.Add("LSTM", 14, kMaxOpset, types::kFloats, Make<LstmKernel>());
}

}  // namespace tandem::cpu
