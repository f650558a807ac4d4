// One registration function per kernel file (kernels/<family>/<file>.cc); cpu_provider.cc
// calls them all. Adding a kernel file: declare its function here and call it in
// RegisterAllCpuKernels.
#pragma once
#include "framework/kernel_registry.h"

namespace tandem::cpu {

// The open end of a kernel's opset range: the kernel implements every later version of its
// op up to the importer's kMaxSupportedOpset (onnx_import/import.h). After opset 21 most
// versions only admitted more element types (bfloat16 for some ops; float4/6/8 and int2/4,
// which no Tensor holds), and each kernel still accepts or refuses a dtype by its own
// list; where semantics changed (Mod's float rule and SpaceToDepth's mode at 28), the
// kernel follows the newest version, which agrees with the older ones.
inline constexpr int kMaxOpset = 1 << 30;

// A kernel of Tandem's own domain (ai.tandem, every opset; ops/tandem_ops.h declares each
// op) for the element types `types` of input `type_input`.
inline KernelDef TandemKernel(const std::string& op, std::vector<DataType> types, KernelFactory create,
                              int type_input = 0) {
  KernelDef d;
  d.domain = kTandemDomain;
  d.op = op;
  d.since = 1;
  d.types = std::move(types);
  d.type_input = type_input;
  d.create = std::move(create);
  return d;
}

void RegisterUnaryKernels(KernelRegistry& r);        // math/unary.cc: activations, math
void RegisterBinaryKernels(KernelRegistry& r);       // math/binary.cc: arithmetic, compare, logic
void RegisterVariadicKernels(KernelRegistry& r);     // math/variadic.cc: Sum, Mean, Max, Min
void RegisterReduceKernels(KernelRegistry& r);       // math/reduce.cc: Reduce*, ArgMax/ArgMin
void RegisterSoftmaxKernels(KernelRegistry& r);      // nn/softmax.cc
void RegisterAttentionKernels(KernelRegistry& r);    // nn/attention.cc: Attention, FlexAttention
void RegisterFusedAttentionKernels(KernelRegistry& r);  // nn/fused_attention.cc: ai.tandem FusedAttention
void RegisterFusedAttentionGradKernels(KernelRegistry& r);  // nn/fused_attention_grad.cc: ai.tandem FusedAttentionGrad
void RegisterAddLayerNormKernels(KernelRegistry& r);  // nn/add_layer_norm.cc: ai.tandem AddLayerNormalization
void RegisterTransformerKernels(KernelRegistry& r);  // nn/transformer_ops.cc: RotaryEmbedding, SwiGLU, TensorScatter
void RegisterRecurrentStateKernels(KernelRegistry& r);  // rnn/recurrent_state_ops.cc: LinearAttention, CausalConvWithState
void RegisterMatMulKernels(KernelRegistry& r);       // math/matmul.cc: MatMul, Gemm
void RegisterMatMulIntegerKernels(KernelRegistry& r);  // quantization/matmul_integer.cc: MatMulInteger
void RegisterMatMulIntegerToFloatKernels(KernelRegistry& r);  // quantization/matmul_integer_to_float.cc: ai.tandem MatMulIntegerToFloat
void RegisterQLinearAddKernels(KernelRegistry& r);  // quantization/qlinear_add.cc: ai.tandem QLinearAdd, QLinearMul
void RegisterQLinearLookupKernels(KernelRegistry& r);  // quantization/qlinear_lookup.cc: ai.tandem QLinearLookup
void RegisterConvKernels(KernelRegistry& r);         // nn/conv.cc: Conv, ConvTranspose
void RegisterBlockedLayoutKernels(KernelRegistry& r);  // tensor/blocked_layout_ops.cc: FromBlocked
void RegisterPoolKernels(KernelRegistry& r);         // nn/pool.cc
void RegisterNormKernels(KernelRegistry& r);         // nn/norm.cc: BatchNorm, LRN, LayerNorm, ...
void RegisterConcatNormKernels(KernelRegistry& r);   // nn/concat_norm_ops.cc: ConcatBatchNorm
void RegisterFusedGroupNormKernels(KernelRegistry& r);  // nn/fused_group_norm.cc: ai.tandem FusedGroupNorm
void RegisterShapeKernels(KernelRegistry& r);        // tensor/shape_ops.cc: Reshape, Shape, ...
void RegisterCastKernels(KernelRegistry& r);         // tensor/cast_ops.cc: Cast, CastLike, BitCast
void RegisterSpatialKernels(KernelRegistry& r);      // nn/spatial_ops.cc: Col2Im, AffineGrid
void RegisterLayoutKernels(KernelRegistry& r);       // tensor/layout_ops.cc: Transpose, Concat, Split, ...
void RegisterIndexKernels(KernelRegistry& r);        // tensor/index_ops.cc: Gather*, Scatter*, ...
void RegisterGeneratorKernels(KernelRegistry& r);    // tensor/generator_ops.cc: Constant, Range, ...
void RegisterMiscKernels(KernelRegistry& r);         // tensor/misc_ops.cc: TopK, CumSum, CumProd, Dropout, Unique, MaxUnpool, Det
void RegisterNonMaxSuppressionKernels(KernelRegistry& r);  // tensor/non_max_suppression.cc
void RegisterResizeKernels(KernelRegistry& r);       // nn/resize.cc: Resize, Upsample, GridSample
void RegisterEinsumKernels(KernelRegistry& r);       // math/einsum.cc: Einsum
void RegisterLossKernels(KernelRegistry& r);         // nn/loss.cc: NLLLoss, SoftmaxCrossEntropy
void RegisterRnnKernels(KernelRegistry& r);          // rnn/rnn.cc: RNN, GRU, LSTM
void RegisterControlFlowKernels(KernelRegistry& r);  // control_flow/control_flow.cc: If, Loop, Scan
void RegisterSequenceKernels(KernelRegistry& r);     // control_flow/sequence_ops.cc: Sequence*, Optional*
void RegisterTextKernels(KernelRegistry& r);         // ml/text_ops.cc: StringNormalizer
void RegisterTrainingKernels(KernelRegistry& r);     // training/training_ops.cc: Adagrad, Adam, Momentum
void RegisterSignalKernels(KernelRegistry& r);       // signal/signal_ops.cc: windows, DFT, STFT, MelWeightMatrix
void RegisterQuantizedKernels(KernelRegistry& r);    // quantization/quantized_ops.cc: QLinearConv, QLinearMatMul
void RegisterQuantizeLinearKernels(KernelRegistry& r);  // quantization/quantize_linear_ops.cc: (De)QuantizeLinear, DynamicQuantizeLinear
void RegisterRoiAlignKernels(KernelRegistry& r);     // nn/roi_align.cc: RoiAlign
void RegisterTfIdfKernels(KernelRegistry& r);        // ml/tfidf.cc: TfIdfVectorizer
void RegisterMlKernels(KernelRegistry& r);           // ml/ml_ops.cc: ai.onnx.ml Binarizer, ArrayFeatureExtractor, LabelEncoder, TreeEnsemble

void RegisterGradKernels(KernelRegistry& r);         // training/grad_ops.cc: ai.tandem gradient ops
void RegisterConvGradKernels(KernelRegistry& r);     // nn/conv_grad.cc: ConvGrad, ConvTransposeGrad
void RegisterPoolGradKernels(KernelRegistry& r);     // nn/pool_grad.cc: MaxPoolGrad, AveragePoolGrad, GlobalAveragePoolGrad
void RegisterNormGradKernels(KernelRegistry& r);     // nn/norm_grad.cc: BatchNormalizationGrad, LayerNormalizationGrad
void RegisterGradMathKernels(KernelRegistry& r);     // math/grad_math_ops.cc: ai.tandem math/shape/softmax grads
void RegisterGeluGradKernels(KernelRegistry& r);     // math/gelu_grad.cc: ai.tandem GeluGrad
void RegisterOptimizerKernels(KernelRegistry& r);    // training/optimizer_ops.cc: ai.tandem SGD/Momentum/Adam(W)Update, GlobalNormClip
void RegisterDenseChainKernels(KernelRegistry& r);  // nn/dense_chain_ops.cc: ai.tandem DenseChain(+Grad)
void RegisterAllReduceKernels(KernelRegistry& r);   // training/all_reduce.cc: ai.tandem AllReduce (data-parallel training)
void RegisterRnnGradKernels(KernelRegistry& r);      // rnn/rnn_grad.cc: ai.tandem LSTMGrad, GRUGrad
void RegisterLossGradKernels(KernelRegistry& r);     // nn/loss_grad_ops.cc: ai.tandem BCEWithLogitsLoss(+Grad), MSELoss(+Grad), SoftmaxCrossEntropyLossGrad

inline void RegisterAllCpuKernels(KernelRegistry& r) {
  RegisterGradKernels(r);
  RegisterConvGradKernels(r);
  RegisterPoolGradKernels(r);
  RegisterNormGradKernels(r);
  RegisterGradMathKernels(r);
  RegisterGeluGradKernels(r);
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
  RegisterFusedAttentionKernels(r);
  RegisterFusedAttentionGradKernels(r);
  RegisterAddLayerNormKernels(r);
  RegisterTransformerKernels(r);
  RegisterRecurrentStateKernels(r);
  RegisterMatMulKernels(r);
  RegisterMatMulIntegerKernels(r);
  RegisterMatMulIntegerToFloatKernels(r);
  RegisterQLinearAddKernels(r);
  RegisterQLinearLookupKernels(r);
  RegisterConvKernels(r);
  RegisterBlockedLayoutKernels(r);
  RegisterPoolKernels(r);
  RegisterNormKernels(r);
  RegisterConcatNormKernels(r);
  RegisterFusedGroupNormKernels(r);
  RegisterShapeKernels(r);
  RegisterCastKernels(r);
  RegisterSpatialKernels(r);
  RegisterLayoutKernels(r);
  RegisterIndexKernels(r);
  RegisterGeneratorKernels(r);
  RegisterMiscKernels(r);
  RegisterNonMaxSuppressionKernels(r);
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
