// Pre-checks for inputs that crash libonnx 1.12 (Debian's) instead of failing cleanly,
// run before its checker and shape inference. Each rule comes from a crash the fuzzer
// found (tests/fuzz/regressions/); the rule rejects the model with a message naming the
// node, which is what libonnx should have said.
//   - Conv/ConvTranspose/pooling with a declared data rank below 3, or a weight whose
//     rank differs from the data's: convTransposeShapeInference reads past the shape.
// Only shapes declared on graph inputs and initializers are known here; intermediate
// values get theirs from the shape inference being protected.
#pragma once
#include <onnx/onnx_pb.h>

#include <string>

#include "absl/status/status.h"

namespace tandem {

// OK, or InvalidArgument "node 'n' (ConvTranspose): ..." for a graph libonnx would crash on.
absl::Status CheckGraphForLibOnnx(const onnx::GraphProto& graph);

}  // namespace tandem
