// Attention as exporters write it becomes one ai.tandem FusedAttention on the CPU
// (providers/cpu/rewrites/attention_fusion.h, kernels/nn/fused_attention.cc), and its
// results match a float64 reference computed here: PyTorch's dynamo form (the scale on Q
// and on the transposed K, a padding mask, IsNaN + Where after the Softmax: a row masked
// throughout gives zeros), the legacy form (a Div of the scores, a mask broadcast over
// batch and heads, K shared by the batch: a masked row gives NaN, as ONNX Softmax does),
// one query row widened by the mask, and no mask at all; the heads split by Transposes
// read in place. A Softmax output that is also a graph output keeps the graph apart. The row pass (microkernels/softmax_rows.h) is
// checked in each build the CPU can run against float64 exp, underflow, -inf and NaN.
// ctest's cpu_fused_attention_avx2 / _sse41 run these with the builds capped.
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "providers/cpu/microkernels/softmax_rows.h"
#include "runtime/session.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using tandem::testing::AddIntsAttribute;
using tandem::testing::AddNode;
using tandem::testing::SetFloatType;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

Tensor Pattern(const Dims& dims, float freq, float amp, float offset = 0.f) {
  Tensor t = Tensor::Host(DataType::kFloat, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = amp * std::sin(freq * static_cast<float>(i) + 0.3f) + offset;
  return t;
}

void AddScalar(onnx::GraphProto* g, const std::string& name, float value) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_float_data(value);  // rank 0
}

// The shapes of one case: Q [B, H, S, D], K [Bk, H, L, D] (given transposed or not), V
// [Bv, H, L, Dv], the mask's dims (any rank up to 4, right-aligned; empty: none).
struct Case {
  std::string name;
  int64_t B, H, S, D, L, Dv, Bk, Bv;
  Dims mask;
  bool dynamo;  // scale on Q and Kt, K transposed in the graph, IsNaN + Where
  // The mask's dims padded to rank 4 with leading 1s.
  Dims mask4() const {
    Dims d(4 - mask.size(), 1);
    d.insert(d.end(), mask.begin(), mask.end());
    return d;
  }
  int64_t rows() const { return !mask.empty() && S == 1 ? mask4()[2] : S; }  // the mask may widen one query
};

// The float64 result of softmax(scale * Q Kt + mask) V over the broadcast [B, H, Sm, L]
// (Sm = the mask's rows when S is 1), a masked-out row as zeros or NaN.
std::vector<double> Reference(const Case& c, const Tensor& q, const Tensor& kt, const Tensor& v, const Tensor* mask,
                              double scale, bool zero_rows) {
  const int64_t Sm = c.rows();
  std::vector<double> y(static_cast<size_t>(c.B * c.H * Sm * c.Dv));
  const Dims md = c.mask4();
  auto mask_at = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
    if (!mask) return 0.0;
    const int64_t mb = md[0] == 1 ? 0 : b, mh = md[1] == 1 ? 0 : h, mi = md[2] == 1 ? 0 : i, mj = md[3] == 1 ? 0 : j;
    return static_cast<double>(mask->data<float>()[((mb * md[1] + mh) * md[2] + mi) * md[3] + mj]);
  };
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t h = 0; h < c.H; ++h)
      for (int64_t i = 0; i < Sm; ++i) {
        const int64_t qi = c.S == 1 ? 0 : i, kb = c.Bk == 1 ? 0 : b, vb = c.Bv == 1 ? 0 : b;
        std::vector<double> s(static_cast<size_t>(c.L));
        double mx = -INFINITY;
        for (int64_t j = 0; j < c.L; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < c.D; ++d)
            dot += static_cast<double>(q.data<float>()[((b * c.H + h) * c.S + qi) * c.D + d]) *
                   kt.data<float>()[((kb * c.H + h) * c.D + d) * c.L + j];
          s[j] = scale * dot + mask_at(b, h, i, j);
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (int64_t o = 0; o < c.Dv; ++o) {
          double acc = 0;
          for (int64_t j = 0; j < c.L; ++j) acc += s[j] / sum * v.data<float>()[((vb * c.H + h) * c.L + j) * c.Dv + o];
          y[((b * c.H + h) * Sm + i) * c.Dv + o] = mx == -INFINITY ? (zero_rows ? 0.0 : kNaN) : acc;
        }
      }
  return y;
}

