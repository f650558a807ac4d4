// Token sequences read as channels-last maps. Transformers with convolutions (SegFormer's
// Mix-FFN and decode head, PVTv2's positional convolutions) turn tokens into a feature map
// and back as exporters write it:
//   t [N, HW, C] -> Transpose(0, 2, 1) -> Reshape [N, C, H, W] = m -> a convolution (or the
//     ToBlocked of an upsampling Resize: blocked_layout.h)
//   a blocked convolution -> FromBlocked -> m' [N, C, H, W] -> Reshape [N, C, HW]
//     -> Transpose(0, 2, 1) = u [N, HW, C]
// In the channels-last layout m is stored [N, 1, H, W, C]: the bytes of t, and u holds the
// bytes of the convolution's blocked output. So, after the blocked-layout pass, with
// kChannelsLast:
//   - a convolution with channel_block -1 reading m reads Reshape(t) to [N, 1, H, W, C]
//     instead, and a ToBlocked of m becomes that Reshape;
//   - the Transpose writing u becomes a Reshape of the blocked value to [N, HW, C];
// and the Transposes, Reshapes and FromBlocked nodes nothing reads any more are removed
// (SegFormer-B0 at 512²: one transpose of each map in and out of every Mix-FFN).
// Conditions: every node is assigned to `provider`; all shapes are static; HW = H * W.
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Rewrites `graph` (after UseChannelBlockedLayout with `block`; nothing unless block is
// kChannelsLast) and returns the number of transposes it removed.
int ReadTokensAsChannelsLast(Graph& graph, const std::string& provider, int block);

}  // namespace tandem::cpu
