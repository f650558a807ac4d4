// Removes nodes that pass their input through unchanged at inference: Identity, Dropout
// when it does not train (no training_mode input, or a constant false one) and nothing
// reads its mask, Pad whose pads are all constant zeros (PyTorch exports AvgPool2d
// with one), and Slice that keeps every element (constant arguments, steps 1, statically
// known sizes on the sliced axes: the legacy exporter's x[:, :C] of a C-channel x). Readers of the output read the input instead; when the output
// is a graph output, the producer of the input writes that name directly (unless the
// input is itself a graph input, initializer or output, in which case the node stays).
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of nodes removed.
int EliminateIdentities(Graph& graph);
// Only the zero Pads and whole Slices (the Session runs this before placement: such a node
// would otherwise cost a copy and, on the CPU, break the channel-blocked layout around it).
int EliminateZeroPadsAndWholeSlices(Graph& graph);

}  // namespace tandem
