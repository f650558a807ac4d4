// ai.tandem GeluGrad(dY, X) -> dX = dY * Gelu'(X) (training/rules/elementwise.cc), attribute
// approximate "none" (erf) or "tanh", as Gelu's:
//   erf:   Gelu'(x) = Phi(x) + x phi(x)
//   tanh:  Gelu'(x) = (1 + t)/2 + x/2 (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2),
//          t = tanh(sqrt(2/pi) (x + 0.044715 x^3))
// float32 in one pass through oneDNN's eltwise backward (gelu_erf / gelu_tanh on the
// source); double, float16, bfloat16 and tensors too small for a primitive in an element
// loop computing in double.
#include <cmath>
#include <type_traits>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/elementwise.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

double GeluSlope(double x, bool tanh_form) {
  if (tanh_form) {
    const double s = 0.7978845608028654, a = 0.044715;
    const double t = std::tanh(s * (x + a * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * s * (1 + 3 * a * x * x);
  }
  return 0.5 * (1 + std::erf(x * 0.7071067811865476)) + x * 0.3989422804014327 * std::exp(-0.5 * x * x);
}

class GeluGrad : public Kernel {
 public:
  explicit GeluGrad(const KernelInfo& info) : tanh_form_(info.node.attr_string("approximate", "none") == "tanh") {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& dy = *ctx.input(0);
    const Tensor& x = *ctx.input(1);
    if (dy.dims() != x.dims() || dy.dtype() != x.dtype())
      return absl::InvalidArgumentError("dY " + DimsToString(dy.dims()) + " and X " + DimsToString(x.dims()) +
                                        " differ in shape or element type");
    Tensor& dx = ctx.AllocateOutput(0, x.dtype(), x.dims());
    if (x.dtype() == DataType::kFloat && RunDnnl(dy, x, dx)) return absl::OkStatus();
    return VisitFloatLike(x.dtype(), "X", [&](auto zero) {
      using T = decltype(zero);
      const T *g = dy.data<T>(), *v = x.data<T>();
      T* out = dx.data<T>();
      auto wide = [](T e) {
        if constexpr (std::is_same_v<T, double>) return e;
        else return static_cast<double>(static_cast<float>(e));
      };
      ParallelBlocks(x.numel(), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = FromCompute<T>(wide(g[i]) * GeluSlope(wide(v[i]), tanh_form_));
      });
      return absl::OkStatus();
    });
  }

 private:
  // dx = dy * Gelu'(x) by oneDNN; false when it declines (or the tensor is small).
  bool RunDnnl(const Tensor& dy, const Tensor& x, Tensor& dx) {
    const int64_t n = x.numel();
    if (n < kDnnlMinEltwiseElements) return false;
    const auto alg = tanh_form_ ? dnnl::algorithm::eltwise_gelu_tanh : dnnl::algorithm::eltwise_gelu_erf;
    try {
      auto& e = cache_.Get({{n}}, [&] {
        auto md = PlainDesc({n}, dnnl::memory::data_type::f32);
        dnnl::eltwise_forward::primitive_desc hint(
            dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, alg, md, 0.f, 0.f), DnnlEngine());
        dnnl::eltwise_backward::primitive_desc pd(dnnl::eltwise_backward::desc(alg, md, md, 0.f, 0.f), DnnlEngine(),
                                                  hint);
        return Entry{md, dnnl::eltwise_backward(pd)};
      });
      e.prim.execute(DnnlStream(), {{DNNL_ARG_SRC, WrapTensor(x, e.md)},
                                    {DNNL_ARG_DIFF_DST, WrapTensor(dy, e.md)},
                                    {DNNL_ARG_DIFF_SRC, WrapTensor(dx, e.md)}});
      DnnlStream().wait();
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }

  struct Entry {
    dnnl::memory::desc md;
    dnnl::eltwise_backward prim;
  };
  bool tanh_form_;
  ShapeCache<Entry> cache_;
};

}  // namespace

void RegisterGeluGradKernels(KernelRegistry& r) {
  r.Add(TandemKernel("GeluGrad", types::kFloats, Make<GeluGrad>()));
}

}  // namespace tandem::cpu
