// Graph: the IR that import produces, passes rewrite, the partitioner annotates and the
// runtime plans. Values are named; each value is produced by at most one node or is a
// graph input / initializer.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/node.h"
#include "graph/shape.h"

namespace tandem {

class Graph {
 public:
  std::string name;
  std::vector<ValueInfo> inputs;    // graph inputs that are not initializers
  std::vector<ValueInfo> outputs;
  std::map<std::string, Tensor> initializers;
  // Initializers the model wrote as Constant nodes: fixed values (a zero initial state, an
  // epsilon), never trainable parameters, unlike the model's own initializers.
  std::set<std::string> constants;
  std::map<std::string, ValueInfo> value_info;  // inferred types of intermediate values
  std::vector<Node> nodes;
  std::map<std::string, int> opsets;  // domain ("" = ai.onnx) -> version
  // Names visible from an enclosing graph (for If/Loop/Scan bodies).
  std::vector<std::string> outer_scope_names;

  int opset(const std::string& domain) const;
  // Type info for any value (input, output, initializer or intermediate), or null.
  const ValueInfo* FindValueInfo(const std::string& value) const;
  DataType ValueType(const std::string& value) const;
  // Whether a node is a gradient op (ai.tandem "...Grad"): a training graph, whose backward
  // kernels expect the forward values as written (no layout or fusion rewrites).
  bool HasGradientNodes() const;

  // Node indices in a dependency order; error names a node on the cycle.
  absl::StatusOr<std::vector<size_t>> TopologicalOrder() const;
  // Reorders `nodes` topologically.
  absl::Status SortTopologically();
  // Every node input is produced earlier, is an input/initializer or outer-scope name.
  absl::Status Validate() const;
};

}  // namespace tandem
