// ai.tandem DenseChain / DenseChainGrad / DenseChainMseGrad (providers/cpu/kernels/
// dense_chain_ops.cc) against a float64 forward and backward pass written here, and the
// dense-chain fusions (optimizer/dense_chain_fusion.h, optimizer/dense_chain_loss_fusion.h):
// what they fuse, what they leave, and a trainer with and without them giving the same losses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "onnx_import/import.h"
#include "optimizer/dense_chain_fusion.h"
#include "optimizer/dense_chain_loss_fusion.h"
#include "providers/cpu/cpu_isa.h"
#include "providers/cpu/microkernels/dense_chain_tiles.h"
#include "runtime/session.h"
#include "tests/test_models.h"
#include "training/trainer.h"
#include "training/training_graph.h"

namespace tandem::testing {
namespace {

namespace dense_chain = cpu::dense_chain;

struct ChainCase {
  std::string what;
  int64_t rows;
  std::vector<int64_t> widths;           // K_0 .. K_n
  std::vector<std::string> activations;  // per layer
  std::vector<int64_t> trans_b;          // per layer
  bool bias_2d = false;                  // B as [1, K_l]
  int threads = 1;
};

struct ChainData {
  std::vector<float> x, dy;
  std::vector<std::vector<float>> w, b;  // w in the case's layout
};

ChainData MakeData(const ChainCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  ChainData d;
  const size_t n = c.activations.size();
  d.x.resize(static_cast<size_t>(c.rows * c.widths[0]));
  for (float& v : d.x) v = 2.f * u(rng);
  for (size_t l = 0; l < n; ++l) {
    const float scale = 1.5f / std::sqrt(static_cast<float>(c.widths[l]));
    d.w.emplace_back(static_cast<size_t>(c.widths[l] * c.widths[l + 1]));
    for (float& v : d.w.back()) v = scale * u(rng);
    d.b.emplace_back(static_cast<size_t>(c.widths[l + 1]));
    for (float& v : d.b.back()) v = 0.5f * u(rng);
  }
  d.dy.resize(static_cast<size_t>(c.rows * c.widths[n]));
  for (float& v : d.dy) v = u(rng);
  return d;
}

// W_l[j][k] (output j, input k) in the case's layout.
double Weight(const ChainCase& c, const ChainData& d, size_t l, int64_t j, int64_t k) {
  return c.trans_b[l] ? d.w[l][j * c.widths[l] + k] : d.w[l][k * c.widths[l + 1] + j];
}

double Act(const std::string& a, double z) {
  if (a == "Relu") return z > 0 ? z : 0;
  if (a == "Tanh") return std::tanh(z);
  if (a == "Sigmoid") return 1 / (1 + std::exp(-z));
  return z;
}

double ActDerivative(const std::string& a, double y) {  // in terms of the output y
  if (a == "Relu") return y > 0 ? 1 : 0;
  if (a == "Tanh") return 1 - y * y;
  if (a == "Sigmoid") return y * (1 - y);
  return 1;
}

struct Reference {
  std::vector<std::vector<double>> acts;  // a_0 = X .. a_n = Y, [rows][K_l]
  std::vector<double> dx;
  std::vector<std::vector<double>> dw, db;  // dw in the case's layout
};

// With `dy` set, the backward starts from it instead of d.dy.
Reference Float64(const ChainCase& c, const ChainData& d, const std::vector<double>* dy = nullptr) {
  const size_t n = c.activations.size();
  const int64_t m = c.rows;
  Reference r;
  r.acts.emplace_back(d.x.begin(), d.x.end());
  for (size_t l = 0; l < n; ++l) {
    const int64_t in = c.widths[l], out = c.widths[l + 1];
    std::vector<double> a(static_cast<size_t>(m * out));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < out; ++j) {
        double z = d.b[l][j];
        for (int64_t k = 0; k < in; ++k) z += Weight(c, d, l, j, k) * r.acts[l][i * in + k];
        a[i * out + j] = Act(c.activations[l], z);
      }
    r.acts.push_back(std::move(a));
  }
  std::vector<double> g = dy ? *dy : std::vector<double>(d.dy.begin(), d.dy.end());  // gradient at a_{l+1}
  r.dw.resize(n);
  r.db.resize(n);
  for (size_t l = n; l-- > 0;) {
    const int64_t in = c.widths[l], out = c.widths[l + 1];
    for (int64_t i = 0; i < m * out; ++i) g[i] *= ActDerivative(c.activations[l], r.acts[l + 1][i]);
    r.dw[l].assign(static_cast<size_t>(in * out), 0.0);
    r.db[l].assign(static_cast<size_t>(out), 0.0);
    std::vector<double> gin(static_cast<size_t>(m * in), 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < out; ++j) {
        const double gj = g[i * out + j];
        r.db[l][j] += gj;
        for (int64_t k = 0; k < in; ++k) {
          r.dw[l][c.trans_b[l] ? j * in + k : k * out + j] += gj * r.acts[l][i * in + k];
          gin[i * in + k] += gj * Weight(c, d, l, j, k);
        }
      }
    g = std::move(gin);
  }
  r.dx = std::move(g);
  return r;
}

// The mean (or summed) squared error of the chain's output against `target` and its
// gradients, in float64.
struct MseReference {
  double loss = 0;
  Reference grads;
};

MseReference MseFloat64(const ChainCase& c, const ChainData& d, const std::vector<float>& target, bool mean) {
  const std::vector<double> y = Float64(c, d).acts.back();
  const double scale = mean ? 1.0 / static_cast<double>(y.size()) : 1.0;
  MseReference r;
  std::vector<double> dy(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    const double e = y[i] - target[i];
    r.loss += scale * e * e;
    dy[i] = 2 * scale * e;
  }
  r.grads = Float64(c, d, &dy);
  return r;
}

// max |got - want| over max(1, max |want|): float32 sums of up to a few thousand terms.
void ExpectClose(const Tensor& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
  double scale = 1, err = 0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < want.size(); ++i) err = std::max(err, std::fabs(got.data<float>()[i] - want[i]));
  EXPECT_LE(err / scale, 2e-5) << what;
}

