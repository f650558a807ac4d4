// Who reads each value of a graph: the indices of the nodes that take it as an input
// (once per input slot), and whether anything outside the node list needs it — a graph
// output, or a subgraph that reads it from the enclosing scope. Fusion passes use it to
// tell which intermediate values a rewrite may drop.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace tandem {

// Index of the node writing each value (the empty name of an omitted output excluded).
std::map<std::string, size_t> Producers(const Graph& graph);

class ValueReaders {
 public:
  explicit ValueReaders(const Graph& graph);
  // Node indices reading `value`, in node order (one entry per input slot).
  const std::vector<size_t>& nodes(const std::string& value) const;
  // A graph output or read by a subgraph.
  bool pinned(const std::string& value) const { return pinned_.count(value) != 0; }
  // The index of the only node reading `value` (in one input slot), or -1 when there are
  // others, none, or it is pinned.
  int Sole(const std::string& value) const;

 private:
  std::map<std::string, std::vector<size_t>> nodes_;
  std::set<std::string> pinned_;
};

}  // namespace tandem
