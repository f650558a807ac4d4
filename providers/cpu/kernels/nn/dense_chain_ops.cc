// ai.tandem DenseChain and DenseChainGrad (float32): a chain of dense layers with
// activations, fused so that a batch streams through it in tiles of rows that stay in
// cache (optimizer/dense_chain_fusion.h makes them out of Gemm + activation chains):
//   DenseChain(X, W_1, B_1, ..., W_n, B_n) -> Y
//   DenseChainGrad(dY, X, W_1, B_1, ..., W_n, B_n) -> (dX, dW_1, dB_1, ..., dW_n, dB_n)
//   DenseChainMseGrad(X, T, W_1, B_1, ..., W_n, B_n) -> (loss, dX, dW_1, dB_1, ..., dW_n, dB_n)
//       the chain's mean squared error against T (attribute reduction: mean or sum, as
//       MSELoss) and its gradients, in one pass: the training step of an MLP regressor
//       (optimizer/dense_chain_loss_fusion.h) without a separate forward or loss node
// X is [M, K_0]; W_l is [K_l, K_{l-1}] (trans_b[l] = 1, PyTorch's Linear) or [K_{l-1}, K_l]
// (trans_b[l] = 0); B_l holds K_l elements ([K_l] or [1, K_l]); attribute `activations`
// names each layer's Identity, Relu, Tanh or Sigmoid. The gradient kernel recomputes the
// forward activations tile by tile instead of reading them from memory; any of its
// outputs may be omitted. Weight and bias gradients are summed in double, per thread in
// row order, then across threads in thread order (results depend only on the thread count).
#include <algorithm>
#include <optional>

#include "ops/loss_reduction.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/microkernels/dense_chain_tiles.h"
#include "providers/cpu/microkernels/tanh_arrays.h"
#include "providers/cpu/microkernels/isa_dispatch.h"

namespace tandem::cpu {

namespace dense_chain {

extern const TileKernels kBaselineTileKernels, kAvx2TileKernels;  // one per build (isa_dispatch.h)

const IsaBuilds<TileKernels>& Builds() {
  return BuildsOf(kBaselineTileKernels, TANDEM_AVX2_TABLE(kAvx2TileKernels), nullptr);
}

void ActivateTranscendental(Act act, float* v, int64_t n) {
  if (act == Act::kTanh) {
    tanh_arrays::Tanh(v, v, n);
  } else if (act == Act::kSigmoid) {
    for (int64_t i = 0; i < n; ++i) v[i] = 1.f / (1.f + std::exp(-v[i]));
  }
}

void Chain::Finish() {
  max_width = in();
  width_before.assign(1, 0);
  sum_offset.clear();
  sums = 0;
  for (const Layer& L : layers) {
    max_width = std::max(max_width, L.out);
    width_before.push_back(width_before.back() + L.in);
    sum_offset.push_back(sums);
    sums += (L.in + 1) * L.out;
  }
  width_before.push_back(width_before.back() + out());
}

}  // namespace dense_chain

namespace {

using dense_chain::Act;
using dense_chain::Chain;
using dense_chain::kNarrow;
using dense_chain::kWide;
using dense_chain::Layer;

constexpr int64_t kParallelRows = 2048;
constexpr int kFlushTiles = 16;  // wide tiles between adding the float lanes into the double sums

// The tiles of M rows: M / kWide wide ones, then narrow ones, then single rows.
struct Tiling {
  explicit Tiling(int64_t m)
      : rows(m), wide(m / kWide), narrow(m % kWide / kNarrow), count(wide + narrow + m % kNarrow) {}
  enum Kind { kWideTile, kNarrowTile, kSingleRow };
  Kind kind(int64_t i) const { return i < wide ? kWideTile : i < wide + narrow ? kNarrowTile : kSingleRow; }
  int64_t begin(int64_t i) const {
    return i < wide ? i * kWide : i < wide + narrow ? wide * kWide + (i - wide) * kNarrow
                                                    : wide * kWide + narrow * kNarrow + (i - wide - narrow);
  }
  int64_t size(int64_t i) const { return kind(i) == kWideTile ? kWide : kind(i) == kNarrowTile ? kNarrow : 1; }
  int64_t rows, wide, narrow, count;
};

class DenseChainBase : public Kernel {
 public:
  DenseChainBase(std::vector<Act> acts, std::vector<int64_t> trans_b)
      : acts_(std::move(acts)), trans_b_(std::move(trans_b)) {}

