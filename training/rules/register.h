// One registration function per rules file; RegisterAllGradients calls them all.
#pragma once
#include "training/gradient_rules.h"

namespace tandem::training::rules {

void RegisterArithmeticGradients(GradientRegistry& r);  // arithmetic.cc: Add, Sub, Mul, Div, Neg, ...
void RegisterLinearGradients(GradientRegistry& r);      // linear.cc: MatMul, Gemm
void RegisterActivationGradients(GradientRegistry& r);  // activation.cc: Relu, Tanh, Sigmoid, ...
void RegisterReductionGradients(GradientRegistry& r);   // reduction.cc: ReduceSum, ReduceMean

inline void RegisterAllGradients(GradientRegistry& r) {
  RegisterArithmeticGradients(r);
  RegisterLinearGradients(r);
  RegisterActivationGradients(r);
  RegisterReductionGradients(r);
}

}  // namespace tandem::training::rules
