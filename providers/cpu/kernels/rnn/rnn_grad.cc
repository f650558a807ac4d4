// Backward kernels of the recurrent ops, for training (training/rules/recurrent.cc):
//
//   ai.tandem LSTMGrad(X, W, R, B, initial_h, initial_c, dY, dY_h, dY_c)
//       -> dX, dW, dR, dB, d_initial_h, d_initial_c
//   ai.tandem GRUGrad(X, W, R, B, initial_h, dY, dY_h) -> dX, dW, dR, dB, d_initial_h
//
// with the forward node's hidden_size, direction, layout and (GRU) linear_before_reset.
// Each kernel recomputes the forward pass of every direction, keeping the gates of each
// step, then runs backpropagation through time. Optional inputs may be absent (zero
// states, zero bias, no gradient from an output). Only what the rule admits is handled:
// default activations, no peepholes, clip, sequence_lens or input_forget.
//
// ONNX gate order: LSTM i, o, f, c (W is [D, 4H, I]); GRU z, r, h ([D, 3H, I]). B is
// [D, 2 * gates * H]: the W biases, then the R biases.
#include <cmath>
#include <string>
#include <vector>

#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

enum class Cell { kGru, kLstm };

template <typename T>
T Sigmoid(T x) { return T(1) / (T(1) + std::exp(-x)); }

// Index arithmetic of the two layouts: 0 = [S, B, ...] / Y [S, D, B, H]; 1 = batch first.
struct Layout {
  int64_t S, B, D, I, H;
  bool batch_first;
  int64_t X(int64_t t, int64_t b) const { return (batch_first ? b * S + t : t * B + b) * I; }
  int64_t Y(int64_t t, int64_t d, int64_t b) const {
    return (batch_first ? (b * S + t) * D + d : (t * D + d) * B + b) * H;
  }
  int64_t State(int64_t d, int64_t b) const { return (batch_first ? b * D + d : d * B + b) * H; }
};

template <typename T>
class RecurrentGrad : public Kernel {
 public:
  RecurrentGrad(const KernelInfo& info, Cell cell) : cell_(cell) {
    const Node& n = info.node;
    hidden_ = n.attr_int("hidden_size", 0);
    layout_ = n.attr_int("layout", 0);
    direction_ = n.attr_string("direction", "forward");
    lbr_ = n.attr_int("linear_before_reset", 0) != 0;
  }

