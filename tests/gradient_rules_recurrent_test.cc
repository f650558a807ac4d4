// LSTM and GRU gradients (training/rules/recurrent.cc, ai.tandem LSTMGrad/GRUGrad)
// against float64 central finite differences, through each output (Y, Y_h, Y_c), for
// every direction, both layouts, with and without bias and initial states, and GRU's
// two candidate forms (linear_before_reset 0 and 1).
#include <gtest/gtest.h>

#include "tests/gradient_check.h"

namespace tandem::testing {
namespace {

constexpr int64_t kSeq = 3, kBatch = 2, kIn = 3, kHidden = 2;

// X W R B seq_lens h0 [c0] for a cell with `gates` gates.
std::vector<Tensor> RecurrentInputs(int gates, int64_t dirs, bool batch_first, bool bias, bool states,
                                    bool cell_state, unsigned seed) {
  const Dims x = batch_first ? Dims{kBatch, kSeq, kIn} : Dims{kSeq, kBatch, kIn};
  const Dims state = batch_first ? Dims{kBatch, dirs, kHidden} : Dims{dirs, kBatch, kHidden};
  std::vector<Tensor> in = {RandomDoubles(x, seed), RandomDoubles({dirs, gates * kHidden, kIn}, seed + 1),
                            RandomDoubles({dirs, gates * kHidden, kHidden}, seed + 2),
                            bias ? RandomDoubles({dirs, 2 * gates * kHidden}, seed + 3) : Tensor(), Tensor(),
                            states ? RandomDoubles(state, seed + 4) : Tensor()};
  if (cell_state) in.push_back(states ? RandomDoubles(state, seed + 5) : Tensor());
  return in;
}

std::map<std::string, Attribute> Attrs(const std::string& direction, bool batch_first) {
  return {{"hidden_size", IntAttr(kHidden)}, {"direction", StringAttr(direction)},
          {"layout", IntAttr(batch_first ? 1 : 0)}};
}

TEST(RecurrentGradients, LstmMatchesFiniteDifferences) {
  struct Variant { std::string direction; bool batch_first, bias, states; };
  for (const Variant& v : {Variant{"forward", false, true, true}, Variant{"reverse", true, true, false},
                           Variant{"bidirectional", false, false, true}, Variant{"bidirectional", true, true, true}}) {
    const int64_t dirs = v.direction == "bidirectional" ? 2 : 1;
    for (int output = 0; output < 3; ++output) {
      GradCase c;
      c.op = "LSTM";
      c.opset = 14;
      c.inputs = RecurrentInputs(4, dirs, v.batch_first, v.bias, v.states, true, 10 + output);
      c.attributes = Attrs(v.direction, v.batch_first);
      c.num_outputs = 3;
      c.loss_output = output;
      EXPECT_EQ(CheckGradients(c), "") << v.direction << " layout " << v.batch_first << " output " << output;
    }
  }
}

TEST(RecurrentGradients, GruMatchesFiniteDifferences) {
  struct Variant { std::string direction; bool batch_first, bias, states; int lbr; };
  for (const Variant& v : {Variant{"forward", false, true, true, 0}, Variant{"forward", false, true, true, 1},
                           Variant{"reverse", true, false, true, 1}, Variant{"bidirectional", false, true, false, 0},
                           Variant{"bidirectional", true, true, true, 1}}) {
    const int64_t dirs = v.direction == "bidirectional" ? 2 : 1;
    for (int output = 0; output < 2; ++output) {
      GradCase c;
      c.op = "GRU";
      c.opset = 14;
      c.inputs = RecurrentInputs(3, dirs, v.batch_first, v.bias, v.states, false, 20 + output);
      c.attributes = Attrs(v.direction, v.batch_first);
      c.attributes["linear_before_reset"] = IntAttr(v.lbr);
      c.num_outputs = 2;
      c.loss_output = output;
      EXPECT_EQ(CheckGradients(c), "") << v.direction << " layout " << v.batch_first << " lbr " << v.lbr
                                       << " output " << output;
    }
  }
}

}  // namespace
}  // namespace tandem::testing
