// Builders for small ONNX models used by the tests (written with libonnx's protobuf), and
// a few helpers the test files share.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/graph.h"

namespace tandem {
class Session;
}
namespace tandem::training {
class Trainer;
}

namespace tandem::testing {

// A model with an empty graph called `graph_name` (ONNX IR 8, default domain at `opset`).
onnx::ModelProto EmptyModel(int opset, const std::string& graph_name = "g");
// A model: input x (float[n]) -> `ops` applied in a chain (unary ops) -> output y.
onnx::ModelProto UnaryChainModel(const std::vector<std::string>& ops, int64_t n, int opset = 13);
// x + w where w is an initializer of n floats (value i*0.5).
onnx::ModelProto AddInitializerModel(int64_t n);
std::string Serialize(const onnx::ModelProto& m);

// Pieces for hand-built graphs.
// A float initializer of `dims` with values InitializerValue(i, scale, offset).
// The i-th value of AddFloatInitializer's tensors: scale * ((i * 7) % 11 - 5) + offset.
inline float InitializerValue(int64_t i, float scale, float offset = 0.f) {
  return scale * static_cast<float>((i * 7) % 11 - 5) + offset;
}
// The first n of them, as float64 for a reference computation.
inline std::vector<double> InitializerValues(int64_t n, float scale, float offset = 0.f) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = InitializerValue(i, scale, offset);
  return v;
}
void AddFloatInitializer(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
                         float scale, float offset = 0.f);
// A 1-D int64 initializer holding `values` (a Reshape's shape, a Slice's starts).
void AddInt64Initializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values);
onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, const std::string& name,
                         std::vector<std::string> inputs, std::vector<std::string> outputs);
void AddIntsAttribute(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> values);
void AddIntAttribute(onnx::NodeProto* n, const std::string& name, int64_t value);
// Sets `v` to a float tensor called `name` of shape `dims`.
void SetFloatType(onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims);
// A standard-domain node `op` named after its first output.
Node PlainNode(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs);
// A graph (opset 17, ai.tandem 1) of one ai.tandem node `op` that reads every input and
// writes `outputs` as graph outputs (their types left to the kernel).
Graph TandemOpGraph(const std::string& op, const std::vector<ValueInfo>& inputs,
                    const std::vector<std::string>& outputs);
// The losses of `steps` trainer steps on one fixed batch (x fed as input `input`, y the
// target); a failed step is a test failure and ends the list there.
std::vector<double> StepLosses(training::Trainer& trainer, const std::string& input, const Tensor& x,
                               const Tensor& y, int steps);
// An inference BatchNormalization of `channels` channels, x -> y, with float initializers
// NAME_scale (0.1 * pattern + 1), NAME_shift, NAME_mean and NAME_var (0.05 * pattern + 0.5).
onnx::NodeProto* AddInferenceBatchNorm(onnx::GraphProto* g, const std::string& name, const std::string& x,
                                       const std::string& y, int64_t channels);
// A Conv node padded by `pad` on every side of both spatial axes.
onnx::NodeProto* AddPaddedConv(onnx::GraphProto* g, const std::string& name, std::vector<std::string> inputs,
                               const std::string& y, int64_t pad);
// `model` imported (its graph named as the model's); a failed import is a test failure and
// gives an empty graph.
Graph ImportTestModel(const onnx::ModelProto& model);
// `model` imported and loaded on the default providers with 2 threads, graph fusion (and the
// providers' rewrites) on or off; null after a failed expectation.
std::unique_ptr<Session> LoadTestModel(const onnx::ModelProto& model, bool fusion);
// Runs both sessions on input "x" of `x_dims` (sin values) and expects the same outputs,
// judged against the scale of each (and each must not be all near zero).
void ExpectSameOutputs(Session& a, Session& b, const Dims& x_dims);
// How many nodes of each op type `g` holds.
std::map<std::string, int> OpCounts(const Graph& g);
// A fresh empty folder under $TEST_TMPDIR (else /tmp), removed with its contents when the
// test process exits normally.
std::string MakeTempDir(const std::string& tag);
void WriteFile(const std::string& path, const std::string& bytes);

}  // namespace tandem::testing