 protected:
  // Reads X (input x_index) and the layers (inputs from `first_layer` on, the last ones)
  // into chain_, checking shapes; weights stored [in][out] are transposed into packed_.
  absl::Status ReadChain(KernelContext& ctx, int x_index, int first_layer) {
    const Tensor* x = ctx.input(x_index);
    const size_t n = acts_.size();
    if (!x || ctx.num_inputs() != first_layer + 2 * static_cast<int>(n))
      return absl::InvalidArgumentError("expects X and a weight and bias per layer (" + std::to_string(n) +
                                        " layers)");
    if (x->dtype() != DataType::kFloat || x->rank() != 2)
      return absl::InvalidArgumentError("X must be a float32 matrix, got " + DimsToString(x->dims()));
    chain_.layers.resize(n);
    packed_.resize(n);
    int64_t width = x->dims()[1];
    for (size_t l = 0; l < n; ++l) {
      const Tensor* w = ctx.input(first_layer + 2 * static_cast<int>(l));
      const Tensor* b = ctx.input(first_layer + 1 + 2 * static_cast<int>(l));
      auto layer = [l] { return "layer " + std::to_string(l + 1) + ": "; };
      if (!w || !b || w->dtype() != DataType::kFloat || b->dtype() != DataType::kFloat || w->rank() != 2)
        return absl::InvalidArgumentError(layer() + "W must be a float32 matrix and B a float32 vector");
      const int64_t in = w->dims()[trans_b_[l] ? 1 : 0], out = w->dims()[trans_b_[l] ? 0 : 1];
      if (in != width || b->numel() != out || b->rank() > 2 || (b->rank() == 2 && b->dims()[0] != 1))
        return absl::InvalidArgumentError(layer() + "W " + DimsToString(w->dims()) + " and B " +
                                          DimsToString(b->dims()) + " do not follow an input of width " +
                                          std::to_string(width));
      Layer& L = chain_.layers[l];
      L.in = in;
      L.out = out;
      L.act = acts_[l];
      L.b = b->data<float>();
      if (trans_b_[l]) {
        L.w = w->data<float>();
      } else {
        packed_[l].resize(static_cast<size_t>(in * out));
        for (int64_t k = 0; k < in; ++k)
          for (int64_t j = 0; j < out; ++j) packed_[l][j * in + k] = w->data<float>()[k * out + j];
        L.w = packed_[l].data();
      }
      width = out;
    }
    chain_.Finish();
    return absl::OkStatus();
  }

  // Threads sharing the tiles: all of them when the batch is large enough to pay for it.
  static int Parts(const KernelContext& ctx, const Tiling& tiles) {
    return tiles.rows >= kParallelRows
               ? static_cast<int>(std::min<int64_t>(std::max(1, ctx.num_threads()), tiles.count))
               : 1;
  }

  // Calls f(p, first tile, end tile, scratch) for each of `parts` parts of the tiles.
  template <typename F>
  void ForEachPart(int parts, const Tiling& tiles, F&& f) {
    scratch_.resize(static_cast<size_t>(parts));
    for (auto& s : scratch_) s.resize(static_cast<size_t>(chain_.ScratchFloats()));
    ParallelForIf(parts > 1, parts, [&](int64_t p) {
      f(static_cast<int>(p), tiles.count * p / parts, tiles.count * (p + 1) / parts, scratch_[p].data());
    });
  }

  std::vector<Act> acts_;
  std::vector<int64_t> trans_b_;
  Chain chain_;
  std::vector<std::vector<float>> packed_;
  std::vector<std::vector<float>> scratch_;  // per part
};

class DenseChain : public DenseChainBase {
 public:
  using DenseChainBase::DenseChainBase;

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status st = ReadChain(ctx, 0, 1);
    if (!st.ok()) return st;
    const float* x = ctx.input(0)->data<float>();
    const Tiling tiles(ctx.input(0)->dims()[0]);
    float* y = ctx.AllocateOutput(0, DataType::kFloat, {tiles.rows, chain_.out()}).data<float>();
    const auto& k = dense_chain::Builds().best();
    ForEachPart(Parts(ctx, tiles), tiles, [&](int, int64_t begin, int64_t end, float* scratch) {
      for (int64_t i = begin; i < end; ++i) {
        const auto kind = tiles.kind(i);
        (kind == Tiling::kWideTile     ? k.forward_wide
         : kind == Tiling::kNarrowTile ? k.forward_narrow
                                       : k.forward_single)(chain_, x, tiles.begin(i), tiles.size(i), scratch, y);
      }
    });
    return absl::OkStatus();
  }
};

// DenseChainGrad, or with a target DenseChainMseGrad (`mse` set: inputs X, T, layers;
// outputs loss, dX, then the layers' gradients).
class DenseChainGrad : public DenseChainBase {
 public:
  DenseChainGrad(std::vector<Act> acts, std::vector<int64_t> trans_b, std::optional<LossReduction> mse)
      : DenseChainBase(std::move(acts), std::move(trans_b)), mse_(mse) {}

