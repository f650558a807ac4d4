#include "graph/node.h"

namespace tandem {

Attribute IntAttribute(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}
Attribute IntsAttribute(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
Attribute FloatAttribute(float v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
  return a;
}
Attribute StringAttribute(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(v);
  return a;
}

const Attribute* Node::attr(const std::string& key) const {
  auto it = attributes.find(key);
  return it == attributes.end() ? nullptr : &it->second;
}

int64_t Node::attr_int(const std::string& key, int64_t fallback) const {
  const Attribute* a = attr(key);
  return a && a->kind == Attribute::Kind::kInt ? a->i : fallback;
}

float Node::attr_float(const std::string& key, float fallback) const {
  const Attribute* a = attr(key);
  if (!a) return fallback;
  if (a->kind == Attribute::Kind::kFloat) return a->f;
  if (a->kind == Attribute::Kind::kInt) return static_cast<float>(a->i);
  return fallback;
}

std::string Node::attr_string(const std::string& key, const std::string& fallback) const {
  const Attribute* a = attr(key);
  return a && a->kind == Attribute::Kind::kString ? a->s : fallback;
}

std::vector<int64_t> Node::attr_ints(const std::string& key, std::vector<int64_t> fallback) const {
  const Attribute* a = attr(key);
  return a && a->kind == Attribute::Kind::kInts ? a->ints : fallback;
}

std::vector<float> Node::attr_floats(const std::string& key, std::vector<float> fallback) const {
  const Attribute* a = attr(key);
  return a && a->kind == Attribute::Kind::kFloats ? a->floats : fallback;
}

std::vector<std::string> Node::attr_strings(const std::string& key) const {
  const Attribute* a = attr(key);
  return a && a->kind == Attribute::Kind::kStrings ? a->strings : std::vector<std::string>{};
}

std::string Node::Describe() const {
  return "node '" + (name.empty() ? (outputs.empty() ? std::string("?") : outputs[0]) : name) +
         "' (" + (domain.empty() ? "" : domain + ".") + op_type + ")";
}

}  // namespace tandem
