// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool and the ai.tandem gradients
// MaxPoolGrad, AveragePoolGrad, GlobalAveragePoolGrad (formulas and attributes as in
// providers/cpu/kernels/nn/pool.cc and pool_grad.cc) on cuDNN pooling, float32. A gradient
// gets X (not Y), so it pools X again into scratch first: cuDNN's backward reads both.
// relu_mask = 1 (the ReluGrad fusion) zeroes dX where X <= 0. MaxPool's Indices output,
// dilations, asymmetric padding and ceil-mode windows beyond cuDNN's floor are declined
// at placement (CudnnPoolAccepts) and run on the CPU.
#include <map>
#include <memory>
#include <vector>

#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/cudnn_pool.h"
#include "providers/cuda/kernels/register.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // cuDNN 9's legacy API (conv_ops.cc)

namespace tandem::cuda {

CudnnPool::~CudnnPool() {
  for (auto* t : {x_, y_}) if (t) cudnnDestroyTensorDescriptor(t);
  if (pool_) cudnnDestroyPoolingDescriptor(pool_);
}

absl::Status CudnnPool::Build(const CudnnPoolShape& s, cudnnPoolingMode_t mode) {
  const int rank = static_cast<int>(s.x_dims.size());
  TANDEM_CUDA_RETURN(cudnnCreateTensorDescriptor(&x_));
  TANDEM_CUDA_RETURN(cudnnCreateTensorDescriptor(&y_));
  TANDEM_CUDA_RETURN(cudnnCreatePoolingDescriptor(&pool_));
  TANDEM_CUDA_RETURN(cudnnSetTensorNdDescriptor(x_, CUDNN_DATA_FLOAT, rank, s.x_dims.data(), s.x_strides.data()));
  TANDEM_CUDA_RETURN(cudnnSetTensorNdDescriptor(y_, CUDNN_DATA_FLOAT, rank, s.y_dims.data(), s.y_strides.data()));
  TANDEM_CUDA_RETURN(cudnnSetPoolingNdDescriptor(pool_, mode, CUDNN_PROPAGATE_NAN, rank - 2, s.window.data(),
                                                 s.pads.data(), s.strides.data()));
  std::vector<int> out(rank);
  TANDEM_CUDA_RETURN(cudnnGetPoolingNdForwardOutputDim(pool_, x_, rank, out.data()));
  if (out != s.y_dims) return absl::InternalError("cuDNN computes another output shape for this pooling");
  return absl::OkStatus();
}

absl::Status CudnnPool::Forward(cudnnHandle_t handle, const float* x, float* y) const {
  const float one = 1.f, zero = 0.f;
  TANDEM_CUDA_RETURN(cudnnPoolingForward(handle, pool_, &one, x_, x, &zero, y_, y));
  return absl::OkStatus();
}

absl::Status CudnnPool::Backward(cudnnHandle_t handle, const float* x, const float* y, const float* dy,
                                 float* dx) const {
  const float one = 1.f, zero = 0.f;
  TANDEM_CUDA_RETURN(cudnnPoolingBackward(handle, pool_, &one, y_, y, y_, dy, x_, x, &zero, x_, dx));
  return absl::OkStatus();
}

namespace {

enum class PoolKind { kMax, kAverage, kGlobalAverage, kGlobalMax };

bool IsGlobal(PoolKind k) { return k == PoolKind::kGlobalAverage || k == PoolKind::kGlobalMax; }

// The window over X's spatial dims `in`: the node's attributes, or all of it for the
// global pools.
absl::StatusOr<WindowGeometry> PoolWindow(const Node& node, PoolKind kind, const Dims& in) {
  if (!IsGlobal(kind)) return ComputeWindowGeometry(node, in, node.attr_ints("kernel_shape", {}), true);
  WindowGeometry g;
  g.kernel.assign(in.begin(), in.end());
  g.strides.assign(in.size(), 1);
  g.dilations.assign(in.size(), 1);
  g.pads_begin.assign(in.size(), 0);
  g.pads_end.assign(in.size(), 0);
  g.out.assign(in.size(), 1);
  return g;
}

cudnnPoolingMode_t ModeOf(const Node& node, PoolKind kind) {
  if (kind == PoolKind::kMax || kind == PoolKind::kGlobalMax) return MaxPoolMode();
  return AveragePoolMode(kind == PoolKind::kAverage && node.attr_int("count_include_pad", 0) != 0);
}

// Pools of one node, one per input shape.
class PoolCache {
 public:
  PoolCache(const Node& node, PoolKind kind) : node_(node), kind_(kind) {}
  // The pool for input dims x (null when x or the output is empty: cuDNN refuses zero
  // dims, and there is nothing to pool), and its shape.
  absl::StatusOr<std::pair<const CudnnPool*, CudnnPoolShape>> For(const Dims& x) {
    if (x.size() < 3) return absl::InvalidArgumentError("pooling needs X [N, C, spatial...], got " + DimsToString(x));
    auto g = PoolWindow(node_, kind_, Dims(x.begin() + 2, x.end()));
    if (!g.ok()) return g.status();
    auto shape = CudnnPoolShapeOf(x, *g);
    if (!shape.ok()) return shape.status();
    if (NumElements(x) == 0 || NumElements(shape->onnx_y_dims) == 0)
      return std::make_pair(static_cast<const CudnnPool*>(nullptr), std::move(*shape));
    auto& pool = pools_[shape->Key()];
    if (!pool) {
      pool = std::make_unique<CudnnPool>();
      absl::Status s = pool->Build(*shape, ModeOf(node_, kind_));
      if (!s.ok()) {
        pool.reset();
        return s;
      }
    }
    return std::make_pair(static_cast<const CudnnPool*>(pool.get()), std::move(*shape));
  }