  absl::Status Compute(KernelContext& ctx) override {
    const int x_index = mse_ ? 0 : 1, first_layer = 2, dx_output = mse_ ? 1 : 0;
    absl::Status st = ReadChain(ctx, x_index, first_layer);
    if (!st.ok()) return st;
    const Tensor& x = *ctx.input(x_index);
    const Tiling tiles(x.dims()[0]);
    const Tensor* given = ctx.input(mse_ ? 1 : 0);
    if (!given || given->dtype() != DataType::kFloat || given->dims() != Dims{tiles.rows, chain_.out()})
      return absl::InvalidArgumentError(std::string(mse_ ? "T" : "dY") + " must be float32 [" +
                                        std::to_string(tiles.rows) + "," + std::to_string(chain_.out()) + "], got " +
                                        DimsToString(given ? given->dims() : Dims{}));
    dense_chain::OutputGrad og;
    const double elements = static_cast<double>(tiles.rows * chain_.out());
    if (mse_) {
      og.target = given->data<float>();
      og.scale = static_cast<float>(*mse_ == LossReduction::kMean ? 2.0 / std::max(elements, 1.0) : 2.0);
    } else {
      og.dy = given->data<float>();
    }
    float* dx = ctx.output_wanted(dx_output)
                    ? ctx.AllocateOutput(dx_output, DataType::kFloat, x.dims()).data<float>()
                    : nullptr;
    const auto& k = dense_chain::Builds().best();
    const size_t sums = static_cast<size_t>(chain_.sums);
    const int parts = Parts(ctx, tiles);
    sums_.resize(static_cast<size_t>(parts));
    lanes_.resize(static_cast<size_t>(parts));
    loss_.assign(static_cast<size_t>(parts), 0.0);
    ForEachPart(parts, tiles, [&](int p, int64_t begin, int64_t end, float* scratch) {
      std::vector<double>& total = sums_[p];
      std::vector<float>& lanes = lanes_[p];
      total.assign(sums, 0.0);
      const bool wide = begin < tiles.wide;
      if (wide) lanes.assign(sums * dense_chain::kLanes, 0.f);
      for (int64_t i = begin; i < end; ++i) {
        const auto kind = tiles.kind(i);
        if (kind == Tiling::kWideTile) {
          k.backward_wide(chain_, og, x.data<float>(), tiles.begin(i), tiles.size(i), scratch, lanes.data(),
                          &loss_[p], dx);
          if ((i - begin + 1) % kFlushTiles == 0) Flush(lanes, total);
        } else {
          (kind == Tiling::kNarrowTile ? k.backward_narrow : k.backward_single)(
              chain_, og, x.data<float>(), tiles.begin(i), tiles.size(i), scratch, total.data(), &loss_[p], dx);
        }
      }
      if (wide) Flush(lanes, total);
    });
    if (mse_) {
      double loss = 0;
      for (double part : loss_) loss += part;
      if (*mse_ == LossReduction::kMean) loss /= std::max(elements, 1.0);
      ctx.AllocateOutput(0, DataType::kFloat, {}).data<float>()[0] = static_cast<float>(loss);
    }
    // The parts' sums added in part order, then written in each weight's own layout.
    std::vector<double>& total = sums_[0];
    for (int p = 1; p < parts; ++p)
      for (size_t i = 0; i < sums; ++i) total[i] += sums_[p][i];
    for (size_t l = 0; l < chain_.layers.size(); ++l) {
      const Layer& L = chain_.layers[l];
      const double* layer_sums = total.data() + chain_.sum_offset[l];  // [out][in + 1], bias last
      const int wi = dx_output + 1 + 2 * static_cast<int>(l), bi = wi + 1;
      const int w_input = first_layer + 2 * static_cast<int>(l), b_input = w_input + 1;
      if (ctx.output_wanted(wi)) {
        float* dw = ctx.AllocateOutput(wi, DataType::kFloat, ctx.input(w_input)->dims()).data<float>();
        for (int64_t j = 0; j < L.out; ++j) {
          const double* row = layer_sums + j * (L.in + 1);
          if (trans_b_[l]) {
            for (int64_t k = 0; k < L.in; ++k) dw[j * L.in + k] = static_cast<float>(row[k]);
          } else {
            for (int64_t k = 0; k < L.in; ++k) dw[k * L.out + j] = static_cast<float>(row[k]);
          }
        }
      }
      if (ctx.output_wanted(bi)) {
        float* db = ctx.AllocateOutput(bi, DataType::kFloat, ctx.input(b_input)->dims()).data<float>();
        for (int64_t j = 0; j < L.out; ++j) db[j] = static_cast<float>(layer_sums[j * (L.in + 1) + L.in]);
      }
    }
    return absl::OkStatus();
  }

