// Builders for small ONNX models used by the tests (written with libonnx's protobuf).
#pragma once
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace tandem::testing {

// A model: input x (float[n]) -> `ops` applied in a chain (unary ops) -> output y.
onnx::ModelProto UnaryChainModel(const std::vector<std::string>& ops, int64_t n, int opset = 13);
// x + w where w is an initializer of n floats (value i*0.5).
onnx::ModelProto AddInitializerModel(int64_t n);
std::string Serialize(const onnx::ModelProto& m);
// A fresh empty folder under the test temp dir.
std::string MakeTempDir(const std::string& tag);
void WriteFile(const std::string& path, const std::string& bytes);

}  // namespace tandem::testing
