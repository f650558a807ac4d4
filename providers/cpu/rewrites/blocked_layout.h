// Channel-blocked layout along CPU convolution chains.
//
// oneDNN's convolutions and pools compute in a channel-blocked layout: a logical
// [N, C, H, W] float tensor stored as [N, C/B, H, W, B] (B = 8 with AVX2's jit kernels, 16
// with AVX-512's) or channels-last (AVX-512's brgemm kernels; stored as [N, 1, H, W, C],
// block kChannelsLast; providers/cpu/channel_block.h). dnnl_util.h ConvChannelBlock() says
// which. A Conv between plain tensors reorders its input in and its output out — on
// mobilenet_v2 a third of the run. This pass keeps values blocked from the Conv that
// writes them to the last reader that can take them:
//   - a float 2-D Conv / FusedConv with constant weights and output channels divisible by
//     B (any number with kChannelsLast) writes blocked (it becomes FusedConv with
//     channel_block = B) and reads its input blocked when that input's producer writes
//     blocked; one whose output channels no block divides (mobilenet_v2's 24, a
//     1000-class head) still reads a blocked input as it is and writes plain
//     (channel_block = B, blocked_output = 0);
//   - with channels-last, a 2-D QLinearConv on oneDNN's int8 convolution (constant int8
//     weights of zero point 0, VNNI or AMX) reads and writes 8-bit channels-last tensors;
//   - element-wise unary ops (Gelu, QuantizeLinear / DequantizeLinear per tensor among them, and
//     QLinearLookup with its constant table), QLinearAdd / QLinearMul (rewrites/quantized_add.h)
//     of two blocked values, element-wise Add/Sub/Mul/Div/Sum/Max/Min/Mean whose inputs
//     are all blocked (or one-element constants), and Concat on the channel axis of
//     blocked inputs run unchanged on the blocked tensors (the same elements, permuted
//     alike; broadcasting between two blocked [N, C, H, W] values lines up the same way);
//   - a Resize that keeps N and C (constant scales or sizes, or inferred shapes, say so;
//     not tf_crop_and_resize) reads and writes blocked, resizing each pixel's channel
//     vector at once (kernels/nn/resize_separable.h) — unless nothing reads its output
//     blocked: then it reads plain, and the smaller map is the one converted. For the same
//     reason a Resize of a plain [N, C, H, W] map (C a multiple of B) to at least as many
//     pixels, whose output a convolution reads through sole readers that then run blocked
//     (unary ops, Gelu, a Concat on channels of blocked values and such Resizes), reads its
//     input through a ToBlocked node and writes blocked;
//   - MaxPool / AveragePool (without Indices), GlobalAveragePool / GlobalMaxPool,
//     inference BatchNormalization and FusedGroupNorm (rewrites/group_norm.h) of a blocked
//     input get channel_block = B and read and write blocked; a ReduceMean of a blocked input over both spatial axes with keepdims
//     (a squeeze-and-excitation pool as exporters write it) becomes such a
//     GlobalAveragePool;
//   - with channels-last, a network's first convolution (a plain float image of at most 4
//     channels, group 1) read only by a 2-D MaxPool writes image_block's 8- or 16-channel
//     blocks instead (oneDNN's jit kernels read the image as it is; its brgemm kernels
//     need it reordered to channels-last, and nothing else writes channels-last from it)
//     and the pool reads them (input_channel_block) and writes channels-last.
// A blocked value is renamed "<name>#blocked"; where anything else reads the original
// name (another op, a graph output, a subgraph, another provider's Copy), a FromBlocked
// node placed after the producer writes it in the plain layout. Only nodes assigned to
// `provider` are rewritten. Training graphs (any ai.tandem *Grad node) are left alone:
// their backward kernels read plain activations.
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Rewrites `graph` (partitioned, in execution order) and returns the number of nodes that
// now run channel-blocked (FromBlocked nodes not counted). `block`: 8, 16 or kChannelsLast
// (anything else, such as 0, leaves the graph alone). `image_block`: 8 or 16, the blocks
// of first convolutions before a pool with kChannelsLast (dnnl_util.h ChannelBlock());
// 0 keeps them channels-last too.
int UseChannelBlockedLayout(Graph& graph, const std::string& provider, int block, int image_block = 0);

}  // namespace tandem::cpu
