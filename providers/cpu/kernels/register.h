// One registration function per kernel file; cpu_provider.cc calls them all.
// Adding a kernel file: declare its function here and call it in RegisterAllCpuKernels.
#pragma once
#include "providers/kernel_registry.h"

namespace tandem::cpu {

// The open end of a kernel's opset range: the kernel implements every later version of its
// op up to the importer's kMaxSupportedOpset (onnx_import/import.h). After opset 21 most
// versions only admitted more element types (bfloat16 for some ops; float4/6/8 and int2/4,
// which no Tensor holds), and each kernel still accepts or refuses a dtype by its own
// list; where semantics changed (Mod's float rule and SpaceToDepth's mode at 28), the
// kernel follows the newest version, which agrees with the older ones.
inline constexpr int kMaxOpset = 1 << 30;

void RegisterUnaryKernels(KernelRegistry& r);        // unary.cc: activations, math
void RegisterBinaryKernels(KernelRegistry& r);       // binary.cc: arithmetic, compare, logic
void RegisterVariadicKernels(KernelRegistry& r);     // variadic.cc: Sum, Mean, Max, Min
void RegisterReduceKernels(KernelRegistry& r);       // reduce.cc: Reduce*, ArgMax/ArgMin
void RegisterSoftmaxKernels(KernelRegistry& r);      // softmax.cc
void RegisterAttentionKernels(KernelRegistry& r);    // attention.cc: Attention, FlexAttention
void RegisterTransformerKernels(KernelRegistry& r);  // transformer_ops.cc: RotaryEmbedding, SwiGLU, TensorScatter
void RegisterRecurrentStateKernels(KernelRegistry& r);  // recurrent_state_ops.cc: LinearAttention, CausalConvWithState
void RegisterMatMulKernels(KernelRegistry& r);       // matmul.cc: MatMul, Gemm
void RegisterConvKernels(KernelRegistry& r);         // conv.cc: Conv, ConvTranspose
void RegisterBlockedLayoutKernels(KernelRegistry& r);  // blocked_layout_ops.cc: FromBlocked
void RegisterPoolKernels(KernelRegistry& r);         // pool.cc
void RegisterNormKernels(KernelRegistry& r);         // norm.cc: BatchNorm, LRN, LayerNorm, ...
void RegisterConcatNormKernels(KernelRegistry& r);   // concat_norm_ops.cc: ConcatBatchNorm
void RegisterShapeKernels(KernelRegistry& r);        // shape_ops.cc: Reshape, Shape, ...
void RegisterCastKernels(KernelRegistry& r);         // cast_ops.cc: Cast, CastLike, BitCast
void RegisterSpatialKernels(KernelRegistry& r);      // spatial_ops.cc: Col2Im, AffineGrid
void RegisterLayoutKernels(KernelRegistry& r);       // layout_ops.cc: Transpose, Concat, Split, ...
void RegisterIndexKernels(KernelRegistry& r);        // index_ops.cc: Gather*, Scatter*, ...
void RegisterGeneratorKernels(KernelRegistry& r);    // generator_ops.cc: Constant, Range, ...
void RegisterMiscKernels(KernelRegistry& r);         // misc_ops.cc: TopK, CumSum, CumProd, Dropout, Unique, NMS, MaxUnpool, Det
void RegisterResizeKernels(KernelRegistry& r);       // resize.cc: Resize, Upsample, GridSample
void RegisterEinsumKernels(KernelRegistry& r);       // einsum.cc: Einsum
void RegisterLossKernels(KernelRegistry& r);         // loss.cc: NLLLoss, SoftmaxCrossEntropy
void RegisterRnnKernels(KernelRegistry& r);          // rnn.cc: RNN, GRU, LSTM
void RegisterControlFlowKernels(KernelRegistry& r);  // control_flow.cc: If, Loop, Scan
void RegisterSequenceKernels(KernelRegistry& r);     // sequence_ops.cc: Sequence*, Optional*
void RegisterTextKernels(KernelRegistry& r);         // text_ops.cc: StringNormalizer
void RegisterTrainingKernels(KernelRegistry& r);     // training_ops.cc: Adagrad, Adam, Momentum
void RegisterSignalKernels(KernelRegistry& r);       // signal_ops.cc: windows, DFT, STFT, MelWeightMatrix
void RegisterQuantizedKernels(KernelRegistry& r);    // quantized_ops.cc: QLinearConv, QLinearMatMul
void RegisterQuantizeLinearKernels(KernelRegistry& r);  // quantize_linear_ops.cc: (De)QuantizeLinear, DynamicQuantizeLinear
void RegisterRoiAlignKernels(KernelRegistry& r);     // roi_align.cc: RoiAlign
void RegisterTfIdfKernels(KernelRegistry& r);        // tfidf.cc: TfIdfVectorizer
void RegisterMlKernels(KernelRegistry& r);           // ml_ops.cc: ai.onnx.ml Binarizer, ArrayFeatureExtractor, LabelEncoder, TreeEnsemble

void RegisterGradKernels(KernelRegistry& r);         // grad_ops.cc: ai.tandem gradient ops
void RegisterConvGradKernels(KernelRegistry& r);     // conv_grad.cc: ConvGrad, ConvTransposeGrad
void RegisterPoolGradKernels(KernelRegistry& r);     // pool_grad.cc: MaxPoolGrad, AveragePoolGrad, GlobalAveragePoolGrad
void RegisterNormGradKernels(KernelRegistry& r);     // norm_grad.cc: BatchNormalizationGrad, LayerNormalizationGrad
void RegisterGradMathKernels(KernelRegistry& r);     // grad_math_ops.cc: ai.tandem math/shape/softmax grads
void RegisterOptimizerKernels(KernelRegistry& r);    // optimizer_ops.cc: ai.tandem SGD/Momentum/Adam(W)Update, GlobalNormClip
void RegisterDenseChainKernels(KernelRegistry& r);  // dense_chain_ops.cc: ai.tandem DenseChain(+Grad)
void RegisterAllReduceKernels(KernelRegistry& r);   // all_reduce.cc: ai.tandem AllReduce (data-parallel training)
void RegisterRnnGradKernels(KernelRegistry& r);      // rnn_grad.cc: ai.tandem LSTMGrad, GRUGrad
void RegisterLossGradKernels(KernelRegistry& r);     // loss_grad_ops.cc: ai.tandem BCEWithLogitsLoss(+Grad), MSELoss(+Grad), SoftmaxCrossEntropyLossGrad

inline void RegisterAllCpuKernels(KernelRegistry& r) {
  RegisterGradKernels(r);
  RegisterConvGradKernels(r);
  RegisterPoolGradKernels(r);
  RegisterNormGradKernels(r);
  RegisterGradMathKernels(r);
  RegisterOptimizerKernels(r);
  RegisterLossGradKernels(r);
  RegisterRnnGradKernels(r);
  RegisterDenseChainKernels(r);
  RegisterAllReduceKernels(r);
  RegisterUnaryKernels(r);
  RegisterBinaryKernels(r);
  RegisterVariadicKernels(r);
  RegisterReduceKernels(r);
  RegisterSoftmaxKernels(r);
  RegisterAttentionKernels(r);
  RegisterTransformerKernels(r);
  RegisterRecurrentStateKernels(r);
  RegisterMatMulKernels(r);
  RegisterConvKernels(r);
  RegisterBlockedLayoutKernels(r);
  RegisterPoolKernels(r);
  RegisterNormKernels(r);
  RegisterConcatNormKernels(r);
  RegisterShapeKernels(r);
  RegisterCastKernels(r);
  RegisterSpatialKernels(r);
  RegisterLayoutKernels(r);
  RegisterIndexKernels(r);
  RegisterGeneratorKernels(r);
  RegisterMiscKernels(r);
  RegisterResizeKernels(r);
  RegisterEinsumKernels(r);
  RegisterLossKernels(r);
  RegisterRnnKernels(r);
  RegisterControlFlowKernels(r);
  RegisterSequenceKernels(r);
  RegisterTextKernels(r);
  RegisterTrainingKernels(r);
  RegisterSignalKernels(r);
  RegisterQuantizedKernels(r);
  RegisterQuantizeLinearKernels(r);
  RegisterRoiAlignKernels(r);
  RegisterTfIdfKernels(r);
  RegisterMlKernels(r);
}

}  // namespace tandem::cpu
