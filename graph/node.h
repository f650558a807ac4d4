// Node: one operator application. Inputs/outputs name values; an empty name is an omitted
// optional input/output. Attributes are typed and read through checked accessors.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/shape.h"
#include "graph/tensor.h"

namespace tandem {

class Graph;

struct Attribute {
  enum class Kind { kUndefined, kFloat, kInt, kString, kTensor, kGraph, kFloats, kInts, kStrings,
                    kType };
  Kind kind = Kind::kUndefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  ValueInfo type;  // kType (ONNX TYPE_PROTO, e.g. Optional's 'type'); its name is unused
};

// Attribute values built in code (rewrites, fusions, training graphs).
Attribute IntAttribute(int64_t v);
Attribute IntsAttribute(std::vector<int64_t> v);
Attribute FloatAttribute(float v);
Attribute StringAttribute(std::string v);

// The domain of Tandem's own ops (training gradients and updates, Copy, fused ops).
constexpr char kTandemDomain[] = "ai.tandem";

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain ("ai.onnx")
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, Attribute> attributes;
  // Set by the partitioner: the provider that runs this node.
  std::string provider;

  bool has_attr(const std::string& key) const { return attributes.count(key) != 0; }
  int64_t attr_int(const std::string& key, int64_t fallback) const;
  float attr_float(const std::string& key, float fallback) const;
  std::string attr_string(const std::string& key, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& key,
                                 std::vector<int64_t> fallback = {}) const;
  std::vector<float> attr_floats(const std::string& key, std::vector<float> fallback = {}) const;
  std::vector<std::string> attr_strings(const std::string& key) const;
  const Attribute* attr(const std::string& key) const;

  // Present (non-empty) input count and whether input i is given.
  bool has_input(size_t i) const { return i < inputs.size() && !inputs[i].empty(); }
  bool has_output(size_t i) const { return i < outputs.size() && !outputs[i].empty(); }
  // "node 'conv1' (Conv)" — the prefix every error about this node starts with.
  std::string Describe() const;
};

}  // namespace tandem
