// Float32 Add, Sub, Mul and Div whose second (or, commuted, first) input broadcasts over
// a run of middle dims — the squeeze-and-excitation gate of EfficientNet, MobileNetV3 and
// RegNetY, plain [N, C, H, W] x [N, C, 1, 1] and in channel blocks [N, C/8, H, W, 8] x
// [N, C/8, 1, 1, 8] — and the general broadcast rows (split among threads mid-dimension),
// and Pow to a scalar exponent (products for 2, 3, 4; oneDNN otherwise), against a float64
// reference that applies numpy's broadcasting element by element. ctest's
// broadcast_binary_avx2 runs these with ONEDNN_MAX_CPU_ISA=AVX2, where oneDNN offers only
// its reference implementation for the blocked case and the kernel's own loop runs instead.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/graph.h"
#include "runtime/session.h"

namespace tandem {
namespace {

Tensor Random(const Dims& dims, uint32_t seed) {
  Tensor t = Tensor::Host(DataType::kFloat, dims);
  uint32_t s = seed;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = static_cast<float>(s >> 8) / static_cast<float>(1 << 24) * 2.f - 0.9f;  // [-0.9, 1.1)
  }
  return t;
}

double Apply(const std::string& op, double a, double b) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Pow") return std::pow(a, b);
  return a / b;
}

// out[i] = op(a[i'], b[i'']) with numpy's broadcasting of a and b to out's dims.
std::vector<double> Reference(const std::string& op, const Tensor& a, const Tensor& b, const Dims& out) {
  const size_t rank = out.size();
  auto pad = [&](const Dims& d) {
    Dims p(rank - d.size(), 1);
    p.insert(p.end(), d.begin(), d.end());
    return p;
  };
  const Dims ad = pad(a.dims()), bd = pad(b.dims());
  int64_t n = 1;
  for (int64_t d : out) n *= d;
  std::vector<double> y(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, ai = 0, bi = 0, astride = 1, bstride = 1;
    for (size_t k = rank; k-- > 0;) {
      const int64_t idx = rest % out[k];
      rest /= out[k];
      ai += (ad[k] == 1 ? 0 : idx) * astride;
      bi += (bd[k] == 1 ? 0 : idx) * bstride;
      astride *= ad[k];
      bstride *= bd[k];
    }
    y[i] = Apply(op, a.data<float>()[ai], b.data<float>()[bi]);
  }
  return y;
}

// Runs op(a, b) with random a and b (or the given b) and compares with Reference.
void ExpectMatches(const std::string& op, const Dims& a_dims, const Dims& b_dims, const Dims& out_dims,
                   const Tensor* b_value = nullptr) {
  SCOPED_TRACE(op + " " + DimsToString(a_dims) + " with " + DimsToString(b_dims));
  Graph g;
  g.opsets[""] = 17;
  g.inputs = {ValueInfo{"a", DataType::kFloat, Shape::Of(a_dims)}, ValueInfo{"b", DataType::kFloat, Shape::Of(b_dims)}};
  g.outputs = {ValueInfo{"y", DataType::kUndefined, Shape::Unknown()}};
  Node n;
  n.name = op;
  n.op_type = op;
  n.inputs = {"a", "b"};
  n.outputs = {"y"};
  g.nodes.push_back(n);
  SessionOptions so;
  so.num_threads = 2;
  auto session = Session::FromGraph(g, so);
  ASSERT_TRUE(session.ok()) << session.status();
  const Tensor a = Random(a_dims, 7), b = b_value ? *b_value : Random(b_dims, 11);
  auto out = (*session)->Run({{"a", a}, {"b", b}});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.dims(), out_dims);
  const std::vector<double> want = Reference(op, a, b, out_dims);
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::fabs(v));
  for (int64_t i = 0; i < y.numel(); ++i)
    ASSERT_NEAR(y.data<float>()[i], want[i], 1e-6 * scale) << "element " << i;
}

TEST(BroadcastBinary, GateOverPlainSpatialDims) {
  for (const char* op : {"Mul", "Add", "Sub", "Div"}) {
    ExpectMatches(op, {2, 6, 5, 7}, {2, 6, 1, 1}, {2, 6, 5, 7});
    ExpectMatches(op, {1, 64, 32, 32}, {1, 64, 1, 1}, {1, 64, 32, 32});  // large enough for threads
  }
}

TEST(BroadcastBinary, GateOverChannelBlockedSpatialDims) {
  for (const char* op : {"Mul", "Add", "Sub", "Div"}) {
    ExpectMatches(op, {1, 18, 7, 7, 8}, {1, 18, 1, 1, 8}, {1, 18, 7, 7, 8});
    ExpectMatches(op, {2, 9, 14, 14, 16}, {2, 9, 1, 1, 16}, {2, 9, 14, 14, 16});
  }
}

TEST(BroadcastBinary, CommutedGateAndOtherBroadcasts) {
  ExpectMatches("Mul", {1, 18, 1, 1, 8}, {1, 18, 7, 7, 8}, {1, 18, 7, 7, 8});  // the gate first
  ExpectMatches("Add", {2, 6, 1, 1}, {2, 6, 5, 7}, {2, 6, 5, 7});
  // Two broadcast runs, a broadcast leading dim, a scalar, equal shapes: the other paths.
  ExpectMatches("Sub", {3, 5, 2, 8}, {1, 5, 1, 8}, {3, 5, 2, 8});
  ExpectMatches("Div", {4, 16, 9}, {16, 1}, {4, 16, 9});
  ExpectMatches("Mul", {4, 16, 9}, {1, 16, 9}, {4, 16, 9});
  ExpectMatches("Mul", {4, 16, 9}, {}, {4, 16, 9});
  ExpectMatches("Add", {4, 16, 9}, {4, 16, 9}, {4, 16, 9});
  ExpectMatches("Sub", {1, 3, 1, 1}, {1, 3, 4, 4}, {1, 3, 4, 4});  // a non-commutative op commuted: generic
  // Over 2^15 elements: threads take blocks of 455 to 1820 rows of 9 (by the thread count),
  // which start inside the outer dims, so each block's first offsets come from its row number.
  ExpectMatches("Sub", {6, 7, 33, 5, 9}, {6, 1, 33, 1, 9}, {6, 7, 33, 5, 9});
  ExpectMatches("Div", {6, 1, 33, 1, 9}, {6, 7, 33, 5, 9}, {6, 7, 33, 5, 9});
}

TEST(BroadcastBinary, PowToScalarExponents) {
  Tensor e = Tensor::Host(DataType::kFloat, {});
  for (float exponent : {2.f, 3.f, 4.f, -1.f}) {  // products for 2, 3, 4; oneDNN for -1
    SCOPED_TRACE(exponent);
    e.data<float>()[0] = exponent;
    ExpectMatches("Pow", {100003}, {}, {100003}, &e);  // threads and a tail
    ExpectMatches("Pow", {3, 17}, {}, {3, 17}, &e);
  }
}

}  // namespace
}  // namespace tandem
