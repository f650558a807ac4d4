// Channel Concats read by a convolution, computed without the Concat: a Conv is linear in
// its input channels, so
//   Conv(Concat(a, b, ...; axis 1), W, B) = Conv(a, W[:, 0:Ca], B) + Conv(b, W[:, Ca:Ca+Cb]) + ...
// (SqueezeNet's fire modules, Inception's branches). The parts' Adds are what the CPU's
// residual-sum fusion (providers/cpu/rewrites/conv_sum.h) folds into the convolutions as sum
// post-ops, with a Relu after them, so the Concat's copy of every channel is gone and each
// part is added where the next convolution writes. A MaxPool between the Concat and the
// Conv is per channel: it runs on each part (MaxPool(Concat(a, b)) = Concat(MaxPool(a),
// MaxPool(b))) and the Concat goes as before.
//
// Conditions: a Conv with group 1 and float32 constant weights; its input is the Concat's
// (or the MaxPool's, with one output) and nothing else reads it; the Concat is along the
// channel axis and each part's channel count is static; the Conv's output has fewer
// elements than the Concat's (the sums re-read the output: for a Conv that widens, such as
// a 1000-class head, the Concat is cheaper). New values get the shapes they will have; the
// Conv's output keeps its name. The sums are float32 in another order than one
// convolution's: results differ in the last bits only. Inference graphs only (a training
// graph's parameters must stay the model's own).
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of Concat nodes removed.
int SplitConcatIntoConvs(Graph& graph);

}  // namespace tandem
