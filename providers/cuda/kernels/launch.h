// Launchers of Tandem's own CUDA kernels (.cu files), with plain C++ signatures so the
// kernel classes (.cc, compiled by the host compiler) never include device code. Every
// launcher enqueues on `stream` and returns the launch's cudaError_t. Float32 data;
// shapes of rank <= kMaxRank, broadcast dims carried as stride 0.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace tandem::cuda {

constexpr int kMaxRank = 8;

// Output dims and, per operand, the element stride along each output dim (0 = broadcast).
struct StridedIndex {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t stride_a[kMaxRank] = {};
  int64_t stride_b[kMaxRank] = {};
};

enum class UnaryOp { kRelu, kTanh, kSigmoid, kExp, kLog, kNeg, kAbs, kSqrt, kLeakyRelu, kElu,
                     kReciprocal, kScale, kClip, kHardSigmoid, kHardSwish };
// y = op(x) (alpha: LeakyRelu/Elu slope, kScale factor, kClip's lower bound, HardSigmoid's
// alpha; beta: kClip's upper bound, HardSigmoid's beta; kClip keeps NaN).
cudaError_t LaunchUnary(UnaryOp op, const float* x, float* y, int64_t n, float alpha,
                        cudaStream_t stream, float beta = 0.f);

// y = op(a, b). Gradient ops take (dY, saved) in that order: ReluGrad(dY, Y),
// TanhGrad(dY, Y), SigmoidGrad(dY, Y), LeakyReluGrad(dY, X) with alpha.
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kReluGrad, kTanhGrad,
                      kSigmoidGrad, kLeakyReluGrad };
// `index` null: a, b and y are all n elements (no broadcasting).
cudaError_t LaunchBinary(BinaryOp op, const float* a, const float* b, float* y, int64_t n,
                         const StridedIndex* index, float alpha, cudaStream_t stream);

// y[i] = value.
cudaError_t LaunchFill(float* y, int64_t n, float value, cudaStream_t stream);
// y = x gathered through index.stride_a (Expand, Transpose: any strided view of x).
cudaError_t LaunchStridedCopy(const float* x, float* y, int64_t n, const StridedIndex& index,
                              cudaStream_t stream);
// y[offset of i through index.stride_a] = x[i]: the inverse of a strided copy whose
// offsets are distinct (SliceGrad writes dY into dX's selected elements).
cudaError_t LaunchStridedScatter(const float* x, float* y, int64_t n, const StridedIndex& index,
                                 cudaStream_t stream);
// Clip's gradient to X: dx = dy where lo <= x <= hi (and where x is NaN), else 0.
cudaError_t LaunchClipGrad(const float* dy, const float* x, float* dx, int64_t n, float lo, float hi,
                           cudaStream_t stream);
// y += x (n elements).
cudaError_t LaunchAccumulate(const float* x, float* y, int64_t n, cudaStream_t stream);

// Sums x (dims, row-major) over the dims with reduced[d], times `scale`, into y laid
// out as the kept dims in order. Accumulates in double.
struct ReduceGeometry {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  bool reduced[kMaxRank] = {};
};
// `scratch`: ReduceScratchBytes(g) bytes of device memory (null when that is 0), for the
// partial sums of a reduction split into parts.
size_t ReduceScratchBytes(const ReduceGeometry& g);
cudaError_t LaunchReduceSum(const float* x, float* y, const ReduceGeometry& g, float scale, double* scratch,
                            cudaStream_t stream);

// Fused optimizer updates over n elements, in place (PyTorch's torch.optim formulas; see
// providers/cpu/kernels/training/optimizer_ops.cc). The step (int64, 1-based) and the learning
// rate (float) are read on the device, so a recorded CUDA graph replays with the values
// the trainer copies there before each step; each block derives the bias corrections
// from them in double, as the CPU does.
struct AdamParams {
  double beta1, beta2, weight_decay;
  float b1c, b2, b2c, eps, wd;
  int mode;  // 0 no weight decay, 1 L2 added to the gradient, 2 decoupled (AdamW)
};
cudaError_t LaunchAdam(float* p, const float* g, float* m, float* v, int64_t n, const int64_t* step, const float* lr,
                       const AdamParams& k, cudaStream_t stream);
cudaError_t LaunchSgd(float* p, const float* g, float* velocity, int64_t n, const int64_t* step, const float* lr,
                      float wd, float momentum, float damp, bool nesterov,
                      cudaStream_t stream);  // velocity null: plain SGD

// Cross-entropy over classes (class_loss.cu): x [N, C, D...] read as n * d rows of c
// classes strided by d; int64 labels [N, D...]; weight [C] or null.
struct ClassLossArgs {
  const float* x = nullptr;
  const int64_t* labels = nullptr;
  const float* weight = nullptr;
  int64_t n = 0, c = 0, d = 1;
  bool log_probs_given = false;  // NegativeLogLikelihoodLoss: x holds log-probabilities
  bool has_ignore = false;
  int64_t ignore_index = 0;
};
// Per row: loss_row = -logp[label] * w[label] (0 when ignored, NaN for a label out of
// range), weight_row = w[label] (0 when ignored); log_prob = x - logsumexp (softmax
// only). Any output may be null.
cudaError_t LaunchClassLossRows(const ClassLossArgs& a, float* loss_row, float* weight_row, float* log_prob,
                                cudaStream_t stream);
