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

// Checks an LSTM (4 gates, 3 outputs) or GRU (3 gates, 2 outputs) through each output.
void CheckEachOutput(const std::string& op, const std::string& direction, bool batch_first, bool bias,
                     bool states, std::map<std::string, Attribute> extra, unsigned seed) {
  const bool lstm = op == "LSTM";
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  for (int output = 0; output < (lstm ? 3 : 2); ++output) {
    GradCase c;
    c.op = op;
    c.opset = 14;
    c.inputs = RecurrentInputs(lstm ? 4 : 3, dirs, batch_first, bias, states, lstm, seed + output);
    c.attributes = {{"hidden_size", IntAttr(kHidden)}, {"direction", StringAttr(direction)},
                    {"layout", IntAttr(batch_first ? 1 : 0)}};
    c.attributes.insert(extra.begin(), extra.end());
    c.num_outputs = lstm ? 3 : 2;
    c.loss_output = output;
    EXPECT_EQ(CheckGradients(c), "") << op << " " << direction << " layout " << batch_first << " output " << output;
  }
}

TEST(RecurrentGradients, LstmMatchesFiniteDifferences) {
  CheckEachOutput("LSTM", "forward", false, true, true, {}, 10);
  CheckEachOutput("LSTM", "reverse", true, true, false, {}, 13);
  CheckEachOutput("LSTM", "bidirectional", false, false, true, {}, 16);
  CheckEachOutput("LSTM", "bidirectional", true, true, true, {}, 19);
}

TEST(RecurrentGradients, GruMatchesFiniteDifferences) {
  for (int lbr : {0, 1}) {
    const std::map<std::string, Attribute> attrs = {{"linear_before_reset", IntAttr(lbr)}};
    CheckEachOutput("GRU", "forward", false, true, true, attrs, 20);
    CheckEachOutput("GRU", "reverse", true, lbr == 0, true, attrs, 22);
    CheckEachOutput("GRU", "bidirectional", lbr == 1, true, lbr == 0, attrs, 24);
  }
}

}  // namespace
}  // namespace tandem::testing
