// Removes nodes that pass their input through unchanged at inference: Identity, Dropout
// when it does not train (no training_mode input, or a constant false one) and nothing
// reads its mask, Pad whose pads are all constant zeros (PyTorch exports AvgPool2d
// with one), and Slice that keeps every element (constant arguments, steps 1, statically
// known sizes on the sliced axes: the legacy exporter's x[:, :C] of a C-channel x), and
// neutral arithmetic (below). Readers of the output read the input instead; when the output
// is a graph output, the producer of the input writes that name directly (unless the
// input is itself a graph input, initializer or output, in which case the node stays).
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of nodes removed.
int EliminateIdentities(Graph& graph);
// Only the zero Pads, whole Slices and neutral arithmetic — x + 0, x - 0, x * 1, x / 1 of a
// float32 x by a one-value constant that broadcasts nothing (rank 0, or at most x's known
// rank; MobileOne's `scale_out + identity_out` where the identity branch is 0; not in graphs
// with gradient nodes, whose initializers are parameters being trained) — which the
// Session removes before placement: such a node would otherwise cost a copy and, on the CPU,
// break the channel-blocked layout around it.
int EliminateCopyingNodes(Graph& graph);

}  // namespace tandem
