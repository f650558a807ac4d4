// Softmax, LogSoftmax and Hardmax. Before opset 13 the input is coerced to 2-D at `axis`
// (default 1); from 13 on they work along a single axis (default -1). float32 runs on the
// oneDNN softmax_v2 primitive (softmax_accurate / softmax_log), except a Softmax over an axis
// that is not the last, which runs a vector of columns at a time (microkernels/softmax_rows.h:
// oneDNN 2.6 has only its reference loop for it); other types use reference loops that
// compute in float (halves) or double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/microkernels/softmax_rows.h"

namespace tandem::cpu {
namespace {

enum class Mode { kSoftmax, kLogSoftmax, kHardmax };

template <typename T> struct Acc { using type = T; };
template <> struct Acc<Float16> { using type = float; };
template <> struct Acc<BFloat16> { using type = float; };

// Rows of `n` elements, `inner` apart, `outer` times: the reduction view of the input.
struct View {
  int64_t outer = 1, n = 1, inner = 1;
};

template <typename T>
void SoftmaxRef(const T* x, T* y, const View& v, Mode mode) {
  using A = typename Acc<T>::type;
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const int64_t base = o * v.n * v.inner + i;
      auto at = [&](int64_t k) { return base + k * v.inner; };
      A mx = static_cast<A>(x[at(0)]);
      int64_t arg = 0;
      for (int64_t k = 1; k < v.n; ++k) {
        A val = static_cast<A>(x[at(k)]);
        if (val > mx || (std::isnan(static_cast<double>(val)) && !std::isnan(static_cast<double>(mx)))) {
          mx = val;
          arg = k;
        }
      }
      if (mode == Mode::kHardmax) {
        for (int64_t k = 0; k < v.n; ++k) y[at(k)] = T(static_cast<float>(k == arg ? 1 : 0));
        continue;
      }
      A sum = 0;
      for (int64_t k = 0; k < v.n; ++k) sum += std::exp(static_cast<A>(x[at(k)]) - mx);
      if (mode == Mode::kLogSoftmax) {
        A lse = std::log(sum);
        for (int64_t k = 0; k < v.n; ++k) y[at(k)] = T(static_cast<A>(x[at(k)]) - mx - lse);
      } else {
        A inv = A(1) / sum;
        for (int64_t k = 0; k < v.n; ++k) y[at(k)] = T(std::exp(static_cast<A>(x[at(k)]) - mx) * inv);
      }
    }
  }
}

class Softmax : public Kernel {
 public:
  Softmax(const KernelInfo& info, Mode mode)
      : mode_(mode),
        opset_(info.opset),
        axis_(info.node.attr_int("axis", info.opset < 13 ? 1 : -1)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
    if (x.numel() == 0) return absl::OkStatus();
    const Dims dims = x.rank() == 0 ? Dims{1} : x.dims();
    const int rank = static_cast<int>(dims.size());
    auto axis = NormalizeAxis(axis_, rank);
    if (!axis.ok()) return axis.status();
    View v;
    v.outer = DimProduct(dims, 0, *axis);
    if (opset_ < 13) {
      v.n = DimProduct(dims, *axis, rank);
    } else {
      v.n = dims[*axis];
      v.inner = DimProduct(dims, *axis + 1, rank);
    }
    if (x.dtype() == DataType::kFloat && mode_ == Mode::kSoftmax && v.inner > 1) {
      RunColumns(x.data<float>(), y.data<float>(), v);
      return absl::OkStatus();
    }
    if (x.dtype() == DataType::kFloat && mode_ != Mode::kHardmax) return RunDnnl(x, y, v);
    bool ok = false;
    switch (x.dtype()) {
      case DataType::kFloat: SoftmaxRef(x.data<float>(), y.data<float>(), v, mode_); ok = true; break;
      case DataType::kDouble: SoftmaxRef(x.data<double>(), y.data<double>(), v, mode_); ok = true; break;
      case DataType::kFloat16: SoftmaxRef(x.data<Float16>(), y.data<Float16>(), v, mode_); ok = true; break;
      case DataType::kBfloat16: SoftmaxRef(x.data<BFloat16>(), y.data<BFloat16>(), v, mode_); ok = true; break;
      default: break;
    }
    if (!ok)
      return absl::InvalidArgumentError(std::string("unsupported element type ") +
                                        DataTypeName(x.dtype()));
    return absl::OkStatus();
  }

 private:
  // Softmax over the middle axis of [outer, n, inner]: tasks of 256 columns of one outer slice.
  static void RunColumns(const float* x, float* y, const View& v) {
    constexpr int64_t kColumns = 256;
    const softmax_rows::Kernels& kernels = softmax_rows::Builds().best();
    const int64_t blocks = (v.inner + kColumns - 1) / kColumns;
    ParallelForIf(v.outer * v.n * v.inner >= (int64_t{1} << 15) && v.outer * blocks > 1, v.outer * blocks,
                  [&](int64_t task) {
                    const int64_t o = task / blocks, c0 = task % blocks * kColumns;
                    kernels.column_softmax(x + o * v.n * v.inner, y + o * v.n * v.inner, v.n, v.inner, c0,
                                           std::min(v.inner, c0 + kColumns));
                  });
  }

  struct Entry {
    dnnl::softmax_v2_forward prim;
    dnnl::memory::desc md;
  };

  absl::Status RunDnnl(const Tensor& x, Tensor& y, const View& v) {
    try {
      Entry& e = cache_.Get({{v.outer, v.n, v.inner}}, [&] {
        Entry n;
        n.md = PlainDesc({v.outer, v.n, v.inner}, dnnl::memory::data_type::f32);
        auto alg = mode_ == Mode::kLogSoftmax ? dnnl::algorithm::softmax_log
                                              : dnnl::algorithm::softmax_accurate;
        dnnl::softmax_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg, n.md, n.md, 1);
        n.prim = dnnl::softmax_v2_forward(
            dnnl::softmax_v2_forward::primitive_desc(d, DnnlEngine()));
        return n;
      });
      e.prim.execute(DnnlStream(), {{DNNL_ARG_SRC, WrapTensor(x, e.md)},
                                    {DNNL_ARG_DST, WrapTensor(y, e.md)}});
      DnnlStream().wait();
    } catch (const dnnl::error& err) {
      return absl::InternalError(std::string("oneDNN softmax failed: ") + err.what());
    }
    return absl::OkStatus();
  }

  Mode mode_;
  int opset_;
  int64_t axis_;
  ShapeCache<Entry> cache_;
};

template <Mode M>
KernelFactory MakeSoftmax() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new Softmax(info, M));
  };
}

}  // namespace

void RegisterSoftmaxKernels(KernelRegistry& r) {
  // Opsets 1-12 share the coerce-to-2D semantics; 13 switched to a single axis.
  r.Add("Softmax", 1, 12, types::kFloats, MakeSoftmax<Mode::kSoftmax>());
  r.Add("Softmax", 13, kMaxOpset, types::kFloats, MakeSoftmax<Mode::kSoftmax>());
  r.Add("LogSoftmax", 1, 12, types::kFloats, MakeSoftmax<Mode::kLogSoftmax>());
  r.Add("LogSoftmax", 13, kMaxOpset, types::kFloats, MakeSoftmax<Mode::kLogSoftmax>());
  r.Add("Hardmax", 1, 12, types::kFloats, MakeSoftmax<Mode::kHardmax>());
  r.Add("Hardmax", 13, kMaxOpset, types::kFloats, MakeSoftmax<Mode::kHardmax>());
}

}  // namespace tandem::cpu