 private:
  // total[i] += the kLanes partial sums of entry i; the lanes restart at zero.
  static void Flush(std::vector<float>& lanes, std::vector<double>& total) {
    for (size_t i = 0; i < total.size(); ++i) {
      double s = 0;
      for (int v = 0; v < dense_chain::kLanes; ++v) s += lanes[i * dense_chain::kLanes + v];
      total[i] += s;
    }
    std::fill(lanes.begin(), lanes.end(), 0.f);
  }

  std::vector<std::vector<double>> sums_;  // per part: gradient sums, [out][in + 1] per layer
  std::vector<std::vector<float>> lanes_;  // per part: their kLanes partial sums in wide tiles
  std::vector<double> loss_;               // per part: squared errors (DenseChainMseGrad)
  std::optional<LossReduction> mse_;
};

absl::StatusOr<std::pair<std::vector<Act>, std::vector<int64_t>>> ReadAttributes(const Node& node) {
  std::vector<Act> acts;
  for (const std::string& a : node.attr_strings("activations")) {
    if (a == "Identity") acts.push_back(Act::kIdentity);
    else if (a == "Relu") acts.push_back(Act::kRelu);
    else if (a == "Tanh") acts.push_back(Act::kTanh);
    else if (a == "Sigmoid") acts.push_back(Act::kSigmoid);
    else return absl::InvalidArgumentError(node.Describe() + ": unknown activation '" + a + "'");
  }
  std::vector<int64_t> trans_b = node.attr_ints("trans_b", std::vector<int64_t>(acts.size(), 1));
  if (acts.empty() || trans_b.size() != acts.size())
    return absl::InvalidArgumentError(node.Describe() + ": needs one activation and one trans_b per layer");
  return std::make_pair(acts, trans_b);
}

// The kernel of a DenseChain (kForward), DenseChainGrad (kGrad) or DenseChainMseGrad (kMseGrad).
enum class ChainOp { kForward, kGrad, kMseGrad };

template <ChainOp kOp>
KernelFactory MakeChain() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    auto attrs = ReadAttributes(info.node);
    if (!attrs.ok()) return attrs.status();
    auto& [acts, trans_b] = *attrs;
    if constexpr (kOp == ChainOp::kForward) {
      return std::unique_ptr<Kernel>(new DenseChain(std::move(acts), std::move(trans_b)));
    } else {
      std::optional<LossReduction> mse;
      if (kOp == ChainOp::kMseGrad) {
        auto reduction = ParseLossReduction(info.node);
        if (!reduction.ok() || *reduction == LossReduction::kNone)
          return absl::InvalidArgumentError(info.node.Describe() + ": reduction must be mean or sum");
        mse = *reduction;
      }
      return std::unique_ptr<Kernel>(new DenseChainGrad(std::move(acts), std::move(trans_b), mse));
    }
  };
}

}  // namespace

void RegisterDenseChainKernels(KernelRegistry& r) {
  r.Add(TandemKernel("DenseChain", {DataType::kFloat}, MakeChain<ChainOp::kForward>(), 0));
  r.Add(TandemKernel("DenseChainGrad", {DataType::kFloat}, MakeChain<ChainOp::kGrad>(), 1));
  r.Add(TandemKernel("DenseChainMseGrad", {DataType::kFloat}, MakeChain<ChainOp::kMseGrad>(), 0));
}

}  // namespace tandem::cpu