// q, k (or kt), v, mask -> scores -> Softmax -> [IsNaN, Where] -> MatMul -> y; p (the
// Softmax's output) also a graph output when `pinned`.
onnx::ModelProto AttentionModel(const Case& c, float qk_factor, bool pinned) {
  onnx::ModelProto m = tandem::testing::EmptyModel(17, "attention");
  auto* g = m.mutable_graph();
  const int64_t Sm = c.rows();
  SetFloatType(g->add_input(), "q", {c.B, c.H, c.S, c.D});
  SetFloatType(g->add_input(), c.dynamo ? "k" : "kt",
               c.dynamo ? std::vector<int64_t>{c.Bk, c.H, c.L, c.D} : std::vector<int64_t>{c.Bk, c.H, c.D, c.L});
  SetFloatType(g->add_input(), "v", {c.Bv, c.H, c.L, c.Dv});
  if (!c.mask.empty()) SetFloatType(g->add_input(), "mask", std::vector<int64_t>(c.mask.begin(), c.mask.end()));
  std::string scores = "s";
  if (c.dynamo) {
    AddIntsAttribute(AddNode(g, "Transpose", "kt", {"k"}, {"kt"}), "perm", {0, 1, 3, 2});
    AddScalar(g, "qk_factor", qk_factor);
    AddNode(g, "Mul", "q_scaled", {"q", "qk_factor"}, {"qs"});
    AddNode(g, "Mul", "k_scaled", {"qk_factor", "kt"}, {"ks"});
    AddNode(g, "MatMul", "qk", {"qs", "ks"}, {"s"});
  } else {
    AddScalar(g, "divisor", 1.f / (qk_factor * qk_factor));
    AddNode(g, "MatMul", "qk", {"q", "kt"}, {"s0"});
    AddNode(g, "Div", "scale", {"s0", "divisor"}, {"s"});
  }
  if (!c.mask.empty()) {
    AddNode(g, "Add", "masked", {"s", "mask"}, {"sm"});
    scores = "sm";
  }
  tandem::testing::AddIntAttribute(AddNode(g, "Softmax", "softmax", {scores}, {"p"}), "axis", -1);
  std::string probs = "p";
  if (c.dynamo) {
    AddScalar(g, "zero", 0.f);
    AddNode(g, "IsNaN", "isnan", {"p"}, {"nan"});
    AddNode(g, "Where", "where", {"nan", "zero", "p"}, {"pz"});
    probs = "pz";
  }
  AddNode(g, "MatMul", "context", {probs, "v"}, {"y"});
  SetFloatType(g->add_output(), "y", {c.B, c.H, Sm, c.Dv});
  if (pinned) SetFloatType(g->add_output(), "p", {c.B, c.H, Sm, c.L});
  return m;
}

std::vector<Case> Cases() {
  return {
      // 150 queries: three row blocks, 45 keys: vector tails; row 7 of batch 1 masked out.
      {"dynamo", 2, 3, 150, 20, 45, 24, 2, 2, {2, 1, 150, 45}, true},
      {"legacy, K shared by the batch", 2, 3, 37, 20, 45, 24, 1, 2, {1, 1, 37, 45}, false},
      {"padding mask [B, 1, 1, L], V shared", 2, 3, 37, 20, 45, 24, 2, 1, {2, 1, 1, 45}, true},
      {"a rank-2 mask along the queries", 2, 3, 37, 20, 45, 24, 2, 2, {37, 1}, false},
      {"one query widened by the mask", 2, 2, 1, 8, 19, 5, 2, 2, {2, 1, 6, 19}, false},
      {"no mask", 1, 2, 70, 16, 1500, 16, 1, 1, {}, false},
  };
}

Tensor Mask(const Case& c) {
  Tensor m = Pattern(c.mask, 0.61f, 2.f);
  float* p = m.data<float>();
  const int64_t L = c.mask4()[3], rows = m.numel() / L;
  for (int64_t j = 0; j < L; j += 3) p[j] = kNegInf;                     // every third key of row 0 out
  const int64_t out = std::min<int64_t>(rows - 1, c.mask4()[2] + 7);      // a whole row out
  for (int64_t j = 0; j < L; ++j) p[out * L + j] = kNegInf;
  return m;
}

