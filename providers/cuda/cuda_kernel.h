// Helpers shared by the CUDA kernel classes (host side).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/kernel_registry.h"
#include "providers/cuda/cuda_check.h"
#include "providers/cuda/cuda_provider.h"
#include "providers/cuda/kernels/launch.h"

namespace tandem::cuda {

constexpr int kMaxOpset = 1 << 30;

inline CudaProvider& ProviderOf(const KernelInfo& info) { return *static_cast<CudaProvider*>(info.provider); }

// Allocates output i on the device; out of memory becomes a status saying how much was
// asked and how much is free.
absl::StatusOr<Tensor*> Output(KernelContext& ctx, int i, DataType dtype, Dims dims);
// A scratch tensor from the kernel's device allocator, with the same out-of-memory status.
absl::StatusOr<Tensor> Scratch(KernelContext& ctx, DataType dtype, Dims dims);

// A float32 kernel of `domain` (""/ai.tandem) for opsets since..until.
KernelDef FloatKernel(const std::string& domain, const std::string& op, int since, int until,
                      KernelFactory create);

// Numpy broadcasting of a and b: the output dims and each operand's strides into it.
absl::StatusOr<StridedIndex> Broadcast(const Dims& a, const Dims& b);
// x's strides (0 where x has 1 and out has more) right-aligned onto out_dims.
absl::StatusOr<StridedIndex> BroadcastTo(const Dims& x, const Dims& out_dims);

// Integers of a host tensor (shape vectors, axes); error when it is not int32/int64.
absl::StatusOr<std::vector<int64_t>> HostInts(const Tensor* t, const char* what);

// The elementwise op of a fused node's `activation` attribute (FusedGemm, FusedMatMul,
// FusedConv) that the GPU applies after the product: Relu, Tanh, Sigmoid, LeakyRelu (slope
// activation_alpha), Clip (bounds activation_alpha, activation_beta); nullopt for none or
// one the CPU must run (CudaKernelAccepts).
std::optional<UnaryOp> FusedActivationOp(const std::string& activation);

// Enqueues LaunchReduceSum with its scratch (reduce_ops.cc).
absl::Status EnqueueReduceSum(KernelContext& ctx, const float* x, float* y, const ReduceGeometry& g, float scale,
                              cudaStream_t stream);

// y (dims [N, M, ...]) += b broadcast along the channels (one launch): a convolution's
// bias where cuDNN does not add it.
absl::Status AddChannelBias(const float* b, Tensor& y, cudaStream_t stream);

// InvalidArgument naming both shapes unless dY and X (a gradient and its forward input)
// have the same dims.
absl::Status RequireSameShape(const Tensor& dy, const Tensor& x);

// Fails unless every given input is float32 (the CUDA kernels' type for now).
absl::Status RequireFloat(const KernelContext& ctx, std::initializer_list<int> inputs);

}  // namespace tandem::cuda
