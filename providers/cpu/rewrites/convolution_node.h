// Which nodes the CPU's convolution rewrites (blocked_layout, conv_sum, conv_input_scale)
// treat as a convolution: ONNX Conv, or the ai.tandem FusedConv that the activation fusion
// and these rewrites write from it (its kernel is Conv's).
#pragma once
#include "graph/node.h"

namespace tandem::cpu {

inline bool IsConvolution(const Node& n) {
  return (n.domain.empty() && n.op_type == "Conv") || (n.domain == kTandemDomain && n.op_type == "FusedConv");
}

}  // namespace tandem::cpu
