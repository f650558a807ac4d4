// The channel_block attribute of the CPU provider's channel-blocked layout
// (providers/cpu/rewrites/blocked_layout.h): how a logical [N, C, spatial...] float tensor is stored.
//   0   plain [N, C, spatial...];
//   B   [N, C/B, spatial..., B] (oneDNN's nChw8c / nChw16c for B = 8 / 16), C a multiple of B;
//   kChannelsLast   one block of all C channels, [N, 1, spatial..., C]: the bytes of
//       channels-last (nhwc), for any C.
// In every blocked case the stored tensor has one dimension more than the logical one and
// its last dimension is its block.
#pragma once
#include <cstdint>

namespace tandem::cpu {

constexpr int kChannelsLast = -1;

// At most this many channels, a plain convolution input is an image (a network's first
// layer): oneDNN's jit kernels read it as it is into channel blocks (kernels/nn/conv.cc), so
// the blocked-layout pass lets such a convolution write blocks even with channels-last.
constexpr int64_t kImageChannels = 4;

}  // namespace tandem::cpu
