// fma_loop.h's loop built with AVX-512F + FMA (cmake/library.cmake sets the flags for this file).
#define FMA_LOOP_LANES 16
#include "bench/fma_loop_impl.h"

float tandem::bench::FmaChains512(long iterations) { return FmaLoopChains<kFmaChains512>(iterations); }