 private:
  const Node node_;
  PoolKind kind_;
  std::map<std::vector<int64_t>, std::unique_ptr<CudnnPool>> pools_;
};

class PoolKernel : public Kernel {
 public:
  PoolKernel(const KernelInfo& info, PoolKind kind) : prov_(ProviderOf(info)), cache_(info.node, kind) {}
  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    const Tensor& x = *ctx.input(0);
    auto pool = cache_.For(x.dims());
    if (!pool.ok()) return pool.status();
    auto y = Output(ctx, 0, DataType::kFloat, pool->second.onnx_y_dims);
    if (!y.ok()) return y.status();
    if (!pool->first) return absl::OkStatus();  // empty
    return pool->first->Forward(prov_.cudnn(), x.data<float>(), (*y)->data<float>());
  }

 private:
  CudaProvider& prov_;
  PoolCache cache_;
};

class PoolGradKernel : public Kernel {
 public:
  PoolGradKernel(const KernelInfo& info, PoolKind kind)
      : prov_(ProviderOf(info)), cache_(info.node, kind), relu_mask_(info.node.attr_int("relu_mask", 0) != 0) {}
  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0, 1});
    if (!s.ok()) return s;
    const Tensor& dy = *ctx.input(0);
    const Tensor& x = *ctx.input(1);
    auto pool = cache_.For(x.dims());
    if (!pool.ok()) return pool.status();
    if (dy.dims() != pool->second.onnx_y_dims)
      return absl::InvalidArgumentError("dY " + DimsToString(dy.dims()) + " is not the pool's output shape " +
                                        DimsToString(pool->second.onnx_y_dims));
    auto dx = Output(ctx, 0, DataType::kFloat, x.dims());
    if (!dx.ok()) return dx.status();
    if (!pool->first) {  // empty: no window reads X, so its gradient is 0
      TANDEM_CUDA_RETURN(LaunchFill((*dx)->data<float>(), x.numel(), 0.f, prov_.stream()));
      return absl::OkStatus();
    }
    auto y = Scratch(ctx, DataType::kFloat, dy.dims());  // the forward again: cuDNN reads Y
    if (!y.ok()) return y.status();
    s = pool->first->Forward(prov_.cudnn(), x.data<float>(), y->data<float>());
    if (!s.ok()) return s;
    float* dxd = (*dx)->data<float>();
    s = pool->first->Backward(prov_.cudnn(), x.data<float>(), y->data<float>(), dy.data<float>(), dxd);
    if (!s.ok()) return s;
    if (relu_mask_)  // ReluGrad(dX, X): dX where X > 0
      TANDEM_CUDA_RETURN(LaunchBinary(BinaryOp::kReluGrad, dxd, x.data<float>(), dxd, x.numel(), nullptr, 0.f,
                                      prov_.stream()));
    return absl::OkStatus();
  }

 private:
  CudaProvider& prov_;
  PoolCache cache_;
  bool relu_mask_;
};

