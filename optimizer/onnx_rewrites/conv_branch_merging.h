// Parallel branches of one input, added, merged into one convolution: the inference form of
// RepVGG, MobileOne, FastViT (its RepMixer and large-kernel convolutions) and RepViT, which
// timm's models export without unless reparameterized first. Add(A, B) or Sub(A, B) where A
// and B read the same X and each is one of
//  - Conv(X, W[, b]) with float32 initializer weights (and bias), 2 spatial dims, explicit or
//    VALID padding, dilations 1, its output read by this Add or Sub alone;
//  - BatchNormalization(X) in inference form (one output, initializer scale, bias, mean and
//    variance), read by this Add or Sub alone: X * a + s per channel;
//  - X itself (a = 1, s = 0).
// At least one is a Conv. Two Convs need the same group, strides, channels in and out, and
// each one's kernel must sit centered in the merged one (per spatial dim the larger of the
// two): the kernel sizes' difference even, and each side's pad smaller by half of it. A Conv
// with a per-channel branch needs stride 1, as many output channels as X has, and odd kernels
// padded by (k - 1) / 2 on every side, so that its center tap reads X at the output's pixel.
// The result is one Conv: W = W_A ± W_B (a smaller kernel embedded at the center; a
// per-channel branch as `a` on each channel's own center tap), b = b_A ± b_B (± s), summed
// in float64 and rounded once into new initializers, writing the Add's output in its place.
// Repeated until nothing merges, so chains of branches (Add(Add(A, B), C)) become one Conv.
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of Add and Sub nodes merged away.
int MergeConvBranches(Graph& graph);

}  // namespace tandem
