// Variadic elementwise kernels: Sum, Mean, Max and Min over 1..N inputs with numpy
// broadcasting. Inputs are folded pairwise into the output; float32 Sum/Mean steps use
// the oneDNN binary primitive when shapes allow.
#include <cmath>

#include "providers/cpu/kernels/elementwise.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

enum class Fold { kSum, kMean, kMax, kMin };

template <typename C>
C Apply(Fold f, C a, C b) {
  switch (f) {
    case Fold::kSum:
    case Fold::kMean:
      return static_cast<C>(a + b);
    case Fold::kMax:
      if constexpr (std::is_floating_point_v<C>) {
        if (a != a) return a;  // NaN propagates like numpy.maximum
        if (b != b) return b;
      }
      return a > b ? a : b;
    case Fold::kMin:
      if constexpr (std::is_floating_point_v<C>) {
        if (a != a) return a;
        if (b != b) return b;
      }
      return a < b ? a : b;
  }
  return a;
}

class Variadic : public Kernel {
 public:
  explicit Variadic(const KernelInfo& info) {
    const std::string& op = info.node.op_type;
    fold_ = op == "Sum" ? Fold::kSum : op == "Mean" ? Fold::kMean : op == "Max" ? Fold::kMax
                                                                                : Fold::kMin;
  }

  absl::Status Compute(KernelContext& ctx) override {
    std::vector<const Tensor*> ins;
    std::vector<Dims> shapes;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      if (!t) return absl::InvalidArgumentError("input " + std::to_string(i) + " is missing");
      if (!ins.empty() && t->dtype() != ins[0]->dtype())
        return absl::InvalidArgumentError("input " + std::to_string(i) + " has element type " +
                                          DataTypeName(t->dtype()) + " but input 0 has " +
                                          DataTypeName(ins[0]->dtype()));
      ins.push_back(t);
      shapes.push_back(t->dims());
    }
    if (ins.empty()) return absl::InvalidArgumentError("expects at least one input");
    auto out_dims = BroadcastShapes(shapes);
    if (!out_dims.ok()) return out_dims.status();
    const DataType dt = ins[0]->dtype();
    Tensor& out = ctx.AllocateOutput(0, dt, *out_dims);
    if (out.numel() == 0) return absl::OkStatus();

    bool done = false;
    VisitNumericType(dt, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kIsFloatLike<T> || kIsInt<T>) {
        using C = ComputeT<T>;
        auto f = [this](C a, C b) { return Apply(fold_, a, b); };
        if (ins.size() == 1) {
          BroadcastBinary<T, T, T>(*ins[0], ins[0]->dims(), *ins[0], ins[0]->dims(), out,
                                   [](C a, C) { return a; });
        } else {
          // out = in0 op in1, then out = out op in_i.
          if (!Step(dt, *ins[0], *ins[1], out))
            BroadcastBinary<T, T, T>(*ins[0], ins[0]->dims(), *ins[1], ins[1]->dims(), out, f);
          for (size_t i = 2; i < ins.size(); ++i)
            if (!Step(dt, out, *ins[i], out))
              BroadcastBinary<T, T, T>(out, out.dims(), *ins[i], ins[i]->dims(), out, f);
        }
        if (fold_ == Fold::kMean) {
          T* p = out.data<T>();
          const C scale = C(1) / static_cast<C>(ins.size());
          ParallelFor(out.numel(), [&](int64_t i) {
            if constexpr (kIsInt<T>) p[i] = static_cast<T>(p[i] / static_cast<T>(ins.size()));
            else p[i] = FromCompute<T>(static_cast<C>(p[i]) * scale);
          });
        }
        done = true;
      }
    });
    return done ? absl::OkStatus()
                : absl::InvalidArgumentError(std::string("element type ") + DataTypeName(dt) +
                                             " is not supported");
  }

 private:
  // One float32 Sum/Mean fold step through oneDNN; false when not applicable. Max/Min
  // stay on the reference path: oneDNN's binary_max/min do not propagate NaN.
  bool Step(DataType dt, const Tensor& a, const Tensor& b, Tensor& out) {
    if (dt != DataType::kFloat || fold_ == Fold::kMax || fold_ == Fold::kMin) return false;
    const dnnl::algorithm alg = dnnl::algorithm::binary_add;
    if (dnnl_.Run(alg, a, b.dims(), b, out)) return true;
    // Commutative: try with the operands swapped (not in place: out must not alias b).
    return &a != &out && dnnl_.Run(alg, b, a.dims(), a, out);
  }

  Fold fold_;
  DnnlBinary dnnl_;
};

}  // namespace

void RegisterVariadicKernels(KernelRegistry& r) {
  using namespace types;
  const int M = kMaxOpset;
  // Opset 8 introduced broadcasting; earlier versions required equal shapes (a subset).
  r.Add("Sum", 1, M, kFloats, Make<Variadic>());
  r.Add("Mean", 1, M, kFloats, Make<Variadic>());
  r.Add("Max", 1, 11, kFloats, Make<Variadic>());
  r.Add("Max", 12, M, kNumeric, Make<Variadic>());
  r.Add("Min", 1, 11, kFloats, Make<Variadic>());
  r.Add("Min", 12, M, kNumeric, Make<Variadic>());
}

}  // namespace tandem::cpu