// out[0] = sum(v) / (sum(denom_values) when given, else denom): one block, double sums.
cudaError_t LaunchSumDivided(const float* v, int64_t n, const float* denom_values, double denom, float* out,
                             cudaStream_t stream);
// dx of the loss: dY per row (reduction none) or dy[0] / (denom_device[0] or denom),
// times the row's label weight; plus the dLogProb term when given (softmax only).
cudaError_t LaunchClassLossGrad(const ClassLossArgs& a, const float* dy, bool dy_per_row, const float* denom_device,
                                double denom, const float* dlogp, float* dx, cudaStream_t stream);

// BatchNormalization (batch_norm.cu). From cuDNN's saved batch mean and 1 / sqrt(var +
// eps) per channel: running = input * momentum + batch * (1 - momentum) with the biased
// batch variance (as ONNX and the CPU), and the batch mean/var themselves; null outputs
// are skipped.
struct BatchNormStats {
  const float *save_mean = nullptr, *save_inv_std = nullptr, *input_mean = nullptr, *input_var = nullptr;
  float *running_mean = nullptr, *running_var = nullptr, *batch_mean = nullptr, *batch_var = nullptr;
  double epsilon = 0, momentum = 0;
  int64_t channels = 0;
};
cudaError_t LaunchBatchNormStats(const BatchNormStats& s, cudaStream_t stream);
// The gradient with constant statistics (training_mode = 0), x and dy [n, channels, s]:
// dx = dy * scale / sqrt(var + eps), dscale = sum(dy * (x - mean)) / sqrt(var + eps),
// dbias = sum(dy); null outputs are skipped.
struct BatchNormConstGrad {
  const float *dy = nullptr, *x = nullptr, *scale = nullptr, *mean = nullptr, *var = nullptr;
  float *dx = nullptr, *dscale = nullptr, *dbias = nullptr;
  double epsilon = 0;
  int64_t n = 0, channels = 0, s = 1;
};
cudaError_t LaunchBatchNormConstGrad(const BatchNormConstGrad& g, cudaStream_t stream);

// Training-mode Dropout (dropout.cu): y = keep ? x / (1 - ratio) : 0 with the CPU's mask
// function of (seed, counter, i, ratio); mask (bool, may be null) records it. The
// counter is read on the device from `device_counter` (the trainer's step, so a recorded
// CUDA graph draws a new mask per replay), or is `host_counter` when that is null. The
// gradient: dx = mask ? dy / (1 - ratio) : 0. With `device_first_row` (data-parallel
// training: the global index of this rank's first batch row, on the device) element i
// draws as element first_row * row_elements + i of the global batch.
cudaError_t LaunchDropout(const float* x, float* y, bool* mask, int64_t n, uint64_t seed, const int64_t* device_counter,
                          uint64_t host_counter, const int64_t* device_first_row, int64_t row_elements, float ratio,
                          cudaStream_t stream);
cudaError_t LaunchDropoutGrad(const float* dy, const bool* mask, float* dx, int64_t n, float ratio, cudaStream_t stream);

// Gather (gather.cu): y ([outer, count, inner] of n elements) from x ([outer, axis_len,
// inner]) at `count` indices (int64 or int32; negative from the end; out of range: NaN).
cudaError_t LaunchGather(const float* x, const void* indices, bool int64_indices, float* y, int64_t n, int64_t count,
                         int64_t axis_len, int64_t inner, cudaStream_t stream);

// GatherGrad (gather.cu): dx ([outer, axis_len, inner], zeroed here) gets every dy
// element ([outer, count, inner], n of them) added at its index (negative from the end;
// out of range: skipped). Atomic adds: the order of equal indices' sums is not fixed.
cudaError_t LaunchGatherGrad(const float* dy, const void* indices, bool int64_indices, float* dx, int64_t dx_numel,
                             int64_t n, int64_t count, int64_t axis_len, int64_t inner, cudaStream_t stream);

// Pad (pad.cu): y (out dims) from x (in dims), each output position reading x at
// PadSourceIndex per dim (ops/pad_geometry.h) or `value` where any dim says -1.
struct PadIndex {
  int rank = 0;
  int64_t out[kMaxRank] = {}, in[kMaxRank] = {}, before[kMaxRank] = {};
  int mode = 0;  // a tandem::PadMode
  float value = 0;
};
cudaError_t LaunchPad(const float* x, float* y, int64_t n, const PadIndex& index, cudaStream_t stream);

// LayerNormalization (layer_norm.cu) over rows of `inner` elements, statistics in double:
// y = (x - mean) * inv_std * scale + bias (scale, bias: `inner` values; bias may be null);
// mean and inv_std per row (each may be null).
cudaError_t LaunchLayerNorm(const float* x, const float* scale, const float* bias, float* y, float* mean,
                            float* inv_std, int64_t rows, int64_t inner, float epsilon, cudaStream_t stream);
// Its gradient: dx (may be null) and, summed over rows, dscale = sum(dy * xhat) and dbias
// = sum(dy) (each may be null). Scratch: row_mean / row_inv_std `rows` floats each, and
// `partial` LayerNormGradScratchDoubles(rows, inner) doubles.
int64_t LayerNormGradScratchDoubles(int64_t rows, int64_t inner);
cudaError_t LaunchLayerNormGrad(const float* dy, const float* x, const float* scale, float* dx, float* dscale,
                                float* dbias, float* row_mean, float* row_inv_std, double* partial, int64_t rows,
                                int64_t inner, float epsilon, cudaStream_t stream);

}  // namespace tandem::cuda
