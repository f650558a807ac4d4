// One registration function per rules file; RegisterAllGradients calls them all.
#pragma once
#include "training/gradient_rules.h"

namespace tandem::training::rules {

void RegisterArithmeticGradients(GradientRegistry& r);  // arithmetic.cc: Add, Sub, Mul, Div, Neg, ...
void RegisterLinearGradients(GradientRegistry& r);      // linear.cc: MatMul, Gemm, ai.tandem DenseChain
void RegisterActivationGradients(GradientRegistry& r);  // activation.cc: Relu
void RegisterReductionGradients(GradientRegistry& r);   // reduction.cc: ReduceSum, ReduceMean
void RegisterLossGradients(GradientRegistry& r);        // loss.cc: SoftmaxCrossEntropyLoss, ai.tandem BCEWithLogitsLoss, MSELoss
void RegisterElementwiseGradients(GradientRegistry& r);  // elementwise.cc: Pow, Sqrt, Exp, Log, Erf, Gelu, Softplus, Abs, LeakyRelu, Elu, Tanh, Sigmoid, ...
void RegisterShapeGradients(GradientRegistry& r);        // shape.cc: Reshape, Transpose, Concat, Slice, Gather, Where, Clip, Cast, Dropout, ...
void RegisterSoftmaxGradients(GradientRegistry& r);      // softmax.cc: Softmax, LogSoftmax
void RegisterNnGradients(GradientRegistry& r);           // nn.cc: Conv, ConvTranspose, pools, BatchNorm, LayerNorm
void RegisterRecurrentGradients(GradientRegistry& r);    // recurrent.cc: LSTM, GRU
void RegisterAttentionGradients(GradientRegistry& r);    // attention.cc: ai.tandem FusedAttention

inline void RegisterAllGradients(GradientRegistry& r) {
  RegisterArithmeticGradients(r);
  RegisterLinearGradients(r);
  RegisterActivationGradients(r);
  RegisterReductionGradients(r);
  RegisterLossGradients(r);
  RegisterElementwiseGradients(r);
  RegisterShapeGradients(r);
  RegisterSoftmaxGradients(r);
  RegisterNnGradients(r);
  RegisterRecurrentGradients(r);
  RegisterAttentionGradients(r);
}

}  // namespace tandem::training::rules
