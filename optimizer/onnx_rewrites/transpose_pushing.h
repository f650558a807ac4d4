// Transposes pushed down through the ops that do not care about layout, so that the pairs a
// channels-last export writes (tf2onnx: NHWC -> NCHW before each Conv, back to NHWC after
// it, with the bias Add, activations, squeeze-excite ReduceMean and Pad in NHWC between)
// meet and cancel (transpose_optimization.h's rule 1 composes them).
//
// Walking the nodes in order, a node N that reads at least one input through Transpose(x, p)
// is rewritten to run on x's layout, when it is one of:
//  - element-wise unary (Relu, Sigmoid, Clip, Cast, ...): input 0;
//  - broadcasting element-wise (Add, Mul, Where, PRelu, comparisons, ...): every input;
//  - Reduce* and ArgMax/ArgMin with constant axes (keepdims 0 or 1), Pad with constant
//    pads (no axes input), Concat, Split, Slice with constant axes, Softmax, LogSoftmax
//    and Hardmax from opset 13: axes and pads renumbered through p.
// Its other layout inputs go through the inverse permutation: a constant (rank <= p's,
// broadcast dims kept as ones) becomes a permuted initializer; any other value of p's rank
// gets a Transpose(inverse p) of its own. N moves only when at least as many of its inputs
// came through Transpose(p) as need a new Transpose. Each output of N is then written under
// a fresh name and a Transpose back to N's layout writes the original name (none when a
// reduction without keepdims leaves the order as it was), so readers, graph outputs and
// subgraphs see what they saw. Only the top-level node list is rewritten; the Transposes
// left without readers are for EliminateDeadCode.
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of nodes moved below their Transposes.
int PushTransposesDown(Graph& graph);

}  // namespace tandem
