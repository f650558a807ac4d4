// Loss kernels: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12+).
// Reference C++ for all float types; accumulation in double, log-softmax computed
// stably (max subtracted). Inputs are [N, C, d1, ..., dk], targets [N, d1, ..., dk].
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

enum class Reduction { kNone, kSum, kMean };

// Reads a float tensor of any float dtype as doubles.
std::vector<double> ReadDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  VisitNumericType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) {
      if constexpr (std::is_same_v<T, double>) v[i] = p[i];
      else v[i] = static_cast<double>(static_cast<float>(p[i]));
    }
  });
  return v;
}

// Writes doubles into a tensor of float dtype.
void WriteDoubles(const std::vector<double>& v, Tensor& t) {
  VisitNumericType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) {
      if constexpr (std::is_same_v<T, double>) p[i] = v[i];
      else p[i] = T(static_cast<float>(v[i]));
    }
  });
}

// Shared by both losses: NLL over log-probabilities `logp` laid out [N, C, D].
class LossBase : public Kernel {
 public:
  explicit LossBase(const KernelInfo& info) {
    std::string r = info.node.attr_string("reduction", "mean");
    if (r == "none") reduction_ = Reduction::kNone;
    else if (r == "sum") reduction_ = Reduction::kSum;
    else if (r == "mean") reduction_ = Reduction::kMean;
    else bad_reduction_ = r;
    has_ignore_ = info.node.has_attr("ignore_index");
    ignore_index_ = info.node.attr_int("ignore_index", 0);
  }

 protected:
  absl::Status CheckCommon(const Tensor& x, const Tensor& target, const Tensor* weight) const {
    if (!bad_reduction_.empty())
      return absl::InvalidArgumentError("attribute 'reduction' must be none, sum or mean, got '" +
                                        bad_reduction_ + "'");
    if (x.rank() < 2)
      return absl::InvalidArgumentError("input 0 must have rank >= 2 ([N, C, ...]), got " +
                                        DimsToString(x.dims()));
    if (target.rank() != x.rank() - 1)
      return absl::InvalidArgumentError("target shape " + DimsToString(target.dims()) +
                                        " does not match input shape " +
                                        DimsToString(x.dims()));
    for (int i = 0; i < target.rank(); ++i) {
      int64_t want = i == 0 ? x.dim(0) : x.dim(i + 1);
      if (target.dim(i) != want)
        return absl::InvalidArgumentError("target shape " + DimsToString(target.dims()) +
                                          " does not match input shape " +
                                          DimsToString(x.dims()));
    }
    if (target.dtype() != DataType::kInt32 && target.dtype() != DataType::kInt64)
      return absl::InvalidArgumentError("target must be int32 or int64");
    if (weight && (weight->rank() != 1 || weight->dim(0) != x.dim(1)))
      return absl::InvalidArgumentError("weight must have shape [C] = [" +
                                        std::to_string(x.dim(1)) + "], got " +
                                        DimsToString(weight->dims()));
    if (weight && weight->dtype() != x.dtype())
      return absl::InvalidArgumentError("weight must have the input's element type");
    return absl::OkStatus();
  }

  // Computes the loss from log-probabilities (already negated sign convention:
  // loss = -logp[target] * w) and allocates output 0.
  absl::Status Reduce(KernelContext& ctx, const std::vector<double>& logp, const Dims& xdims,
                      const Tensor& target, const Tensor* weight, DataType dtype) const {
    const int64_t n = xdims[0], c = xdims[1];
    const int64_t d = DimProduct(xdims, 2, static_cast<int>(xdims.size()));
    std::vector<int64_t> tgt = target.ToInt64Vector();
    std::vector<double> w;
    if (weight) w = ReadDoubles(*weight);
    std::vector<double> loss(static_cast<size_t>(n * d), 0.0);
    double loss_sum = 0, weight_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < d; ++j) {
        int64_t t = tgt[i * d + j];
        double l = 0, wt = 0;
        if (!(has_ignore_ && t == ignore_index_)) {
          if (t < 0 || t >= c)
            return absl::InvalidArgumentError("target value " + std::to_string(t) +
                                              " is out of range [0, " + std::to_string(c) + ")");
          wt = weight ? w[t] : 1.0;
          l = -logp[(i * c + t) * d + j] * wt;
        }
        loss[i * d + j] = l;
        loss_sum += l;
        weight_sum += wt;
      }
    }
    if (reduction_ == Reduction::kNone) {
      Tensor& out = ctx.AllocateOutput(0, dtype, target.dims());
      WriteDoubles(loss, out);
      return absl::OkStatus();
    }
    double v = loss_sum;
    if (reduction_ == Reduction::kMean) {
      // numpy reference: without weights and ignore_index, a plain mean over all.
      double denom = (weight || has_ignore_) ? weight_sum : static_cast<double>(n * d);
      v = loss_sum / denom;
    }
    Tensor& out = ctx.AllocateOutput(0, dtype, {});
    WriteDoubles({v}, out);
    return absl::OkStatus();
  }

  Reduction reduction_ = Reduction::kMean;
  std::string bad_reduction_;
  bool has_ignore_ = false;
  int64_t ignore_index_ = 0;
};

class NllLoss : public LossBase {
 public:
  using LossBase::LossBase;
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor* target = ctx.input(1);
    if (!target) return absl::InvalidArgumentError("missing input 1 (target)");
    const Tensor* weight = ctx.input(2);
    if (auto s = CheckCommon(x, *target, weight); !s.ok()) return s;
    return Reduce(ctx, ReadDoubles(x), x.dims(), *target, weight, x.dtype());
  }
};

class SoftmaxCrossEntropy : public LossBase {
 public:
  using LossBase::LossBase;
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor* target = ctx.input(1);
    if (!target) return absl::InvalidArgumentError("missing input 1 (labels)");
    const Tensor* weight = ctx.input(2);
    if (auto s = CheckCommon(x, *target, weight); !s.ok()) return s;
    const int64_t n = x.dim(0), c = x.dim(1), d = DimProduct(x.dims(), 2, x.rank());
    std::vector<double> logp = ReadDoubles(x);
    // Log-softmax over axis 1, stable.
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < d; ++j) {
        double* base = logp.data() + i * c * d + j;
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < c; ++k) mx = std::max(mx, base[k * d]);
        double s = 0;
        for (int64_t k = 0; k < c; ++k) s += std::exp(base[k * d] - mx);
        double lse = mx + std::log(s);
        for (int64_t k = 0; k < c; ++k) base[k * d] -= lse;
      }
    }
    if (auto s = Reduce(ctx, logp, x.dims(), *target, weight, x.dtype()); !s.ok()) return s;
    if (ctx.output_wanted(1)) {
      Tensor& lp = ctx.AllocateOutput(1, x.dtype(), x.dims());
      WriteDoubles(logp, lp);
    }
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterLossKernels(KernelRegistry& r) {
  r.Add("NegativeLogLikelihoodLoss", 12, kMaxOpset, types::kFloats, Make<NllLoss>());
  r.Add("SoftmaxCrossEntropyLoss", 12, kMaxOpset, types::kFloats, Make<SoftmaxCrossEntropy>());
}

}  // namespace tandem::cpu
