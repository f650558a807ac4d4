// One registration function per kernel file; cuda_provider.cc calls them all.
// Adding a kernel file: declare its function here and call it in RegisterAllCudaKernels.
#pragma once
#include "framework/kernel_registry.h"

namespace tandem::cuda {

void RegisterElementwiseKernels(KernelRegistry& r);  // elementwise_ops.cc: activations, Clip, arithmetic, grads
void RegisterReduceKernels(KernelRegistry& r);       // reduce_ops.cc: ReduceSum/Mean, SumToShape, MeanScale
void RegisterShapeKernels(KernelRegistry& r);        // shape_ops.cc: Reshape & co (aliases), Expand, Transpose
void RegisterMatMulKernels(KernelRegistry& r);       // matmul.cc: MatMul, Gemm, FusedGemm/FusedMatMul (cuBLASLt)
void RegisterOptimizerKernels(KernelRegistry& r);    // optimizer_ops.cc: SGD/Momentum/Adam(W)Update
void RegisterLossKernels(KernelRegistry& r);         // loss_ops.cc: ai.tandem MSELoss(+Grad)
void RegisterConvKernels(KernelRegistry& r);         // conv_ops.cc: Conv, FusedConv, ConvGrad (cuDNN)
void RegisterConvTransposeKernels(KernelRegistry& r);  // conv_transpose_ops.cc: ConvTranspose (cuDNN)
void RegisterPoolKernels(KernelRegistry& r);         // pool_ops.cc: Max/Average/Global pools and grads (cuDNN)
void RegisterClassLossKernels(KernelRegistry& r);    // class_loss_ops.cc: SoftmaxCrossEntropy/NLL losses, grads
void RegisterSoftmaxKernels(KernelRegistry& r);      // softmax_ops.cc: (Log)Softmax and grads (cuDNN)
void RegisterBatchNormKernels(KernelRegistry& r);    // batch_norm_ops.cc: BatchNormalization and grad (cuDNN)
void RegisterConcatKernels(KernelRegistry& r);       // concat_ops.cc: Concat, ConcatGrad (2-D memcpys)
void RegisterDropoutKernels(KernelRegistry& r);      // dropout_ops.cc: Dropout (opset 12+), DropoutGrad
void RegisterGatherKernels(KernelRegistry& r);       // gather_ops.cc: Gather (float data), GatherGrad
void RegisterSliceKernels(KernelRegistry& r);        // slice_ops.cc: Slice, SliceGrad
void RegisterPadKernels(KernelRegistry& r);          // pad_ops.cc: Pad (all modes)
void RegisterLayerNormKernels(KernelRegistry& r);    // layer_norm_ops.cc: LayerNormalization and grad
void RegisterTypedKernels(KernelRegistry& r);        // typed_ops.cc: Cast, comparisons, Not/And/Or/Xor, Where
void RegisterAllReduceKernels(KernelRegistry& r);    // all_reduce_ops.cc: data-parallel AllReduceStart/Wait (NCCL)

inline void RegisterAllCudaKernels(KernelRegistry& r) {
  RegisterElementwiseKernels(r);
  RegisterReduceKernels(r);
  RegisterShapeKernels(r);
  RegisterMatMulKernels(r);
  RegisterOptimizerKernels(r);
  RegisterLossKernels(r);
  RegisterConvKernels(r);
  RegisterConvTransposeKernels(r);
  RegisterPoolKernels(r);
  RegisterClassLossKernels(r);
  RegisterSoftmaxKernels(r);
  RegisterBatchNormKernels(r);
  RegisterConcatKernels(r);
  RegisterDropoutKernels(r);
  RegisterGatherKernels(r);
  RegisterSliceKernels(r);
  RegisterPadKernels(r);
  RegisterLayerNormKernels(r);
  RegisterTypedKernels(r);
  RegisterAllReduceKernels(r);
}

// Attribute variants and static shapes a registered kernel does not implement (the CPU
// runs those), decided at placement so no node placed on the GPU is refused at run time.
bool CudaKernelAccepts(const KernelInfo& info);
// matmul.cc's part of it: the fused activation (Relu, Tanh, Sigmoid, LeakyRelu, Clip) and, for
// MatMul, batch dims that are equal or absent on one side.
bool MatMulAccepts(const KernelInfo& info);
// conv_ops.cc's part: no fused pool, a GPU activation, symmetric padding (what cuDNN's
// convolution descriptor can say), 1-3 spatial dims.
bool CudnnConvAccepts(const KernelInfo& info);
// conv_transpose_ops.cc's part: static shapes, symmetric non-negative padding and an
// output size the equivalent convolution maps back onto the input.
bool ConvTransposeAccepts(const KernelInfo& info);
// pool_ops.cc's part: no Indices output, and windows cuDNN pooling computes (symmetric
// padding, no dilation, no ceil-mode window past its floor); unknown sizes only where
// none of that can happen.
bool CudnnPoolAccepts(const KernelInfo& info);
// typed_ops.cc: the ops IsTypedOp names take the element types of typed_launch.h (any
// of them, not only float32); TypedOpAccepts declines the others (float16, strings, ...).
bool IsTypedOp(const Node& n);
bool TypedOpAccepts(const KernelInfo& info);
// batch_norm_ops.cc: per-channel (spatial) statistics in the plain layout.
bool BatchNormAccepts(const KernelInfo& info);

}  // namespace tandem::cuda