// `got` against `want` at the scale of `want`; NaN exactly where `want` has NaN. Returns
// how many NaN outputs there were.
int ExpectMatches(const Tensor& got, const std::vector<double>& want) {
  EXPECT_EQ(got.numel(), static_cast<int64_t>(want.size()));
  if (got.numel() != static_cast<int64_t>(want.size())) return 0;
  double scale = 0;
  for (double w : want)
    if (!std::isnan(w)) scale = std::max(scale, std::fabs(w));
  EXPECT_GT(scale, 0.1);
  int nans = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const float g = got.data<float>()[i];
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(g)) << "element " << i;
      ++nans;
      continue;
    }
    EXPECT_NEAR(g, want[i], 2e-6 * scale) << "element " << i;
    if (std::fabs(g - want[i]) > 2e-6 * scale) return nans;  // one report is enough
  }
  return nans;
}

TEST(CpuFusedAttention, ExportersFormsBecomeOneNodeAndMatchFloat64) {
  const float qk_factor = 1.f / std::sqrt(std::sqrt(20.f));  // 1 / sqrt(sqrt(D)), not a power of 2
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    auto session = tandem::testing::LoadTestModel(AttentionModel(c, qk_factor, false), true);
    ASSERT_TRUE(session);
    const std::map<std::string, int> ops = tandem::testing::OpCounts(session->graph());
    EXPECT_EQ(ops.count("FusedAttention") ? ops.at("FusedAttention") : 0, 1);
    for (const char* gone : {"Softmax", "MatMul", "Mul", "Div", "Add", "IsNaN", "Where"}) EXPECT_EQ(ops.count(gone), 0u) << gone;
    for (const Node& n : session->graph().nodes)
      if (n.op_type == "FusedAttention") {
        EXPECT_NEAR(n.attr_float("scale", 0.f), qk_factor * qk_factor, 1e-7);
        EXPECT_EQ(n.attr_int("nan_rows_to_zero", 0), c.dynamo ? 1 : 0);
      }
    const Tensor q = Pattern({c.B, c.H, c.S, c.D}, 0.37f, 1.5f), kt = Pattern({c.Bk, c.H, c.D, c.L}, 0.23f, 1.5f),
                 v = Pattern({c.Bv, c.H, c.L, c.Dv}, 0.11f, 1.f, 0.5f);
    std::map<std::string, Tensor> feeds = {{"q", q}, {"v", v}};
    if (c.dynamo) {  // k is given untransposed: [Bk, H, L, D]
      Tensor k = Tensor::Host(DataType::kFloat, {c.Bk, c.H, c.L, c.D});
      for (int64_t bh = 0; bh < c.Bk * c.H; ++bh)
        for (int64_t d = 0; d < c.D; ++d)
          for (int64_t j = 0; j < c.L; ++j)
            k.data<float>()[(bh * c.L + j) * c.D + d] = kt.data<float>()[(bh * c.D + d) * c.L + j];
      feeds["k"] = k;
    } else {
      feeds["kt"] = kt;
    }
    Tensor mask;
    if (!c.mask.empty()) feeds["mask"] = mask = Mask(c);
    auto out = session->Run(feeds);
    ASSERT_TRUE(out.ok()) << out.status();
    const double scale = static_cast<double>(qk_factor) * qk_factor;
    const int nans = ExpectMatches((*out)[0], Reference(c, q, kt, v, c.mask.empty() ? nullptr : &mask, scale, c.dynamo));
    if (!c.mask.empty() && !c.dynamo) {
      EXPECT_GT(nans, 0) << "the masked-out row gives NaN";
    }
  }
}

TEST(CpuFusedAttention, ASoftmaxOutputThatIsAlsoAGraphOutputStaysApart) {
  for (const Case& c : {Cases()[0], Cases()[1]}) {  // with IsNaN + Where, and without
    SCOPED_TRACE(c.name);
    auto session = tandem::testing::LoadTestModel(AttentionModel(c, 0.5f, true), true);
    ASSERT_TRUE(session);
    EXPECT_EQ(tandem::testing::OpCounts(session->graph()).count("FusedAttention"), 0u);
    EXPECT_EQ(tandem::testing::OpCounts(session->graph()).count("Softmax"), 1u);
  }
}

TEST(CpuFusedAttention, AWhereThatKeepsTheNaNsStaysApart) {
  onnx::ModelProto m = AttentionModel(Cases()[0], 0.5f, false);
  for (auto& n : *m.mutable_graph()->mutable_node())
    if (n.op_type() == "Where") n.mutable_input()->SwapElements(1, 2);  // Where(isnan, p, 0)
  auto session = tandem::testing::LoadTestModel(m, true);
  ASSERT_TRUE(session);
  EXPECT_EQ(tandem::testing::OpCounts(session->graph()).count("FusedAttention"), 0u);
}

