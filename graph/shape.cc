#include "graph/shape.h"

namespace tandem {

Shape Shape::Of(const Dims& d) {
  Shape s;
  s.rank_known = true;
  for (int64_t v : d) s.dims.push_back(Dim{v, {}});
  return s;
}

bool Shape::fully_known() const {
  if (!rank_known) return false;
  for (const Dim& d : dims)
    if (!d.known()) return false;
  return true;
}

Dims Shape::ToDims() const {
  Dims out;
  for (const Dim& d : dims) out.push_back(d.value);
  return out;
}

std::string Shape::ToString() const {
  if (!rank_known) return "?";
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    if (dims[i].known()) s += std::to_string(dims[i].value);
    else s += dims[i].symbol.empty() ? "?" : dims[i].symbol;
  }
  return s + "]";
}

std::string ValueInfo::TypeString() const {
  if (kind == ValueKind::kTensor) return std::string(DataTypeName(dtype)) + shape.ToString();
  std::string inner = std::string("seq(") + DataTypeName(elem_type) + ")";
  if (kind == ValueKind::kSequence) return inner;
  return "optional(" + (optional_of == ValueKind::kSequence ? inner : DataTypeName(elem_type)) + ")";
}

}  // namespace tandem
