// Per-channel means of a channel-blocked float map, as GlobalAveragePool computes them on a
// blocked value (pool.cc): for FusedConv's optional Mean output where its Swish pass does not
// take them on the way (conv.cc).
#pragma once
#include <cstdint>

namespace tandem::cpu {

// y [outer, B] = the mean over the S pixels of x [outer, S, B] (B = 1: a plain map's planes),
// across the OpenMP team (channel_reduction.h).
void ChannelMeansBlocked(const float* x, float* y, int64_t outer, int64_t S, int64_t B, int threads);

}  // namespace tandem::cpu
