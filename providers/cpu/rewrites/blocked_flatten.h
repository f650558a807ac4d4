// A classifier's dense layer reading a channel-blocked feature map directly: where a
// blocked-layout chain (providers/cpu/rewrites/blocked_layout.h) ends in
//   FromBlocked(v#blocked) -> v -> Flatten(axis 1) -> f -> Gemm / FusedGemm / MatMul /
//   FusedMatMul(f, B constant)
// (the CIFAR CNN's conv stack into its first dense layer), Flatten reads v#blocked as it
// is stored and B's k axis is permuted once to that storage order instead: plain Flatten
// puts channel c, position s at k = c * HW + s; the blocked one (channel block b, all C
// channels for channels-last) at (c / b) * HW * b + s * b + c % b. The same products are
// summed, in another order; the FromBlocked transpose of the whole feature map is gone
// (0.17 ms of the CIFAR CNN's 10 ms at batch 128, where the map is read back from memory).
//
// Conditions: all nodes are assigned to `provider`; v and f each have that one reader and
// are not graph outputs; v's logical shape [N, C, spatial...] has static C and spatial
// sizes; the product takes f as A (Gemm without transA) and B is a 2-D float initializer
// with C * HW along k. B is permuted in place when nothing else reads it, else into a new
// initializer. Training graphs are left alone (as the blocked-layout pass leaves them).
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Rewrites `graph` (partitioned, after UseChannelBlockedLayout); returns the number of
// FromBlocked nodes removed.
int FlattenBlockedIntoDense(Graph& graph, const std::string& provider);

}  // namespace tandem::cpu