  absl::Status Compute(KernelContext& ctx) override {
    const bool lstm = cell_ == Cell::kLstm;
    const int gates = lstm ? 4 : 3;
    // Input slots: X W R B h0 [c0] dY dY_h [dY_c].
    const int kH0 = 4, kC0 = 5, kDy = lstm ? 6 : 5, kDyh = kDy + 1, kDyc = kDy + 2;
    const Tensor *x = ctx.input(0), *w = ctx.input(1), *r = ctx.input(2);
    if (!x || !w || !r || x->rank() != 3 || w->rank() != 3 || r->rank() != 3)
      return absl::InvalidArgumentError("X, W and R must be rank-3 tensors");
    Layout L;
    L.batch_first = layout_ == 1;
    L.S = x->dim(L.batch_first ? 1 : 0);
    L.B = x->dim(L.batch_first ? 0 : 1);
    L.I = x->dim(2);
    L.D = w->dim(0);
    L.H = hidden_;
    const int64_t S = L.S, B = L.B, I = L.I, H = L.H, D = L.D, G = gates * H;
    if (H <= 0 || w->dims() != Dims{D, G, I} || r->dims() != Dims{D, G, H} ||
        D != (direction_ == "bidirectional" ? 2 : 1))
      return absl::InvalidArgumentError("W " + DimsToString(w->dims()) + " / R " + DimsToString(r->dims()) +
                                        " do not match hidden_size " + std::to_string(H) + " and direction " +
                                        direction_);
    auto optional = [&](int i, Dims want, const char* what) -> absl::StatusOr<const T*> {
      const Tensor* t = ctx.input(i);
      if (!t) return nullptr;
      if (t->dims() != want)
        return absl::InvalidArgumentError(std::string(what) + " has shape " + DimsToString(t->dims()) +
                                          ", expected " + DimsToString(want));
      return t->data<T>();
    };
    const Dims state_dims = L.batch_first ? Dims{B, D, H} : Dims{D, B, H};
    const Dims y_dims = L.batch_first ? Dims{B, S, D, H} : Dims{S, D, B, H};
    auto bias = optional(3, {D, 2 * G}, "B");
    auto h0 = optional(kH0, state_dims, "initial_h");
    auto c0 = lstm ? optional(kC0, state_dims, "initial_c") : absl::StatusOr<const T*>(nullptr);
    auto dy = optional(kDy, y_dims, "dY");
    auto dyh = optional(kDyh, state_dims, "dY_h");
    auto dyc = lstm ? optional(kDyc, state_dims, "dY_c") : absl::StatusOr<const T*>(nullptr);
    for (const auto* s : {&bias, &h0, &c0, &dy, &dyh, &dyc})
      if (!s->ok()) return s->status();

    auto out = [&](int i, Dims dims) -> T* {
      if (!ctx.output_wanted(i)) return nullptr;
      Tensor& t = ctx.AllocateOutput(i, x->dtype(), dims);
      std::fill(t.data<T>(), t.data<T>() + t.numel(), T(0));
      return t.data<T>();
    };
    T* dx = out(0, x->dims());
    T* dw = out(1, w->dims());
    T* dr = out(2, r->dims());
    T* db = out(3, {D, 2 * G});
    T* dh0 = out(4, state_dims);
    T* dc0 = lstm ? out(5, state_dims) : nullptr;

    // Per direction: states h/c before each step ([S + 1][B][H]) and the gates after
    // their activations ([S][B][G]); GRU also keeps its candidate's recurrent term.
    std::vector<T> h((S + 1) * B * H), c(lstm ? (S + 1) * B * H : 0), act(S * B * G), hr(lstm ? 0 : S * B * H);
    std::vector<T> pre(B * G), da(B * G), dh(B * H), dh_next(B * H), dc_next(B * H);
    for (int64_t d = 0; d < D; ++d) {
      const bool reverse = direction_ == "reverse" || d == 1;
      auto time = [&](int64_t k) { return reverse ? S - 1 - k : k; };
      const T* Wd = w->data<T>() + d * G * I;
      const T* Rd = r->data<T>() + d * G * H;
      const T* Wb = *bias ? *bias + d * 2 * G : nullptr;
      const T* Rb = Wb ? Wb + G : nullptr;
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j) {
          h[b * H + j] = *h0 ? (*h0)[L.State(d, b) + j] : T(0);
          if (lstm) c[b * H + j] = *c0 ? (*c0)[L.State(d, b) + j] : T(0);
        }
      // Forward, keeping what backward needs.
      for (int64_t k = 0; k < S; ++k) {
        const int64_t t = time(k);
        const T* hp = h.data() + k * B * H;
        T* hn = h.data() + (k + 1) * B * H;
        T* a = act.data() + k * B * G;
        for (int64_t b = 0; b < B; ++b)
          for (int64_t g = 0; g < G; ++g) {
            T s = Wb ? Wb[g] : T(0);
            const T* xr = x->data<T>() + L.X(t, b);
            for (int64_t i = 0; i < I; ++i) s += xr[i] * Wd[g * I + i];
            pre[b * G + g] = s;
          }
        for (int64_t b = 0; b < B; ++b)
          for (int64_t g = 0; g < G; ++g) {
            if (!lstm && g >= 2 * H) continue;  // GRU's candidate: below
            T s = Rb ? Rb[g] : T(0);
            for (int64_t j = 0; j < H; ++j) s += hp[b * H + j] * Rd[g * H + j];
            pre[b * G + g] += s;
          }
        for (int64_t b = 0; b < B; ++b) {
          T* ab = a + b * G;
          if (lstm) {
            const T* cp = c.data() + k * B * H;
            T* cn = c.data() + (k + 1) * B * H;
            for (int64_t j = 0; j < H; ++j) {
              const T i_ = Sigmoid(pre[b * G + j]), o = Sigmoid(pre[b * G + H + j]),
                      f = Sigmoid(pre[b * G + 2 * H + j]), g = std::tanh(pre[b * G + 3 * H + j]);
              ab[j] = i_, ab[H + j] = o, ab[2 * H + j] = f, ab[3 * H + j] = g;
              cn[b * H + j] = f * cp[b * H + j] + i_ * g;
              hn[b * H + j] = o * std::tanh(cn[b * H + j]);
            }
          } else {
            for (int64_t j = 0; j < H; ++j) ab[j] = Sigmoid(pre[b * G + j]), ab[H + j] = Sigmoid(pre[b * G + H + j]);
            for (int64_t j = 0; j < H; ++j) {
              T rec = Rb ? Rb[2 * H + j] : T(0);  // R_h h + Rb_h (lbr), else R_h (r * h) + Rb_h
              for (int64_t m = 0; m < H; ++m)
                rec += (lbr_ ? hp[b * H + m] : ab[H + m] * hp[b * H + m]) * Rd[(2 * H + j) * H + m];
              hr[(k * B + b) * H + j] = rec;
              const T z = ab[j], n = std::tanh(pre[b * G + 2 * H + j] + (lbr_ ? ab[H + j] * rec : rec));
              ab[2 * H + j] = n;
              hn[b * H + j] = (T(1) - z) * n + z * hp[b * H + j];
            }
          }
        }
      }
      // Backward through time.
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j) {
          dh_next[b * H + j] = *dyh ? (*dyh)[L.State(d, b) + j] : T(0);
          dc_next[b * H + j] = *dyc ? (*dyc)[L.State(d, b) + j] : T(0);
        }
      for (int64_t k = S - 1; k >= 0; --k) {
        const int64_t t = time(k);
        const T* hp = h.data() + k * B * H;
        const T* a = act.data() + k * B * G;
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = 0; j < H; ++j)
            dh[b * H + j] = dh_next[b * H + j] + (*dy ? (*dy)[L.Y(t, d, b) + j] : T(0));
        std::fill(dh_next.begin(), dh_next.end(), T(0));
        for (int64_t b = 0; b < B; ++b) {
          const T* ab = a + b * G;
          T* dab = da.data() + b * G;
          for (int64_t j = 0; j < H; ++j) {
            const T g_dh = dh[b * H + j];
            if (lstm) {
              const T i_ = ab[j], o = ab[H + j], f = ab[2 * H + j], g = ab[3 * H + j];
              const T cn = c[((k + 1) * B + b) * H + j], cp = c[(k * B + b) * H + j];
              const T tc = std::tanh(cn);
              const T dcell = dc_next[b * H + j] + g_dh * o * (T(1) - tc * tc);
              dab[j] = dcell * g * i_ * (T(1) - i_);
              dab[H + j] = g_dh * tc * o * (T(1) - o);
              dab[2 * H + j] = dcell * cp * f * (T(1) - f);
              dab[3 * H + j] = dcell * i_ * (T(1) - g * g);
              dc_next[b * H + j] = dcell * f;
            } else {
              const T z = ab[j], rr = ab[H + j], n = ab[2 * H + j], rec = hr[(k * B + b) * H + j];
              const T dn = g_dh * (T(1) - z) * (T(1) - n * n);  // through the candidate's tanh
              dab[j] = g_dh * (hp[b * H + j] - n) * z * (T(1) - z);
              dab[2 * H + j] = dn;
              if (lbr_) dab[H + j] = dn * rec * rr * (T(1) - rr);
              dh_next[b * H + j] += g_dh * z;
            }
          }
          if (!lstm && !lbr_) {
            // a_h = x W_h + (r * h) R_h^T + ...: d(r * h)[m] = sum_j da_h[j] R_h[j, m].
            for (int64_t m = 0; m < H; ++m) {
              T drh = 0;
              for (int64_t j = 0; j < H; ++j) drh += dab[2 * H + j] * Rd[(2 * H + j) * H + m];
              const T rr = ab[H + m];
              dab[H + m] = drh * hp[b * H + m] * rr * (T(1) - rr);
              dh_next[b * H + m] += drh * rr;
            }
          }
        }
        // Parameter and input gradients of this step.
        const int64_t recurrent_gates = lstm ? G : 2 * H;  // GRU's h gate handled apart
        for (int64_t b = 0; b < B; ++b) {
          const T* dab = da.data() + b * G;
          const T* xr = x->data<T>() + L.X(t, b);
          for (int64_t g = 0; g < G; ++g) {
            const T v = dab[g];
            if (dw) for (int64_t i = 0; i < I; ++i) dw[(d * G + g) * I + i] += v * xr[i];
            if (db) db[d * 2 * G + g] += v;
            if (dx) for (int64_t i = 0; i < I; ++i) dx[L.X(t, b) + i] += v * Wd[g * I + i];
          }
          for (int64_t g = 0; g < recurrent_gates; ++g) {
            const T v = dab[g];
            if (dr) for (int64_t j = 0; j < H; ++j) dr[(d * G + g) * H + j] += v * hp[b * H + j];
            if (db) db[d * 2 * G + G + g] += v;
            for (int64_t j = 0; j < H; ++j) dh_next[b * H + j] += v * Rd[g * H + j];
          }
          if (!lstm) {
            // The candidate's recurrent term, R_h h scaled by r (lbr) or R_h (r * h).
            const T* ab = act.data() + (k * B + b) * G;
            for (int64_t j = 0; j < H; ++j) {
              const T drec = lbr_ ? dab[2 * H + j] * ab[H + j] : dab[2 * H + j];
              if (db) db[d * 2 * G + G + 2 * H + j] += drec;
              for (int64_t m = 0; m < H; ++m) {
                if (dr) dr[(d * G + 2 * H + j) * H + m] += drec * (lbr_ ? hp[b * H + m] : ab[H + m] * hp[b * H + m]);
                if (lbr_) dh_next[b * H + m] += drec * Rd[(2 * H + j) * H + m];
              }
            }
          }
        }
      }
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j) {
          if (dh0) dh0[L.State(d, b) + j] = dh_next[b * H + j];
          if (dc0) dc0[L.State(d, b) + j] = dc_next[b * H + j];
        }
    }
    return absl::OkStatus();
  }

 private:
  Cell cell_;
  int64_t hidden_ = 0, layout_ = 0;
  std::string direction_;
  bool lbr_ = false;
};

template <Cell kCell>
KernelFactory MakeRecurrentGrad() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    if (info.input_types.empty() || info.input_types[0] == DataType::kFloat)
      return std::unique_ptr<Kernel>(new RecurrentGrad<float>(info, kCell));
    return std::unique_ptr<Kernel>(new RecurrentGrad<double>(info, kCell));
  };
}

}  // namespace

void RegisterRnnGradKernels(KernelRegistry& r) {
  const std::vector<DataType> t = {DataType::kFloat, DataType::kDouble};
  r.Add(TandemKernel("LSTMGrad", t, MakeRecurrentGrad<Cell::kLstm>()));
  r.Add(TandemKernel("GRUGrad", t, MakeRecurrentGrad<Cell::kGru>()));
}

}  // namespace tandem::cpu
