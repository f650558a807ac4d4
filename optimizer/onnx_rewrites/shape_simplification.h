// Shape simplification: exporters compute reshape targets at run time from Shape(x)
// (PyTorch's x.view(x.size(0), -1), tf2onnx's Flatten), a chain of Shape, Gather, Slice,
// Concat, Cast, Squeeze/Unsqueeze nodes. This pass follows such chains symbolically —
// each element a known number or "dim d of value v" — using the shapes shape inference
// recorded, and
//  - replaces every chain value whose elements are all known by an initializer;
//  - gives a Reshape whose target it can express a constant target: "dim d of the
//    Reshape's own input at position d" becomes 0 (copy), one remaining unknown element
//    becomes -1.
// Dims match when they are the same (value, axis) or share a symbolic name (e.g. both
// "batch"). The chain's nodes are then dead; run EliminateDeadCode.
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of values replaced by constants plus Reshape targets made constant.
int SimplifyShapes(Graph& graph);

}  // namespace tandem