// t [d0, d1, d2, d3] permuted: out dims[i] = t dims[perm[i]].
Tensor Permute4(const Tensor& t, const std::vector<int>& perm) {
  const Dims& in = t.dims();
  const int64_t strides[4] = {in[1] * in[2] * in[3], in[2] * in[3], in[3], 1};
  Tensor out = Tensor::Host(DataType::kFloat, {in[perm[0]], in[perm[1]], in[perm[2]], in[perm[3]]});
  int64_t i = 0;
  for (int64_t a = 0; a < in[perm[0]]; ++a)
    for (int64_t b = 0; b < in[perm[1]]; ++b)
      for (int64_t c = 0; c < in[perm[2]]; ++c)
        for (int64_t d = 0; d < in[perm[3]]; ++d)
          out.data<float>()[i++] = t.data<float>()[a * strides[perm[0]] + b * strides[perm[1]] + c * strides[perm[2]] +
                                                   d * strides[perm[3]]];
  return out;
}

// The heads split from [B, S, H, D] by Transposes, as exporters write them (one also read
// by a Shape, as exporters take sizes): the Transposes go, the fused node reads the heads in
// place (heads_interleaved), the Shape gives the transposed dims still, and the result
// matches float64 with a padding mask, a mask along the queries, one query widened by the
// mask and no mask.
TEST(CpuFusedAttention, HeadsSplitByTransposesAreReadInPlace) {
  for (const Case& c : {Case{"padding mask [B, 1, 1, L]", 2, 3, 37, 20, 45, 24, 2, 2, {2, 1, 1, 45}, false},
                        Case{"causal-style mask [1, 1, S, L]", 2, 3, 37, 20, 37, 24, 2, 2, {1, 1, 37, 37}, false},
                        Case{"one query widened by the mask", 2, 2, 1, 8, 19, 5, 2, 2, {2, 1, 6, 19}, false},
                        Case{"no mask", 2, 2, 70, 16, 90, 8, 2, 2, {}, false}}) {
    SCOPED_TRACE(c.name);
    const int64_t Sm = c.rows();
    onnx::ModelProto m = tandem::testing::EmptyModel(17, "heads");
    auto* g = m.mutable_graph();
    SetFloatType(g->add_input(), "q_heads", {c.B, c.S, c.H, c.D});
    SetFloatType(g->add_input(), "k_heads", {c.B, c.L, c.H, c.D});
    SetFloatType(g->add_input(), "v_heads", {c.B, c.L, c.H, c.Dv});
    if (!c.mask.empty()) SetFloatType(g->add_input(), "mask", std::vector<int64_t>(c.mask.begin(), c.mask.end()));
    AddIntsAttribute(AddNode(g, "Transpose", "q_t", {"q_heads"}, {"q"}), "perm", {0, 2, 1, 3});
    AddIntsAttribute(AddNode(g, "Transpose", "k_t", {"k_heads"}, {"kt"}), "perm", {0, 2, 3, 1});
    AddIntsAttribute(AddNode(g, "Transpose", "v_t", {"v_heads"}, {"v"}), "perm", {0, 2, 1, 3});
    AddNode(g, "Shape", "q_dims", {"q"}, {"q_shape"});
    AddScalar(g, "factor", 0.5f);
    AddNode(g, "Mul", "q_scaled", {"q", "factor"}, {"qs"});
    AddNode(g, "MatMul", "qk", {"qs", "kt"}, {"s"});
    std::string scores = "s";
    if (!c.mask.empty()) {
      AddNode(g, "Add", "masked", {"s", "mask"}, {"sm"});
      scores = "sm";
    }
    tandem::testing::AddIntAttribute(AddNode(g, "Softmax", "softmax", {scores}, {"p"}), "axis", -1);
    AddNode(g, "MatMul", "context", {"p", "v"}, {"y"});
    SetFloatType(g->add_output(), "y", {c.B, c.H, Sm, c.Dv});
    auto* shape_out = g->add_output();
    shape_out->set_name("q_shape");
    shape_out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
    shape_out->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
    auto session = tandem::testing::LoadTestModel(m, true);
    ASSERT_TRUE(session);
    const std::map<std::string, int> ops = tandem::testing::OpCounts(session->graph());
    EXPECT_EQ(ops.count("Transpose"), 0u);
    for (const Node& n : session->graph().nodes)
      if (n.op_type == "FusedAttention") {
        EXPECT_EQ(n.attr_int("heads_interleaved", 0), 1);
      }
    const Tensor q = Pattern({c.B, c.H, c.S, c.D}, 0.37f, 1.5f), kt = Pattern({c.B, c.H, c.D, c.L}, 0.23f, 1.5f),
                 v = Pattern({c.B, c.H, c.L, c.Dv}, 0.11f, 1.f, 0.5f);
    std::map<std::string, Tensor> feeds = {{"q_heads", Permute4(q, {0, 2, 1, 3})},
                                           {"k_heads", Permute4(kt, {0, 3, 1, 2})},
                                           {"v_heads", Permute4(v, {0, 2, 1, 3})}};
    Tensor mask;
    if (!c.mask.empty()) feeds["mask"] = mask = Mask(c);
    auto out = session->Run(feeds);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectMatches((*out)[0], Reference(c, q, kt, v, c.mask.empty() ? nullptr : &mask, 0.5, false));
    const Tensor& dims = (*out)[1];
    ASSERT_EQ(dims.numel(), 4);
    EXPECT_EQ(std::vector<int64_t>(dims.data<int64_t>(), dims.data<int64_t>() + 4),
              (std::vector<int64_t>{c.B, c.H, c.S, c.D}));
  }
}

