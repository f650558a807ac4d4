// fma_loop.h's loop built with AVX2 + FMA (cmake/library.cmake sets the flags for this file).
#define FMA_LOOP_LANES 8
#include "bench/fma_loop_impl.h"

float tandem::bench::FmaChains256(long iterations) { return FmaLoopChains<kFmaChains256>(iterations); }