// A one-node graph of `op` over (dy,) x, w1, b1, ... with the case's attributes.
// (DenseChainMseGrad: x, t, w1, b1, ... with `reduction`).
std::unique_ptr<Session> ChainSession(const ChainCase& c, const std::string& op,
                                      const std::vector<std::string>& outputs, const std::string& reduction = "") {
  std::vector<ValueInfo> inputs;
  if (op == "DenseChainGrad") inputs.push_back(ValueInfo{"dy", DataType::kFloat, Shape::Unknown()});
  inputs.push_back(ValueInfo{"x", DataType::kFloat, Shape::Unknown()});
  if (op == "DenseChainMseGrad") inputs.push_back(ValueInfo{"t", DataType::kFloat, Shape::Unknown()});
  for (size_t l = 0; l < c.activations.size(); ++l) {
    inputs.push_back(ValueInfo{"w" + std::to_string(l), DataType::kFloat, Shape::Unknown()});
    inputs.push_back(ValueInfo{"b" + std::to_string(l), DataType::kFloat, Shape::Unknown()});
  }
  Graph g = TandemOpGraph(op, inputs, outputs);
  std::vector<ValueInfo> named;  // omitted outputs ("") are node slots, not graph outputs
  for (const ValueInfo& o : g.outputs)
    if (!o.name.empty()) named.push_back(o);
  g.outputs = named;
  g.nodes[0].attributes["activations"].kind = Attribute::Kind::kStrings;
  g.nodes[0].attributes["activations"].strings = c.activations;
  g.nodes[0].attributes["trans_b"] = IntsAttribute(c.trans_b);
  if (!reduction.empty()) g.nodes[0].attributes["reduction"] = StringAttribute(reduction);
  SessionOptions o;
  o.num_threads = c.threads;
  auto s = Session::FromGraph(g, o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

std::map<std::string, Tensor> Feeds(const ChainCase& c, const ChainData& d, bool with_dy) {
  std::map<std::string, Tensor> f;
  const size_t n = c.activations.size();
  f["x"] = Tensor::FromVector(d.x, {c.rows, c.widths[0]});
  if (with_dy) f["dy"] = Tensor::FromVector(d.dy, {c.rows, c.widths[n]});
  for (size_t l = 0; l < n; ++l) {
    const int64_t in = c.widths[l], out = c.widths[l + 1];
    f["w" + std::to_string(l)] = Tensor::FromVector(d.w[l], c.trans_b[l] ? Dims{out, in} : Dims{in, out});
    f["b" + std::to_string(l)] = Tensor::FromVector(d.b[l], c.bias_2d ? Dims{1, out} : Dims{out});
  }
  return f;
}

const std::vector<ChainCase>& Cases() {
  static const std::vector<ChainCase> cases = {
      {"ode 3-100-3, batch 1", 1, {3, 100, 3}, {"Tanh", "Identity"}, {1, 1}},
      {"peaks 2-20-5-1, wide tile + narrow tail", 37, {2, 20, 5, 1}, {"Relu", "Relu", "Identity"}, {1, 1, 1}},
      {"sigmoid/tanh, [in, out] weights, 2 threads", 5000, {4, 16, 9}, {"Sigmoid", "Tanh"}, {0, 1}, false, 2},
      {"one layer, [1, N] bias, 2 threads", 4099, {7, 5}, {"Identity"}, {0}, true, 2},
      {"odd widths", 64, {5, 3, 11, 2}, {"Tanh", "Relu", "Sigmoid"}, {1, 0, 1}},
  };
  return cases;
}

TEST(DenseChain, ForwardMatchesFloat64) {
  for (const ChainCase& c : Cases()) {
    ChainData d = MakeData(c, 7);
    Reference want = Float64(c, d);
    auto s = ChainSession(c, "DenseChain", {"y"});
    ASSERT_TRUE(s);
    auto out = s->Run(Feeds(c, d, false));
    ASSERT_TRUE(out.ok()) << c.what << ": " << out.status();
    EXPECT_EQ((*out)[0].dims(), (Dims{c.rows, c.widths.back()})) << c.what;
    ExpectClose((*out)[0], want.acts.back(), c.what + ": Y");
  }
}

TEST(DenseChain, GradientMatchesFloat64) {
  for (const ChainCase& c : Cases()) {
    ChainData d = MakeData(c, 11);
    Reference want = Float64(c, d);
    std::vector<std::string> outputs = {"dx"};
    for (size_t l = 0; l < c.activations.size(); ++l) {
      outputs.push_back("dw" + std::to_string(l));
      outputs.push_back("db" + std::to_string(l));
    }
    auto s = ChainSession(c, "DenseChainGrad", outputs);
    ASSERT_TRUE(s);
    auto out = s->Run(Feeds(c, d, true));
    ASSERT_TRUE(out.ok()) << c.what << ": " << out.status();
    ExpectClose((*out)[0], want.dx, c.what + ": dX");
    for (size_t l = 0; l < c.activations.size(); ++l) {
      const Tensor& dw = (*out)[1 + 2 * l];
      const Tensor& db = (*out)[2 + 2 * l];
      EXPECT_EQ(dw.dims(), Feeds(c, d, false).at("w" + std::to_string(l)).dims()) << c.what;
      EXPECT_EQ(db.dims(), Feeds(c, d, false).at("b" + std::to_string(l)).dims()) << c.what;
      ExpectClose(dw, want.dw[l], c.what + ": dW" + std::to_string(l + 1));
      ExpectClose(db, want.db[l], c.what + ": dB" + std::to_string(l + 1));
    }
  }
}

// The folded MSE step: loss and gradients of mean(chain(X) - T)^2 (and the sum) in one node.
TEST(DenseChain, MseGradientMatchesFloat64) {
  for (bool mean : {true, false}) {
    for (const ChainCase& c : Cases()) {
      const std::string what = c.what + (mean ? ", mean" : ", sum");
      ChainData d = MakeData(c, 17);
      const std::vector<float>& target = d.dy;  // any values of Y's shape
      MseReference want = MseFloat64(c, d, target, mean);
      std::vector<std::string> outputs = {"loss", "dx"};
      for (size_t l = 0; l < c.activations.size(); ++l) {
        outputs.push_back("dw" + std::to_string(l));
        outputs.push_back("db" + std::to_string(l));
      }
      auto s = ChainSession(c, "DenseChainMseGrad", outputs, mean ? "mean" : "sum");
      ASSERT_TRUE(s);
      auto feeds = Feeds(c, d, false);
      feeds["t"] = Tensor::FromVector(target, {c.rows, c.widths.back()});
      auto out = s->Run(feeds);
      ASSERT_TRUE(out.ok()) << what << ": " << out.status();
      EXPECT_EQ((*out)[0].dims(), Dims{}) << what;
      EXPECT_NEAR((*out)[0].data<float>()[0], want.loss, 2e-5 * std::max(1.0, want.loss)) << what << ": loss";
      ExpectClose((*out)[1], want.grads.dx, what + ": dX");
      for (size_t l = 0; l < c.activations.size(); ++l) {
        ExpectClose((*out)[2 + 2 * l], want.grads.dw[l], what + ": dW" + std::to_string(l + 1));
        ExpectClose((*out)[3 + 2 * l], want.grads.db[l], what + ": dB" + std::to_string(l + 1));
      }
    }
  }
}

TEST(DenseChain, GradientOutputsMayBeOmitted) {
  const ChainCase& c = Cases()[1];
  ChainData d = MakeData(c, 3);
  Reference want = Float64(c, d);
  auto s = ChainSession(c, "DenseChainGrad", {"", "dw0", "", "", "", "", "db2"});
  ASSERT_TRUE(s);
  auto out = s->Run(Feeds(c, d, true));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  ExpectClose((*out)[0], want.dw[0], "dW1 alone");
  ExpectClose((*out)[1], want.db[2], "dB3 alone");
}

TEST(DenseChain, RefusesMismatchedLayers) {
  ChainCase c = Cases()[1];
  ChainData d = MakeData(c, 5);
  auto s = ChainSession(c, "DenseChain", {"y"});
  ASSERT_TRUE(s);
  auto feeds = Feeds(c, d, false);
  feeds["w1"] = Tensor::FromVector(std::vector<float>(5 * 19, 0.f), {5, 19});  // expects [5, 20]
  auto out = s->Run(feeds);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(std::string(out.status().message()).find("layer 2"), std::string::npos) << out.status();
}

// Each instruction-set build of the tile loops (the baseline one never runs through the
// kernels on an AVX2 machine), called directly on one wide and one narrow tile.
// ONEDNN_MAX_CPU_ISA caps Tandem's own AVX2 path as it caps oneDNN's kernels.
TEST(DenseChain, IsaCapDecidesTheTileBuilds) {
  EXPECT_FALSE(cpu::CapAdmitsAvx2("SSE41"));
  EXPECT_FALSE(cpu::CapAdmitsAvx2("avx"));
  EXPECT_TRUE(cpu::CapAdmitsAvx2(""));
  EXPECT_TRUE(cpu::CapAdmitsAvx2("AVX2"));
  EXPECT_TRUE(cpu::CapAdmitsAvx2("avx512_core_amx"));
  EXPECT_TRUE(cpu::CapAdmitsAvx2("ALL"));
  // This process's own cap (the ISA ctest entries set it): SSE41 leaves the baseline alone.
  const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (cap && !cpu::CapAdmitsAvx2(cap)) {
    EXPECT_EQ(dense_chain::Builds().runnable().size(), 1u);
    EXPECT_EQ(&dense_chain::Builds().best(), dense_chain::Builds().runnable().front());
  }
}

TEST(DenseChain, EveryTileBuildMatchesFloat64) {
  const ChainCase& c = Cases()[4];  // of its 64 rows: [0, 32) wide, [32, 40) narrow, 40 single
  ChainData d = MakeData(c, 13);
  dense_chain::Chain chain;
  std::vector<std::vector<float>> packed(c.activations.size());
  const std::map<std::string, dense_chain::Act> acts = {{"Identity", dense_chain::Act::kIdentity},
                                                        {"Relu", dense_chain::Act::kRelu},
                                                        {"Tanh", dense_chain::Act::kTanh},
                                                        {"Sigmoid", dense_chain::Act::kSigmoid}};
  for (size_t l = 0; l < c.activations.size(); ++l) {
    dense_chain::Layer L;
    L.in = c.widths[l];
    L.out = c.widths[l + 1];
    for (int64_t j = 0; j < L.out; ++j)
      for (int64_t k = 0; k < L.in; ++k) packed[l].push_back(static_cast<float>(Weight(c, d, l, j, k)));
    L.w = packed[l].data();
    L.b = d.b[l].data();
    L.act = acts.at(c.activations[l]);
    chain.layers.push_back(L);
  }
  chain.Finish();
  const int64_t rows = 41, in = c.widths.front(), out = c.widths.back();
  // The float64 answers over the first 41 rows: for a given dY, and for the MSE of Y
  // against a target (d.dy's values) summed over the rows.
  ChainCase head = c;
  head.rows = rows;
  ChainData dh = d;
  dh.x.resize(static_cast<size_t>(rows * in));
  dh.dy.resize(static_cast<size_t>(rows * out));
  const Reference given = Float64(head, dh);
  const MseReference mse = MseFloat64(head, dh, dh.dy, /*mean=*/false);
  for (const dense_chain::TileKernels* k : dense_chain::Builds().runnable()) {
    for (bool with_target : {false, true}) {
      const std::string build = std::string(k == dense_chain::Builds().runnable().front() ? "baseline" : "avx2") +
                                (with_target ? ", MSE" : ", dY");
      dense_chain::OutputGrad og;
      if (with_target) {
        og.target = d.dy.data();
        og.scale = 2.f;
      } else {
        og.dy = d.dy.data();
      }
      std::vector<float> scratch(static_cast<size_t>(chain.ScratchFloats()));
      std::vector<float> y(static_cast<size_t>(rows * out)), dx(static_cast<size_t>(rows * in));
      std::vector<float> lanes(static_cast<size_t>(chain.sums * dense_chain::kLanes), 0.f);
      std::vector<double> sums(static_cast<size_t>(chain.sums), 0.0);
      double loss = 0;
      k->forward_wide(chain, d.x.data(), 0, 32, scratch.data(), y.data());
      k->forward_narrow(chain, d.x.data(), 32, 8, scratch.data(), y.data());
      k->forward_single(chain, d.x.data(), 40, 1, scratch.data(), y.data());
      k->backward_wide(chain, og, d.x.data(), 0, 32, scratch.data(), lanes.data(), &loss, dx.data());
      k->backward_narrow(chain, og, d.x.data(), 32, 8, scratch.data(), sums.data(), &loss, dx.data());
      k->backward_single(chain, og, d.x.data(), 40, 1, scratch.data(), sums.data(), &loss, dx.data());
      for (size_t i = 0; i < sums.size(); ++i)
        for (int v = 0; v < dense_chain::kLanes; ++v) sums[i] += lanes[i * dense_chain::kLanes + v];
      const Reference& r = with_target ? mse.grads : given;
      if (with_target) {
        EXPECT_NEAR(loss, mse.loss, 1e-5 * mse.loss) << build << ": loss";
      }
      ExpectClose(Tensor::FromVector(y, {rows, out}), r.acts.back(), build + ": Y");
      ExpectClose(Tensor::FromVector(dx, {rows, in}), r.dx, build + ": dX");
      for (size_t l = 0; l < chain.layers.size(); ++l) {
        const auto& L = chain.layers[l];
        std::vector<float> dw, db;
        for (int64_t j = 0; j < L.out; ++j) {
          for (int64_t k2 = 0; k2 < L.in; ++k2)
            dw.push_back(static_cast<float>(sums[chain.sum_offset[l] + j * (L.in + 1) + k2]));
          db.push_back(static_cast<float>(sums[chain.sum_offset[l] + j * (L.in + 1) + L.in]));
        }
        std::vector<double> want_dw(static_cast<size_t>(L.in * L.out));  // [out][in]
        for (int64_t j = 0; j < L.out; ++j)
          for (int64_t k2 = 0; k2 < L.in; ++k2)
            want_dw[j * L.in + k2] = r.dw[l][c.trans_b[l] ? j * L.in + k2 : k2 * L.out + j];
        ExpectClose(Tensor::FromVector(dw, {L.out, L.in}), want_dw, build + ": dW" + std::to_string(l + 1));
        ExpectClose(Tensor::FromVector(db, {L.out}), r.db[l], build + ": dB" + std::to_string(l + 1));
      }
    }
  }
}

// x [B, 2] -> Gemm(+act) layers of widths 2-20-5-1 as PyTorch exports nn.Linear.
onnx::ModelProto MlpModel(const std::vector<std::string>& activations, bool hidden_is_output = false,
                          bool scaled_second = false) {
  onnx::ModelProto m = EmptyModel(13, "mlp");
  onnx::GraphProto* g = m.mutable_graph();
  const std::vector<int64_t> widths = {2, 20, 5, 1};
  SetFloatType(g->add_input(), "x", {3000, 2});
  std::string prev = "x";
  for (size_t l = 0; l < 3; ++l) {
    const std::string w = "w" + std::to_string(l), b = "b" + std::to_string(l), y = "z" + std::to_string(l);
    AddFloatInitializer(g, w, {widths[l + 1], widths[l]}, 0.1f, 0.01f * static_cast<float>(l));
    AddFloatInitializer(g, b, {widths[l + 1]}, 0.05f);
    onnx::NodeProto* gemm = AddNode(g, "Gemm", "gemm" + std::to_string(l), {prev, w, b}, {y});
    AddIntAttribute(gemm, "transB", 1);
    if (l == 1 && scaled_second) {
      onnx::AttributeProto* alpha = gemm->add_attribute();
      alpha->set_name("alpha");
      alpha->set_type(onnx::AttributeProto::FLOAT);
      alpha->set_f(0.5f);
    }
    prev = y;
    if (!activations[l].empty()) {
      AddNode(g, activations[l], "act" + std::to_string(l), {y}, {"h" + std::to_string(l)});
      prev = "h" + std::to_string(l);
    }
  }
  SetFloatType(g->add_output(), prev, {3000, 1});
  if (hidden_is_output) SetFloatType(g->add_output(), "h0", {3000, 20});
  return m;
}

// The same 2-20-5-1 MLP as Keras / tf2onnx write Dense layers: MatMul(A, W [in, out]) then
// Add of the bias (the second layer's Add takes the bias first); x is [batch, 2], or
// [batch, 1, 2] when `rank3` (a MatMul the chain cannot take).
onnx::ModelProto MatMulMlpModel(bool rank3 = false) {
  onnx::ModelProto m = EmptyModel(13, "mlp");
  onnx::GraphProto* g = m.mutable_graph();
  const std::vector<int64_t> widths = {2, 20, 5, 1};
  SetFloatType(g->add_input(), "x", rank3 ? std::vector<int64_t>{3000, 1, 2} : std::vector<int64_t>{3000, 2});
  const std::vector<std::string> acts = {"Tanh", "Relu", ""};
  std::string prev = "x";
  for (size_t l = 0; l < 3; ++l) {
    const std::string n = std::to_string(l), w = "w" + n, b = "b" + n;
    AddFloatInitializer(g, w, {widths[l], widths[l + 1]}, 0.1f, 0.01f * static_cast<float>(l));
    AddFloatInitializer(g, b, {widths[l + 1]}, 0.05f);
    AddNode(g, "MatMul", "matmul" + n, {prev, w}, {"m" + n});
    AddNode(g, "Add", "add" + n, l == 1 ? std::vector<std::string>{b, "m" + n} : std::vector<std::string>{"m" + n, b},
            {"z" + n});
    prev = "z" + n;
    if (!acts[l].empty()) {
      AddNode(g, acts[l], "act" + n, {prev}, {"h" + n});
      prev = "h" + n;
    }
  }
  SetFloatType(g->add_output(), prev, rank3 ? std::vector<int64_t>{3000, 1, 1} : std::vector<int64_t>{3000, 1});
  return m;
}

Graph Import(const onnx::ModelProto& m) {
  const std::string bytes = Serialize(m);
  auto g = ImportModelBuffer(bytes.data(), bytes.size(), "", "mlp");
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : Graph{};
}

TEST(DenseChainFusion, FusesGemmActivationChains) {
  Graph g = Import(MlpModel({"Relu", "Tanh", ""}));
  EXPECT_EQ(FuseDenseChains(g), 3);
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& n = g.nodes[0];
  EXPECT_EQ(n.op_type, "DenseChain");
  EXPECT_EQ(n.attr_strings("activations"), (std::vector<std::string>{"Relu", "Tanh", "Identity"}));
  EXPECT_EQ(n.attr_ints("trans_b"), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(n.inputs, (std::vector<std::string>{"x", "w0", "b0", "w1", "b1", "w2", "b2"}));
  EXPECT_EQ(n.outputs, (std::vector<std::string>{"z2"}));
}

TEST(DenseChainFusion, StopsAtValuesReadElsewhereAndUnsupportedGemms) {
  // h0 is also a graph output: the chain ends there, the rest is a second chain.
  Graph pinned = Import(MlpModel({"Relu", "Relu", ""}, /*hidden_is_output=*/true));
  EXPECT_EQ(FuseDenseChains(pinned), 3);
  ASSERT_EQ(pinned.nodes.size(), 2u);
  EXPECT_EQ(pinned.nodes[0].outputs[0], "h0");
  EXPECT_EQ(pinned.nodes[1].inputs[0], "h0");
  // A Gemm with alpha != 1 is not a layer: chains of one layer on either side of it.
  Graph scaled = Import(MlpModel({"Relu", "Relu", ""}, false, /*scaled_second=*/true));
  Graph scaled_for_inference = Import(MlpModel({"Relu", "Relu", ""}, false, /*scaled_second=*/true));
  EXPECT_EQ(FuseDenseChains(scaled), 2);
  int gemms = 0;
  for (const Node& n : scaled.nodes) gemms += n.op_type == "Gemm";
  EXPECT_EQ(gemms, 1);
  // Inference asks for two layers or more: single layers stay Gemms.
  EXPECT_EQ(FuseDenseChains(scaled_for_inference, 2), 0);
  EXPECT_EQ(scaled_for_inference.nodes.size(), 5u);
}

TEST(DenseChainFusion, TakesMatMulAddLayers) {
  Graph g = Import(MatMulMlpModel());
  EXPECT_EQ(FuseDenseChains(g), 3);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].attr_strings("activations"), (std::vector<std::string>{"Tanh", "Relu", "Identity"}));
  EXPECT_EQ(g.nodes[0].attr_ints("trans_b"), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "w0", "b0", "w1", "b1", "w2", "b2"}));
  EXPECT_EQ(g.nodes[0].outputs, (std::vector<std::string>{"z2"}));
  Graph rank3 = Import(MatMulMlpModel(/*rank3=*/true));
  EXPECT_EQ(FuseDenseChains(rank3), 0);
}