template <typename K>
KernelFactory MakePool(PoolKind kind) {
  return [kind](const KernelInfo& info) -> std::unique_ptr<Kernel> { return std::make_unique<K>(info, kind); };
}

PoolKind KindOf(const std::string& op) {
  if (op.rfind("GlobalAveragePool", 0) == 0) return PoolKind::kGlobalAverage;
  if (op.rfind("GlobalMaxPool", 0) == 0) return PoolKind::kGlobalMax;
  if (op.rfind("AveragePool", 0) == 0) return PoolKind::kAverage;
  return PoolKind::kMax;
}

}  // namespace

bool CudnnPoolAccepts(const KernelInfo& info) {
  const Node& n = info.node;
  if (n.op_type == "MaxPool" && n.has_output(1)) return false;  // Indices: the CPU
  const PoolKind kind = KindOf(n.op_type);
  const size_t x_input = n.op_type.size() > 4 && n.op_type.substr(n.op_type.size() - 4) == "Grad" ? 1 : 0;
  const Shape* xs = x_input < info.input_shapes.size() ? &info.input_shapes[x_input] : nullptr;
  if (xs && xs->rank_known && (xs->dims.size() < 3 || xs->dims.size() > 5)) return false;
  if (xs && xs->fully_known()) {
    const Dims x = xs->ToDims();
    auto g = PoolWindow(n, kind, Dims(x.begin() + 2, x.end()));
    return g.ok() && CudnnPoolShapeOf(x, *g).ok();
  }
  if (IsGlobal(kind)) return true;
  // Unknown sizes: accept only what cannot go wrong at run time.
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  if (n.attr_int("ceil_mode", 0) != 0) return false;
  for (int64_t d : n.attr_ints("dilations", {}))
    if (d != 1) return false;
  const std::vector<int64_t> pads = n.attr_ints("pads", {});
  for (size_t i = 0; i < pads.size() / 2; ++i)
    if (pads[i] != pads[i + pads.size() / 2]) return false;
  return true;
}

void RegisterPoolKernels(KernelRegistry& r) {
  r.Add(FloatKernel("", "MaxPool", 1, kMaxOpset, MakePool<PoolKernel>(PoolKind::kMax)));
  r.Add(FloatKernel("", "AveragePool", 1, kMaxOpset, MakePool<PoolKernel>(PoolKind::kAverage)));
  r.Add(FloatKernel("", "GlobalAveragePool", 1, kMaxOpset, MakePool<PoolKernel>(PoolKind::kGlobalAverage)));
  r.Add(FloatKernel("", "GlobalMaxPool", 1, kMaxOpset, MakePool<PoolKernel>(PoolKind::kGlobalMax)));
  r.Add(FloatKernel("ai.tandem", "MaxPoolGrad", 1, kMaxOpset, MakePool<PoolGradKernel>(PoolKind::kMax)));
  r.Add(FloatKernel("ai.tandem", "AveragePoolGrad", 1, kMaxOpset, MakePool<PoolGradKernel>(PoolKind::kAverage)));
  r.Add(FloatKernel("ai.tandem", "GlobalAveragePoolGrad", 1, kMaxOpset,
                    MakePool<PoolGradKernel>(PoolKind::kGlobalAverage)));
}

}  // namespace tandem::cuda
