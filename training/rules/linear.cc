// Gradients of MatMul and Gemm, written with MatMul/Gemm/Transpose themselves, and of
// ai.tandem DenseChain (optimizer/dense_chain_fusion.h) as one fused DenseChainGrad.
// A MatMul by a 2-D matrix of known dims (a linear layer: X [..., K] W [K, N]) gets its
// gradients as two Gemms over X and dY seen as [rows, K] and [rows, N] (Reshape views):
// dW = X^T dY in one product whose inner dimension runs over every row of the batch, with no
// transposed copy of X, no batch of per-image products and no sum of them after.
#include <optional>

#include "graph/static_shape.h"
#include "training/rules/register.h"

namespace tandem::training::rules {

namespace {

// Rank of a value from shape inference, or -1.
int RankOf(const GradientContext& c, const std::string& v) {
  auto init = c.graph().initializers.find(v);
  if (init != c.graph().initializers.end()) return init->second.rank();
  const ValueInfo* vi = c.graph().FindValueInfo(v);
  return vi && vi->shape.rank_known ? static_cast<int>(vi->shape.dims.size()) : -1;
}

// v with its last two axes swapped: a Transpose when the rank is known, else
// ai.tandem SwapLastAxes (any rank >= 2, found at run time).
std::string TransposeLast2(GradientContext& c, const std::string& v, int rank) {
  if (rank < 0) return c.Emit1("SwapLastAxes", {v}, {}, kTandemDomain);
  std::vector<int64_t> perm(rank);
  for (int i = 0; i < rank; ++i) perm[i] = i;
  std::swap(perm[rank - 1], perm[rank - 2]);
  return c.Emit1("Transpose", {v}, {{"perm", GradientContext::Ints(perm)}});
}

// dX and dW of Y = MatMul(X, W) for W [K, N] and X of rank `rx` >= 2 (-1: unknown, >= 2).
void LinearGradients(GradientContext& c, int64_t K, int64_t N, int rx) {
  auto rows_of = [&](const std::string& v, int64_t cols) {
    if (rx == 2) return v;
    Tensor shape = Tensor::Host(DataType::kInt64, {2});
    shape.data<int64_t>()[0] = -1;
    shape.data<int64_t>()[1] = cols;
    return c.Emit1("Reshape", {v, c.Constant(shape)});
  };
  const std::string dy = rows_of(c.dY(0), N);
  if (c.wants(0)) {
    const std::string g = c.Emit1("Gemm", {dy, c.X(1)}, {{"transB", GradientContext::Int(1)}});
    c.SetInputGrad(0, rx == 2 ? g : c.Emit1("Reshape", {g, c.Emit1("Shape", {c.X(0)})}));
  }
  if (c.wants(1))
    c.SetInputGrad(1, c.Emit1("Gemm", {rows_of(c.X(0), K), dy}, {{"transA", GradientContext::Int(1)}}));
}

}  // namespace

void RegisterLinearGradients(GradientRegistry& r) {
  r.Add("MatMul", [](GradientContext& c) {
    // Unknown ranks (-1) are taken to be >= 2 and checked by SwapLastAxes at run time.
    int ra = RankOf(c, c.X(0)), rb = RankOf(c, c.X(1));
    if ((ra >= 0 && ra < 2) || (rb >= 0 && rb < 2))
      return absl::UnimplementedError("MatMul gradient of a vector operand (rank 1) is not supported");
    if (const std::optional<Dims> w = StaticDims(c.graph(), c.X(1)); w && w->size() == 2 && (*w)[0] > 0 && (*w)[1] > 0) {
      LinearGradients(c, (*w)[0], (*w)[1], ra);
      return absl::OkStatus();
    }
    if (c.wants(0)) {
      std::string g = c.Emit1("MatMul", {c.dY(0), TransposeLast2(c, c.X(1), rb)});
      c.SetInputGrad(0, c.SumToShapeOf(g, c.X(0)));
    }
    if (c.wants(1)) {
      std::string g = c.Emit1("MatMul", {TransposeLast2(c, c.X(0), ra), c.dY(0)});
      c.SetInputGrad(1, c.SumToShapeOf(g, c.X(1)));
    }
    return absl::OkStatus();
  });

  // Y = alpha * A' B' + beta * C with A' = transA ? A^T : A, B' likewise.
  r.Add("Gemm", [](GradientContext& c) {
    const Node& n = c.node();
    float alpha = n.attr_float("alpha", 1.f), beta = n.attr_float("beta", 1.f);
    int64_t ta = n.attr_int("transA", 0), tb = n.attr_int("transB", 0);
    auto gemm = [&](const std::string& a, const std::string& b, int64_t t_a, int64_t t_b) {
      return c.Emit1("Gemm", {a, b},
                     {{"alpha", GradientContext::Float(alpha)},
                      {"transA", GradientContext::Int(t_a)},
                      {"transB", GradientContext::Int(t_b)}});
    };
    if (c.wants(0))
      c.SetInputGrad(0, ta ? gemm(c.X(1), c.dY(0), tb, 1) : gemm(c.dY(0), c.X(1), 0, tb ? 0 : 1));
    if (c.wants(1))
      c.SetInputGrad(1, tb ? gemm(c.dY(0), c.X(0), 1, ta) : gemm(c.X(0), c.dY(0), ta ? 0 : 1, 0));
    if (c.wants(2)) {
      std::string g = c.dY(0);
      if (beta != 1.f) g = c.Emit1("Mul", {g, c.ScalarLike(beta, g)});
      c.SetInputGrad(2, c.SumToShapeOf(g, c.X(2)));
    }
    return absl::OkStatus();
  });

  // (X, W_1, B_1, ..., W_n, B_n) -> Y: DenseChainGrad(dY, X, W_1, ...) -> (dX, dW_1, dB_1, ...),
  // the same attributes; outputs nobody reads are dropped by the gradient builder.
  r.Add(
      "DenseChain",
      [](GradientContext& c) -> absl::Status {
        if (!c.has_dY(0)) return absl::OkStatus();
        const Node& n = c.node();
        std::vector<std::string> inputs = {c.dY(0)};
        inputs.insert(inputs.end(), n.inputs.begin(), n.inputs.end());
        auto grads = c.Emit("DenseChainGrad", inputs, static_cast<int>(n.inputs.size()), n.attributes,
                            kTandemDomain);
        for (size_t i = 0; i < grads.size(); ++i)
          if (c.wants(i)) c.SetInputGrad(i, grads[i]);
        return absl::OkStatus();
      },
      kTandemDomain);
}

}  // namespace tandem::training::rules
