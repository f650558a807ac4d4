#include "graph/static_shape.h"

namespace tandem {

bool SameStaticShape(const Graph& graph, const std::string& a, const std::string& b) {
  const ValueInfo *va = graph.FindValueInfo(a), *vb = graph.FindValueInfo(b);
  if (!va || !vb || !va->shape.rank_known || !vb->shape.rank_known) return false;
  const std::vector<Dim>&da = va->shape.dims, &db = vb->shape.dims;
  if (da.size() != db.size()) return false;
  for (size_t i = 0; i < da.size(); ++i) {
    const bool same = da[i].known() ? da[i].value == db[i].value : !da[i].symbol.empty() && da[i].symbol == db[i].symbol;
    if (!same) return false;
  }
  return true;
}

std::optional<Dims> StaticDims(const Graph& graph, const std::string& value) {
  if (auto init = graph.initializers.find(value); init != graph.initializers.end()) return init->second.dims();
  const ValueInfo* v = graph.FindValueInfo(value);
  if (!v || !v->shape.rank_known || !v->shape.fully_known()) return std::nullopt;
  return v->shape.ToDims();
}

}  // namespace tandem