TEST(CpuFusedAttention, SoftmaxRowsInEachBuildMatchFloat64) {
  constexpr int64_t kN = 75;  // 4 AVX-512 vectors and a tail
  std::vector<float> rows(5 * kN), mask(kN);
  for (int64_t j = 0; j < kN; ++j) mask[j] = j % 4 == 0 ? kNegInf : 0.5f * std::cos(0.3f * j);
  for (int64_t i = 0; i < 5 * kN; ++i) rows[i] = 30.f * std::sin(0.77f * i);  // exp(x - max) down to e^-60
  for (int64_t j = 0; j < kN; ++j) rows[2 * kN + j] = -100.f * j / (kN - 1);  // exact arguments, to e^-80
  for (int64_t j = 0; j < kN; ++j) rows[3 * kN + j] = j == 40 ? 1e-3f : -200.f;  // underflow to 0 but one
  rows[4 * kN + 11] = std::numeric_limits<float>::quiet_NaN();
  for (const cpu::softmax_rows::Kernels* k : cpu::softmax_rows::Builds().runnable()) {
    SCOPED_TRACE(k->isa);
    for (bool masked : {false, true}) {
      std::vector<float> s = rows, sums(5);
      const float scale = 0.8f;
      k->exp_rows(s.data(), 5, kN, kN, scale, masked ? mask.data() : nullptr, 0, sums.data());
      for (int64_t i = 0; i < 4; ++i) {
        std::vector<double> x(kN), in(kN);
        double mx = -INFINITY, sum = 0, sum_tol = 0;
        for (int64_t j = 0; j < kN; ++j) {
          in[j] = x[j] = static_cast<double>(rows[i * kN + j] * scale) + (masked ? mask[j] : 0.0);
          mx = std::max(mx, x[j]);
        }
        for (double& e : x) sum += (e = std::exp(e - mx));
        // Within a few ulp of exp of the float argument. The argument's own rounding moves exp
        // by its size * 2^-24 of itself: x - max rounds to float, and with a mask so does x.
        for (int64_t j = 0; j < kN; ++j) {
          const double arg = std::log(x[j]);
          if (arg < -87.35) {  // below float's normal range: 0, as documented
            EXPECT_EQ(s[i * kN + j], 0.f) << i << ", " << j;
            continue;
          }
          const double rounding = std::fabs(arg) + (masked ? std::fabs(in[j]) + std::fabs(mx) : 0.0);
          const double tol = x[j] * (4e-7 + rounding * 1.2e-7);
          sum_tol += tol;
          EXPECT_NEAR(s[i * kN + j], x[j], tol) << i << ", " << j << " at " << arg;
        }
        EXPECT_NEAR(sums[i], sum, sum_tol + 2e-6 * sum) << "row " << i;  // + float summation
      }
      EXPECT_TRUE(std::isnan(sums[4])) << "a NaN score makes the row's sum NaN";
    }
    std::vector<float> out(kN, kNegInf), sum(1);
    k->exp_rows(out.data(), 1, kN, kN, 1.f, nullptr, 0, sum.data());
    EXPECT_TRUE(std::isnan(sum[0])) << "a row at -inf throughout has no softmax";
  }
}

}  // namespace
}  // namespace tandem
