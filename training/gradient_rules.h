// Gradient rules: one per forward op, written as a graph rewrite. A rule reads the forward
// node and the gradients flowing into its outputs, emits ordinary nodes (forward ops and a
// few `ai.tandem` *Grad ops) that compute the gradients of its inputs, and reports them
// with SetInputGrad. Because the backward pass is made of graph nodes, every provider that
// has the kernels runs it, and the partitioner, planner and profiler treat it like the
// forward pass.
//
//   REGISTER in a rules file:  r.Add("Relu", [](GradientContext& c) {
//     c.SetInputGrad(0, c.Emit1("ReluGrad", {c.dY(0), c.Y(0)}, kTandemDomain));
//     return absl::OkStatus(); });
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "graph/graph.h"

namespace tandem::training {

class GradientContext {
 public:
  GradientContext(Graph& graph, const Node& node, std::vector<std::string> output_grads,
                  std::vector<bool> wants_grad, std::vector<Node>* emitted, int* counter);

  const Node& node() const { return node_; }
  const Graph& graph() const { return graph_; }
  int opset() const { return graph_.opset(node_.domain); }

  // Forward input/output names ("" when absent) and incoming output gradient ("" = none).
  const std::string& X(size_t i) const;
  const std::string& Y(size_t i) const;
  const std::string& dY(size_t i) const;
  bool has_dY(size_t i) const { return !dY(i).empty(); }
  // Whether input i needs a gradient (it leads to a trainable parameter).
  bool wants(size_t i) const { return i < wants_.size() && wants_[i]; }

  // Emits a node and returns its fresh output names.
  std::vector<std::string> Emit(const std::string& op, std::vector<std::string> inputs,
                                int num_outputs, std::map<std::string, Attribute> attrs = {},
                                const std::string& domain = "");
  std::string Emit1(const std::string& op, std::vector<std::string> inputs,
                    std::map<std::string, Attribute> attrs = {}, const std::string& domain = "") {
    return Emit(op, std::move(inputs), 1, std::move(attrs), domain)[0];
  }
  // A new initializer holding `t`; returns its name.
  std::string Constant(const Tensor& t);
  // A scalar of the same element type as value `like` (ai.tandem.ScalarLike).
  std::string ScalarLike(double value, const std::string& like);
  // Sums `grad` over broadcast dimensions so it takes the shape of `like`
  // (ai.tandem.SumToShape; a no-op when the shapes already agree).
  std::string SumToShapeOf(const std::string& grad, const std::string& like);

  void SetInputGrad(size_t i, const std::string& grad);
  const std::vector<std::string>& input_grads() const { return input_grads_; }

  static Attribute Int(int64_t v);
  static Attribute Ints(std::vector<int64_t> v);
  static Attribute Float(float v);
  static Attribute String(std::string v);

 private:
  std::string Fresh(const std::string& hint);
  Graph& graph_;
  const Node& node_;
  std::vector<std::string> output_grads_;
  std::vector<bool> wants_;
  std::vector<Node>* emitted_;
  int* counter_;
  std::vector<std::string> input_grads_;
};

using GradientRule = std::function<absl::Status(GradientContext&)>;

class GradientRegistry {
 public:
  void Add(const std::string& op, GradientRule rule, const std::string& domain = "");
  const GradientRule* Find(const std::string& domain, const std::string& op) const;
  std::vector<std::string> Ops() const;

 private:
  std::map<std::pair<std::string, std::string>, GradientRule> rules_;
};

// All built-in rules (one Register*Gradients function per rules file).
const GradientRegistry& Gradients();

}  // namespace tandem::training
