// Pad folding, written as standard ONNX: a Pad of zeros on the spatial axes only (mode
// constant, value 0 or none, non-negative constant pads, N and C unpadded) whose output only
// a Conv reads, as its input, becomes that Conv's own padding: the Conv reads the Pad's
// input and adds the pads to its own (auto_pad NOTSET). tf2onnx writes Keras's
// ZeroPadding2D before every stride-2 convolution so; a Pad left standing costs a copy of
// the map and, on the CPU, breaks the channel-blocked layout around it.
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of Pad nodes folded away.
int FoldPadsIntoConvs(Graph& graph);

}  // namespace tandem