// A CPU inference session runs the MLP as one DenseChain, with the unfused outputs.
void ExpectFusedInferenceMatches(const Graph& g) {
  std::vector<float> xs(3000 * 2);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(std::cos(1.3 * static_cast<double>(i)));
  const std::map<std::string, Tensor> feeds = {{"x", Tensor::FromVector(xs, {3000, 2})}};
  std::vector<Tensor> outputs;
  for (bool fusion : {true, false}) {
    SessionOptions o;
    o.num_threads = 2;
    o.fusion = fusion;
    auto s = Session::FromGraph(g, o);
    ASSERT_TRUE(s.ok()) << s.status();
    int chains = 0;
    for (const Node& n : (*s)->graph().nodes) chains += n.op_type == "DenseChain";
    EXPECT_EQ(chains, fusion ? 1 : 0);
    auto out = (*s)->Run(feeds);
    ASSERT_TRUE(out.ok()) << out.status();
    outputs.push_back((*out)[0]);
  }
  ASSERT_EQ(outputs[0].dims(), outputs[1].dims());
  double err = 0, scale = 1e-3;
  for (int64_t i = 0; i < outputs[1].numel(); ++i) {
    err = std::max(err, static_cast<double>(std::fabs(outputs[0].data<float>()[i] - outputs[1].data<float>()[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(outputs[1].data<float>()[i])));
  }
  EXPECT_LE(err / scale, 1e-5);
}

TEST(DenseChainFusion, InferenceSessionMatchesTheUnfusedOne) {
  ExpectFusedInferenceMatches(Import(MlpModel({"Tanh", "Relu", ""})));
  ExpectFusedInferenceMatches(Import(MatMulMlpModel()));
}

// The MSE fold needs the chain's output, the loss seed and dY to be read only by the step.
TEST(DenseChainFusion, FoldsTheMseStepOnlyWhereNothingElseReadsIt) {
  Graph g = Import(MlpModel({"Relu", "Relu", ""}));
  ASSERT_EQ(FuseDenseChains(g), 3);
  training::TrainingSpec spec;  // cpu_fusions off: the chain is already there, unfolded
  auto tg = training::BuildTrainingGraph(g, spec);
  ASSERT_TRUE(tg.ok()) << tg.status();
  Graph pinned = tg->graph;
  pinned.outputs.push_back(ValueInfo{"z2", DataType::kFloat, Shape::Unknown()});  // Y wanted too
  EXPECT_EQ(FuseDenseChainMseLoss(pinned), 0);
  Graph free = tg->graph;
  EXPECT_EQ(FuseDenseChainMseLoss(free), 1);
  EXPECT_EQ(free.nodes.size(), tg->graph.nodes.size() - 4);  // 5 nodes became 1
  EXPECT_TRUE(free.Validate().ok()) << free.Validate();
  // Another loss keeps the chain and its gradient apart.
  spec.loss = training::LossKind::kL1;
  auto l1 = training::BuildTrainingGraph(g, spec);
  ASSERT_TRUE(l1.ok()) << l1.status();
  EXPECT_EQ(FuseDenseChainMseLoss(l1->graph), 0);
}

// Losses of `steps` Adam steps on a fixed batch, with or without fusion (CPU only).
std::vector<double> TrainMlp(const onnx::ModelProto& model, bool fusion, int steps) {
  Graph g = Import(model);
  training::TrainerOptions o;
  o.num_threads = 2;
  o.fusion = fusion;
  o.spec.optimizer.lr = 0.01f;
  auto t = training::Trainer::Create(g, o);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {};
  // Fused, the whole step before the optimizer is one node: forward, MSE loss, backward.
  std::map<std::string, int> ops;
  for (const Node& n : (*t)->training_graph().graph.nodes) ++ops[n.op_type];
  EXPECT_EQ(ops["DenseChainMseGrad"], fusion ? 1 : 0);
  EXPECT_EQ(ops["MSELoss"], fusion ? 0 : 1);
  EXPECT_EQ(ops["DenseChain"] + ops["DenseChainGrad"], 0);
  EXPECT_EQ(ops["AdamUpdate"], fusion ? 1 : 6);  // one update node for all parameters
  if (fusion) {
    EXPECT_EQ(ops["Gemm"] + ops["MatMul"], 0);
  }
  std::vector<float> xs(3000 * 2), ys(3000);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i)));
  for (size_t i = 0; i < ys.size(); ++i) ys[i] = xs[2 * i] * xs[2 * i + 1];
  return StepLosses(**t, "x", Tensor::FromVector(xs, {3000, 2}), Tensor::FromVector(ys, {3000, 1}), steps);
}

TEST(DenseChainFusion, TrainerLossesMatchTheUnfusedGraph) {
  for (const onnx::ModelProto& model : {MlpModel({"Relu", "Relu", ""}), MatMulMlpModel()}) {
    const std::vector<double> fused = TrainMlp(model, true, 30), plain = TrainMlp(model, false, 30);
    ASSERT_EQ(fused.size(), plain.size());
    ASSERT_EQ(fused.size(), 30u);
    for (size_t i = 0; i < fused.size(); ++i) EXPECT_NEAR(fused[i], plain[i], 1e-5 * plain[0]) << "step " << i + 1;
    EXPECT_LT(plain.back(), plain.front());  // it trains
  }
}

}  // namespace
}  // namespace tandem::testing
