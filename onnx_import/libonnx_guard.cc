#include "onnx_import/libonnx_guard.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"

namespace tandem {
namespace {

// Ops whose input 0 is N x C x spatial... (and input 1, when there is one, the weight).
const std::set<std::string>& SpatialOps() {
  static const std::set<std::string> ops = {"Conv",        "ConvTranspose", "ConvInteger",
                                            "MaxPool",     "AveragePool",   "LpPool",
                                            "MaxRoiPool",  "MaxUnpool"};
  return ops;
}

}  // namespace

absl::Status CheckGraphForLibOnnx(const onnx::GraphProto& graph) {
  std::map<std::string, int> rank;  // declared ranks of graph inputs and initializers
  for (const auto& in : graph.input())
    if (in.type().tensor_type().has_shape()) rank[in.name()] = in.type().tensor_type().shape().dim_size();
  for (const auto& init : graph.initializer()) rank[init.name()] = init.dims_size();
  for (const auto& node : graph.node()) {
    if (!(node.domain().empty() || node.domain() == "ai.onnx") || !SpatialOps().count(node.op_type()) ||
        node.input_size() < 1)
      continue;
    auto describe = [&] { return absl::StrCat("node '", node.name(), "' (", node.op_type(), "): "); };
    auto x = rank.find(node.input(0));
    if (x == rank.end()) continue;
    if (x->second < 3)
      return absl::InvalidArgumentError(absl::StrCat(describe(), "input '", node.input(0), "' has rank ",
                                                     x->second, "; it needs N, C and at least one spatial axis"));
    if (node.op_type().rfind("Conv", 0) != 0 || node.input_size() < 2) continue;
    auto w = rank.find(node.input(1));
    if (w != rank.end() && w->second != x->second)
      return absl::InvalidArgumentError(absl::StrCat(describe(), "weight '", node.input(1), "' has rank ",
                                                     w->second, ", the input '", node.input(0),
                                                     "' has rank ", x->second, "; they must match"));
  }
  return absl::OkStatus();
}

}  // namespace tandem
