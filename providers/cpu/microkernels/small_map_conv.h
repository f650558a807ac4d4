// 3x3 convolutions (padding 1, stride 1 or 2, one group, float32) on small channels-last maps
// with large weights: resnet's last stage at batch 1 (512 -> 512 channels on 7x7: 9.4 MB of
// weights for 0.23 GFLOP). There the weights dwarf the activations and no longer
// stay in the cache from one call to the next; oneDNN's brgconv waits for them at each load
// (1.3-1.5x its time with cached weights). This path packs the weights once into panels of 64
// output channels ([panel][tap][C][64]); every thread takes a contiguous share of whole
// panels and, while one chunk of a panel's weights is multiplied, prefetches the next chunk
// into L2, so the weights stream in behind the arithmetic. Taps that fall on the padding are
// skipped, not multiplied by zero. Each output is its bias plus the taps' products summed in
// float32 with fused multiply-adds (kh, kw, then input channel in order): exact float32, no
// reduced precision. Measured in bench/results/2026-11-27-cpu-vs-ort-small-map-conv.md.
//
// The tile loops exist as an AVX-512 build only (small_map_conv_avx512.cc); elsewhere, and
// under ONEDNN_MAX_CPU_ISA below AVX-512 (cpu_isa.h), convolutions stay with oneDNN.
#pragma once
#include <cstdint>

#include "graph/tensor.h"
#include "providers/cpu/host_memory.h"
#include "providers/cpu/lazy_constant_copy.h"
#include "providers/cpu/microkernels/fused_activation.h"
#include "providers/cpu/microkernels/small_map_conv_tiles.h"  // kMaxPixels

namespace tandem::cpu::small_map {

constexpr int64_t kPanel = 64;  // output channels per panel

// A convolution's shape as this path sees it: x [n, h, w, c] and y [n, oh, ow, m], both
// channels-last, 3x3 window, padding 1 on every side, `stride` in both dimensions.
struct Shape {
  int64_t n, c, h, w, m, stride;
  int64_t oh() const { return (h - 1) / stride + 1; }
  int64_t ow() const { return (w - 1) / stride + 1; }
};

// Whether the AVX-512 tile loops may run here (built in, CPU has AVX-512F, cap admits it).
bool Available();

// Whether a convolution should take this path with `threads` threads: Available(), the
// shape above with at most kMaxPixels output pixels, m a multiple of kPanel with the panels
// shared evenly by the threads, and at least 2 MiB of weights (less stays cached, where
// oneDNN is as fast).
bool Suits(const Shape& s, int threads);

// w [m, c, 3, 3] (ONNX's OIHW) packed into panels.
class PackedWeights {
 public:
  PackedWeights(const float* w, int64_t m, int64_t c);
  const float* data() const { return static_cast<const float*>(data_.get()); }

 private:
  HostBuffer data_;
};

// A kernel's constant weights, packed by the first run that needs them; one copy per
// initializer in the process (packed_weights.h).
class LazyPackedWeights {
 public:
  const PackedWeights& Get(const Tensor& w, int64_t m, int64_t c);

 private:
  LazyConstantCopy<PackedWeights> copy_;
};

// y = sum_act(act(conv(x, w) + bias) + y) with `sum` (y holds the residual on entry), else
// y = act(conv(x, w) + bias). bias may be null. Needs Available() and s.m % kPanel == 0,
// oh * ow <= kMaxPixels; the panels spread over `threads` OpenMP threads.
void Run(const Shape& s, const float* x, const PackedWeights& w, const float* bias, const FusedActivation& act,
         bool sum, const FusedActivation& sum_act, float* y, int threads);

// Convolutions computed on this path since the process started (tests check that a case
// they mean for it took it).
int64_t ConvsRun();

}  // namespace tandem::cpu::small_map
