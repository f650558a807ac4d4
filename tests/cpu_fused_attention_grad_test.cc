// Attention's gradient on the CPU (kernels/nn/fused_attention_grad.cc) against a float64
// reference computed here from the definition (P = softmax(scale * Q Kt + mask), Y = P V):
// a padding mask over the keys, a row masked throughout (zeros with nan_rows_to_zero), K
// and V shared by the batch (each batch matrix's own share of their gradients), keys long
// enough to take the query rows in several blocks, and the scores' gradient (the mask's)
// when asked. Then training: an exported-style attention layer trains with the same
// losses whether attention is fused before the gradients (FusedAttention +
// FusedAttentionGrad, training/training_graph.cc) or left to the element-wise rules, and
// whether the fused node reads the heads in place (heads_interleaved) or the Transposes stay.
// ctest's cpu_fused_attention_avx2 / _sse41 (CpuFusedAttention*) run these with the builds capped.
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/session.h"
#include "tests/scoped_env.h"
#include "tests/test_models.h"
#include "training/trainer.h"

namespace tandem {
namespace {

using tandem::testing::AddFloatInitializer;
using tandem::testing::AddInt64Initializer;
using tandem::testing::AddIntsAttribute;
using tandem::testing::AddNode;
using tandem::testing::SetFloatType;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

Tensor Pattern(const Dims& dims, float freq, float amp) {
  Tensor t = Tensor::Host(DataType::kFloat, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = amp * std::sin(freq * static_cast<float>(i) + 0.3f);
  return t;
}

// One case: Q [B, H, S, D], Kt [Bk, H, D, L], V [Bk, H, L, Dv], dY [B, H, S, Dv] and the
// mask [B, 1, Sm, L] (Sm 1 or S; none when !masked).
struct Case {
  int64_t B, H, S, D, L, Dv, Bk;
  bool masked;
  int64_t mask_rows;
  float scale;
};

struct Grads {
  std::vector<double> dq, dkt, dv, ds;  // each with the broadcast batch [B, H]
};

// The float64 gradients of every batch matrix from the definition; a row whose scores are
// all -inf contributes nothing (nan_rows_to_zero).
Grads Reference(const Case& c, const Tensor& dy, const Tensor& q, const Tensor& kt, const Tensor& v, const Tensor* mask) {
  Grads g;
  g.dq.assign(static_cast<size_t>(c.B * c.H * c.S * c.D), 0.0);
  g.dkt.assign(static_cast<size_t>(c.B * c.H * c.D * c.L), 0.0);
  g.dv.assign(static_cast<size_t>(c.B * c.H * c.L * c.Dv), 0.0);
  g.ds.assign(static_cast<size_t>(c.B * c.H * c.S * c.L), 0.0);
  auto at = [](const Tensor& t, int64_t i) { return static_cast<double>(t.data<float>()[i]); };
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t h = 0; h < c.H; ++h) {
      const int64_t bh = b * c.H + h, kb = (c.Bk == 1 ? 0 : b) * c.H + h;
      for (int64_t i = 0; i < c.S; ++i) {
        std::vector<double> p(static_cast<size_t>(c.L)), dp(p.size());
        double mx = -INFINITY;
        for (int64_t j = 0; j < c.L; ++j) {
          double s = 0;
          for (int64_t d = 0; d < c.D; ++d) s += at(q, (bh * c.S + i) * c.D + d) * at(kt, (kb * c.D + d) * c.L + j);
          p[j] = c.scale * s + (mask ? at(*mask, (b * c.mask_rows + (c.mask_rows == 1 ? 0 : i)) * c.L + j) : 0.0);
          mx = std::max(mx, p[j]);
        }
        if (mx == -INFINITY) continue;
        double sum = 0;
        for (double& e : p) sum += (e = std::exp(e - mx));
        for (double& e : p) e /= sum;
        double dot = 0;
        for (int64_t j = 0; j < c.L; ++j) {
          for (int64_t o = 0; o < c.Dv; ++o) {
            const double gy = at(dy, (bh * c.S + i) * c.Dv + o);
            g.dv[(bh * c.L + j) * c.Dv + o] += p[j] * gy;
            dp[j] += gy * at(v, (kb * c.L + j) * c.Dv + o);
          }
          dot += p[j] * dp[j];
        }
        for (int64_t j = 0; j < c.L; ++j) {
          const double ds = p[j] * (dp[j] - dot);
          g.ds[(bh * c.S + i) * c.L + j] = ds;
          for (int64_t d = 0; d < c.D; ++d) {
            g.dq[(bh * c.S + i) * c.D + d] += c.scale * ds * at(kt, (kb * c.D + d) * c.L + j);
            g.dkt[(bh * c.D + d) * c.L + j] += c.scale * at(q, (bh * c.S + i) * c.D + d) * ds;
          }
        }
      }
    }
  return g;
}

// max |got - want| over the largest |want|: the error at the output's scale.
double ScaledError(const Tensor& got, const std::vector<double>& want) {
  EXPECT_EQ(got.numel(), static_cast<int64_t>(want.size()));
  double err = 0, scale = 1e-30;
  for (size_t i = 0; i < want.size() && static_cast<int64_t>(i) < got.numel(); ++i) {
    err = std::max(err, std::fabs(static_cast<double>(got.data<float>()[i]) - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  return err / scale;
}

// t [d0, d1, d2, d3] permuted: out dims[i] = t dims[perm[i]].
Tensor Permute4(const Tensor& t, const std::vector<int>& perm) {
  const Dims& in = t.dims();
  Dims out_dims;
  for (int p : perm) out_dims.push_back(in[p]);
  Tensor out = Tensor::Host(DataType::kFloat, out_dims);
  const int64_t in_strides[4] = {in[1] * in[2] * in[3], in[2] * in[3], in[3], 1};
  int64_t i = 0;
  for (int64_t a = 0; a < out_dims[0]; ++a)
    for (int64_t b = 0; b < out_dims[1]; ++b)
      for (int64_t c = 0; c < out_dims[2]; ++c)
        for (int64_t d = 0; d < out_dims[3]; ++d)
          out.data<float>()[i++] = t.data<float>()[a * in_strides[perm[0]] + b * in_strides[perm[1]] +
                                                   c * in_strides[perm[2]] + d * in_strides[perm[3]]];
  return out;
}

// With `interleaved`, the kernel is given Q [B, S, H, D], K [B, L, H, D] and V [B, L, H, Dv]
// (heads_interleaved) and its gradients, in those layouts, are put back to compare.
void ExpectGradientsMatch(const Case& c, bool with_scores, bool interleaved = false) {
  SCOPED_TRACE("B " + std::to_string(c.B) + " H " + std::to_string(c.H) + " S " + std::to_string(c.S) + " L " +
               std::to_string(c.L) + " Bk " + std::to_string(c.Bk) + (c.masked ? " masked" : "") +
               (interleaved ? " heads interleaved" : ""));
  const Tensor dy = Pattern({c.B, c.H, c.S, c.Dv}, 0.37f, 1.f), q = Pattern({c.B, c.H, c.S, c.D}, 0.61f, 1.5f),
               kt = Pattern({c.Bk, c.H, c.D, c.L}, 0.23f, 1.2f), v = Pattern({c.Bk, c.H, c.L, c.Dv}, 0.41f, 0.8f);
  Tensor mask = Tensor::Host(DataType::kFloat, {c.B, 1, c.mask_rows, c.L});
  for (int64_t i = 0; i < mask.numel(); ++i) {  // the last third of the keys padded in batch 0
    const int64_t b = i / (c.mask_rows * c.L), j = i % c.L;
    mask.data<float>()[i] = b == 0 && j >= 2 * c.L / 3 ? kNegInf : 0.1f * std::cos(static_cast<float>(i));
  }
  if (c.mask_rows > 1)  // batch B-1's row 1 masked throughout
    std::fill(mask.data<float>() + ((c.B - 1) * c.mask_rows + 1) * c.L,
              mask.data<float>() + ((c.B - 1) * c.mask_rows + 2) * c.L, kNegInf);
  const Tensor q_in = interleaved ? Permute4(q, {0, 2, 1, 3}) : q, kt_in = interleaved ? Permute4(kt, {0, 3, 1, 2}) : kt,
               v_in = interleaved ? Permute4(v, {0, 2, 1, 3}) : v;
  std::vector<ValueInfo> inputs = {{"dy", DataType::kFloat, Shape::Of(dy.dims())},
                                   {"q", DataType::kFloat, Shape::Of(q_in.dims())},
                                   {"kt", DataType::kFloat, Shape::Of(kt_in.dims())},
                                   {"v", DataType::kFloat, Shape::Of(v_in.dims())}};
  if (c.masked) inputs.push_back({"mask", DataType::kFloat, Shape::Of(mask.dims())});
  std::vector<std::string> outputs = {"dq", "dkt", "dv"};
  if (with_scores) outputs.push_back("ds");
  Graph g = testing::TandemOpGraph("FusedAttentionGrad", inputs, outputs);
  g.nodes[0].attributes["scale"] = FloatAttribute(c.scale);
  g.nodes[0].attributes["nan_rows_to_zero"] = IntAttribute(1);
  if (interleaved) g.nodes[0].attributes["heads_interleaved"] = IntAttribute(1);
  SessionOptions so;
  so.num_threads = 2;
  auto session = Session::FromGraph(std::move(g), so);
  ASSERT_TRUE(session.ok()) << session.status();
  std::map<std::string, Tensor> feeds = {{"dy", dy}, {"q", q_in}, {"kt", kt_in}, {"v", v_in}};
  if (c.masked) feeds["mask"] = mask;
  auto out = (*session)->Run(feeds);
  ASSERT_TRUE(out.ok()) << out.status();
  if (interleaved) {  // each gradient in its operand's layout, put back as [B, H, *, *]
    EXPECT_EQ((*out)[0].dims(), q_in.dims());
    EXPECT_EQ((*out)[1].dims(), kt_in.dims());
    EXPECT_EQ((*out)[2].dims(), v_in.dims());
    (*out)[0] = Permute4((*out)[0], {0, 2, 1, 3});
    (*out)[1] = Permute4((*out)[1], {0, 2, 3, 1});
    (*out)[2] = Permute4((*out)[2], {0, 2, 1, 3});
  }
  const Grads want = Reference(c, dy, q, kt, v, c.masked ? &mask : nullptr);
  EXPECT_EQ((*out)[1].dims(), (Dims{c.B, c.H, c.D, c.L}));  // the broadcast batch, also for a shared K
  EXPECT_LE(ScaledError((*out)[0], want.dq), 1e-5);
  EXPECT_LE(ScaledError((*out)[1], want.dkt), 1e-5);
  EXPECT_LE(ScaledError((*out)[2], want.dv), 1e-5);
  if (with_scores) {
    EXPECT_LE(ScaledError((*out)[3], want.ds), 1e-5);
  }
}

TEST(CpuFusedAttentionGrad, MatchesFloat64) {
  ExpectGradientsMatch({2, 3, 5, 4, 7, 6, 2, true, 1, 0.5f}, false);   // padding mask over the keys
  ExpectGradientsMatch({2, 2, 6, 8, 9, 8, 2, true, 6, 0.35f}, true);  // a row masked throughout; dScores
  ExpectGradientsMatch({3, 2, 4, 5, 6, 3, 1, false, 1, 1.f}, false);  // K and V shared by the batch, no mask
  ExpectGradientsMatch({1, 2, 20, 4, 9000, 3, 1, true, 1, 0.5f}, true);  // 9000 keys: query rows in blocks of 8
}

TEST(CpuFusedAttentionGrad, HeadsReadInPlaceMatchFloat64) {
  ExpectGradientsMatch({2, 3, 5, 4, 7, 6, 2, true, 1, 0.5f}, false, true);   // padding mask
  ExpectGradientsMatch({2, 2, 6, 8, 9, 8, 2, true, 6, 0.35f}, true, true);  // a row masked throughout; dScores
  ExpectGradientsMatch({2, 3, 9, 5, 300, 3, 2, false, 1, 1.f}, false, true);  // no mask; query rows in blocks
}

// A Constant node writing the float scalar `value` (not trained, as exporters' constants).
void AddConstant(onnx::GraphProto* g, const std::string& name, float value) {
  auto* a = AddNode(g, "Constant", name + "_node", {}, {name})->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_float_data(value);
}

// x [N, S, E] -> Q, K, V projections (2-D weights) -> heads -> attention with a padding mask
// as PyTorch's exports write it (scale on Q and Kt, Add, Softmax, IsNaN + Where) -> heads
// merged -> output projection -> y.
onnx::ModelProto AttentionLayer(int64_t N, int64_t S, int64_t E, int64_t H) {
  onnx::ModelProto m = testing::EmptyModel(17, "attention_layer");
  auto* g = m.mutable_graph();
  const int64_t Dh = E / H;
  SetFloatType(g->add_input(), "x", {N, S, E});
  SetFloatType(g->add_input(), "mask", {N, 1, 1, S});
  SetFloatType(g->add_output(), "y", {N, S, E});
  AddInt64Initializer(g, "heads_shape", {0, S, H, Dh});
  AddInt64Initializer(g, "merged_shape", {0, S, E});
  AddConstant(g, "factor", 1.f / std::sqrt(std::sqrt(static_cast<float>(Dh))));
  const char* proj[] = {"q", "k", "v"};
  for (int p = 0; p < 3; ++p) {
    const std::string n = proj[p];
    AddFloatInitializer(g, "w" + n, {E, E}, 0.03f * static_cast<float>(p + 1), 0.01f);
    AddNode(g, "MatMul", n + "_proj", {"x", "w" + n}, {n + "_flat"});
    AddNode(g, "Reshape", n + "_split", {n + "_flat", "heads_shape"}, {n + "_heads"});
  }
  AddIntsAttribute(AddNode(g, "Transpose", "q_t", {"q_heads"}, {"qh"}), "perm", {0, 2, 1, 3});
  AddIntsAttribute(AddNode(g, "Transpose", "k_t", {"k_heads"}, {"kth"}), "perm", {0, 2, 3, 1});
  AddIntsAttribute(AddNode(g, "Transpose", "v_t", {"v_heads"}, {"vh"}), "perm", {0, 2, 1, 3});
  AddNode(g, "Mul", "q_scale", {"qh", "factor"}, {"qs"});
  AddNode(g, "Mul", "k_scale", {"kth", "factor"}, {"ks"});
  AddNode(g, "MatMul", "scores", {"qs", "ks"}, {"s"});
  AddNode(g, "Add", "masked", {"s", "mask"}, {"sm"});
  AddNode(g, "Softmax", "softmax", {"sm"}, {"p"});
  AddConstant(g, "zero", 0.f);
  AddNode(g, "IsNaN", "isnan", {"p"}, {"p_nan"});
  AddNode(g, "Where", "where", {"p_nan", "zero", "p"}, {"pz"});
  AddNode(g, "MatMul", "context", {"pz", "vh"}, {"ch"});
  AddIntsAttribute(AddNode(g, "Transpose", "c_t", {"ch"}, {"c_heads"}), "perm", {0, 2, 1, 3});
  AddNode(g, "Reshape", "merge", {"c_heads", "merged_shape"}, {"c"});
  AddFloatInitializer(g, "wo", {E, E}, 0.02f, -0.01f);
  AddNode(g, "MatMul", "out_proj", {"c", "wo"}, {"y"});
  return m;
}

std::vector<double> TrainAttention(bool fusion, std::map<std::string, int>* ops) {
  const int64_t N = 4, S = 6, E = 8, H = 2;
  training::TrainerOptions o;
  o.num_threads = 2;
  o.fusion = fusion;
  o.spec.optimizer.kind = training::OptimizerKind::kAdam;
  o.spec.optimizer.lr = 0.05f;
  auto t = training::Trainer::Create(testing::ImportTestModel(AttentionLayer(N, S, E, H)), o);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {};
  for (const Node& n : (*t)->training_graph().graph.nodes) ++(*ops)[n.op_type];
  const Tensor x = Pattern({N, S, E}, 0.29f, 1.f), y = Pattern({N, S, E}, 0.53f, 0.5f);
  Tensor mask = Tensor::Host(DataType::kFloat, {N, 1, 1, S});
  for (int64_t i = 0; i < mask.numel(); ++i)  // rows 1 and 3 padded past 4 keys (PyTorch's finfo.min)
    mask.data<float>()[i] = (i / S) % 2 == 1 && i % S >= 4 ? std::numeric_limits<float>::lowest() : 0.f;
  std::vector<double> losses;
  for (int step = 0; step < 10; ++step) {
    auto l = (*t)->Step({{"x", x}, {"mask", mask}}, y);
    EXPECT_TRUE(l.ok()) << l.status();
    if (!l.ok()) break;
    losses.push_back(*l);
  }
  return losses;
}

TEST(CpuFusedAttentionGrad, TrainingLossesMatchTheUnfusedGraph) {
  std::map<std::string, int> fused_ops, plain_ops, apart_ops;
  const std::vector<double> fused = TrainAttention(true, &fused_ops), plain = TrainAttention(false, &plain_ops);
  std::vector<double> heads_apart;  // the heads' Transposes kept (FusedAttention on transposed copies)
  {
    testing::ScopedEnv env("TANDEM_ATTENTION_HEADS_IN_PLACE", "0");
    heads_apart = TrainAttention(true, &apart_ops);
  }
  // The three split Transposes and their three gradients go when the heads are read in place.
  EXPECT_EQ(apart_ops["Transpose"] - fused_ops["Transpose"], 6);
  ASSERT_EQ(heads_apart.size(), 10u);
  EXPECT_EQ(fused_ops["FusedAttention"], 1);
  EXPECT_EQ(fused_ops["FusedAttentionGrad"], 1);
  EXPECT_EQ(fused_ops["Softmax"] + fused_ops["SoftmaxGrad"], 0);
  EXPECT_EQ(plain_ops["FusedAttention"] + plain_ops["FusedAttentionGrad"], 0);
  ASSERT_EQ(fused.size(), 10u);
  ASSERT_EQ(plain.size(), 10u);
  for (size_t i = 0; i < fused.size(); ++i) {
    EXPECT_NEAR(fused[i], plain[i], 1e-5 * plain[0]) << "step " << i + 1;
    EXPECT_NEAR(heads_apart[i], plain[i], 1e-5 * plain[0]) << "step " << i + 1;
  }
  EXPECT_LT(plain.back(), 0.9 * plain.front());  // it trains
}

}  // namespace
}  // namespace tandem
