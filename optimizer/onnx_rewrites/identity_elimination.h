// Removes nodes that pass their input through unchanged at inference: Identity, Dropout
// when it does not train (no training_mode input, or a constant false one) and nothing
// reads its mask, and Pad whose pads are all constant zeros (PyTorch exports AvgPool2d
// with one). Readers of the output read the input instead; when the output
// is a graph output, the producer of the input writes that name directly (unless the
// input is itself a graph input, initializer or output, in which case the node stays).
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of nodes removed.
int EliminateIdentities(Graph& graph);
// Only the zero Pads (the Session runs this before placement: such a Pad would otherwise
// cost a copy and, on the CPU, break the channel-blocked layout around it).
int EliminateZeroPads(Graph& graph);

}  // namespace tandem
