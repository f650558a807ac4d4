// A per-channel reduction over the pixels of a channel-blocked float map, across the OpenMP
// team: the global pools of a blocked value (kernels/nn/pool.cc) and the channel means that
// a convolution's Swish pass takes on its way (microkernels/swish.h).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "providers/cpu/kernel_util.h"

namespace tandem::cpu {

// Reduces x [outer, S, B] (B may span every channel: channels-last) over its S pixels into
// y [outer, B]. A task takes `chunk` channels of one block (B: whole pixels); where that gives
// fewer than two tasks per thread (channels-last at batch 1), each task also takes one of
// several runs of the pixels — a share the thread that wrote it likely still has in its
// cache (oneDNN splits a convolution's output by rows) — and the runs' results are combined
// in run order. Parallel from 2^16 values, runs of at least 2^13.
//   reduce(o, k0, nk, s0, len, out): channels [k0, k0 + nk) of block o over pixels
//     [s0, s0 + len) into out[0, nk) (stored, not added);
//   combine(a, b): two runs' results, earlier first;  finish(v, S): the result from the
//     reduction over all S pixels (a mean divides).
template <typename Reduce, typename Combine, typename Finish>
void ReduceChannelBlocks(int64_t outer, int64_t S, int64_t B, int64_t chunk, int threads, float* y, Reduce&& reduce,
                         Combine&& combine, Finish&& finish) {
  constexpr int64_t kMinRun = 1 << 13;  // values per task of a split S
  const int64_t chunks = (B + chunk - 1) / chunk;
  const bool parallel = outer * S * B >= (1 << 16);
  const int64_t tasks = outer * chunks;
  const int64_t runs = parallel && threads > 1 && tasks < 2 * threads
                           ? std::max<int64_t>(1, std::min<int64_t>((2 * threads + tasks - 1) / tasks, S * B / kMinRun))
                           : 1;
  const int64_t run_len = (S + runs - 1) / runs;
  std::vector<float> partial(runs > 1 ? static_cast<size_t>(runs * outer * B) : 0);
  float* const out = runs > 1 ? partial.data() : y;
  ParallelForIf(parallel, tasks * runs, [&](int64_t task) {
    const int64_t run = task % runs, t = task / runs;
    const int64_t o = t / chunks, k0 = t % chunks * chunk, nk = std::min(chunk, B - k0);
    const int64_t s0 = run * run_len, len = std::min(run_len, S - s0);
    if (len > 0) reduce(o, k0, nk, s0, len, out + (run * outer + o) * B + k0);
  });
  const int64_t used = (S + run_len - 1) / run_len;  // runs holding at least one pixel
  for (int64_t i = 0; i < outer * B; ++i) {
    float acc = out[i];
    for (int64_t run = 1; run < used; ++run) acc = combine(acc, partial[static_cast<size_t>(run * outer * B + i)]);
    y[i] = finish(acc, S);
  }
}

}  // namespace tandem::cpu
