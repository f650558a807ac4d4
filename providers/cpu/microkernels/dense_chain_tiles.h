// The arithmetic of ai.tandem DenseChain / DenseChainGrad (dense_chain_ops.cc) on one tile
// of batch rows. A chain is Y = f_n(... f_1(X W_1^T + b_1) ... W_n^T + b_n); a tile keeps
// every layer's activations for its rows in cache, feature-major ([width][T]), so each
// multiply-add loop runs over the tile's rows and vectorizes at any layer width (an MLP
// of widths 2-20-5-1 has no inner dimension worth vectorizing over).
//
// The tile loops (dense_chain_tiles_impl.h) are compiled twice: for the baseline x86-64
// instruction set and with AVX2 + FMA; Builds().best() is the one that runs.
// Padding rows (a tile holding fewer rows than its width) have zero inputs and zero
// output gradients, so they add nothing to the weight and bias gradients.
#pragma once
#include <cstdint>
#include <vector>

#include "providers/cpu/microkernels/isa_dispatch.h"

namespace tandem::cpu::dense_chain {

constexpr int kWide = 32;   // rows of a full tile
constexpr int kNarrow = 8;  // rows of a tile of the remainder (and of batches under kWide)
                            // below that, single rows (a batch-1 step computes one row, not 8)
constexpr int kLanes = 8;   // partial sums per weight gradient within wide tiles

enum class Act { kIdentity, kRelu, kTanh, kSigmoid };

struct Layer {
  const float* w = nullptr;  // [out][in], row-major
  const float* b = nullptr;  // [out]
  int64_t in = 0, out = 0;
  Act act = Act::kIdentity;
};

struct Chain {
  std::vector<Layer> layers;
  // Derived by Finish():
  int64_t max_width = 0;              // of X and every layer output
  std::vector<int64_t> width_before;  // per activation a_l (a_0 = X): widths of a_0..a_{l-1}
  std::vector<int64_t> sum_offset;    // per layer: start of its gradient sums [out][in + 1] (bias last)
  int64_t sums = 0;                   // gradient sums of all layers

  void Finish();
  int64_t in() const { return layers.front().in; }
  int64_t out() const { return layers.back().out; }
  // Scratch floats one thread needs for a backward tile (a forward tile needs less).
  int64_t ScratchFloats() const { return (width_before.back() + 2 * max_width) * kWide; }
};

// Tanh and Sigmoid in place (tanh by the widest build of tanh_arrays.h).
void ActivateTranscendental(Act act, float* v, int64_t n);

// Where a backward tile's output gradient comes from: dY as given, or the mean squared
// error of the chain's output against `target` (DenseChainMseGrad): dY = scale (Y - target),
// with the tile's squared errors added to the loss sum.
struct OutputGrad {
  const float* dy = nullptr;
  const float* target = nullptr;
  float scale = 0.f;
};

struct TileKernels {
  // y rows [row, row + rows) of the chain's output, from the same rows of x.
  void (*forward_wide)(const Chain&, const float* x, int64_t row, int64_t rows, float* scratch, float* y);
  void (*forward_narrow)(const Chain&, const float* x, int64_t row, int64_t rows, float* scratch, float* y);
  void (*forward_single)(const Chain&, const float* x, int64_t row, int64_t rows, float* scratch, float* y);
  // Gradients of rows [row, row + rows): the weight and bias sums are added to `lanes`
  // ([sums][kLanes] floats, wide tiles) or to `sums` (narrow and single-row tiles); dx rows
  // written when set; with a target, the rows' squared errors are added to *loss.
  void (*backward_wide)(const Chain&, const OutputGrad&, const float* x, int64_t row, int64_t rows,
                        float* scratch, float* lanes, double* loss, float* dx);
  void (*backward_narrow)(const Chain&, const OutputGrad&, const float* x, int64_t row, int64_t rows,
                          float* scratch, double* sums, double* loss, float* dx);
  void (*backward_single)(const Chain&, const OutputGrad&, const float* x, int64_t row, int64_t rows,
                          float* scratch, double* sums, double* loss, float* dx);
};

// Every build this binary holds that the CPU can run and ONEDNN_MAX_CPU_ISA allows
// (providers/cpu/cpu_isa.h), the baseline first; tests run each, the kernels the widest.
const IsaBuilds<TileKernels>& Builds();

}  // namespace tandem::cpu::dense_chain
