// Gradients of LSTM and GRU: one fused ai.tandem LSTMGrad / GRUGrad node
// (providers/cpu/kernels/rnn/rnn_grad.cc) that recomputes the forward pass and runs
// backpropagation through time. What PyTorch's nn.LSTM / nn.GRU export is covered:
// default activations, any direction, either layout, optional bias and initial states.
// Peepholes, clip, sequence_lens, input_forget and custom activations are refused by name.
#include "training/rules/register.h"

namespace tandem::training::rules {

namespace {

absl::Status CheckSupported(const GradientContext& c, bool lstm) {
  const Node& n = c.node();
  auto refuse = [&](const std::string& what) {
    return absl::UnimplementedError(n.op_type + " gradient: " + what + " is not supported");
  };
  if (!c.X(4).empty()) return refuse("sequence_lens (variable-length sequences)");
  if (lstm && !c.X(7).empty()) return refuse("the peephole input P");
  if (n.has_attr("clip")) return refuse("clip");
  if (n.has_attr("activations")) {
    const std::vector<std::string> defaults = lstm ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                                   : std::vector<std::string>{"Sigmoid", "Tanh"};
    std::vector<std::string> acts = n.attr_strings("activations");
    for (size_t i = 0; i < acts.size(); ++i)
      if (acts[i] != defaults[i % defaults.size()]) return refuse("activation " + acts[i]);
  }
  if (lstm && n.attr_int("input_forget", 0) != 0) return refuse("input_forget");
  return absl::OkStatus();
}

// Forward inputs X W R B seq_lens h0 [c0] -> grad outputs dX dW dR dB dh0 [dc0].
GradientRule RecurrentRule(bool lstm) {
  return [lstm](GradientContext& c) -> absl::Status {
    const int outputs = lstm ? 3 : 2;
    bool any = false;
    for (int i = 0; i < outputs; ++i) any |= c.has_dY(i);
    if (!any) return absl::OkStatus();
    if (auto s = CheckSupported(c, lstm); !s.ok()) return s;
    const Node& n = c.node();
    std::vector<std::string> inputs = {c.X(0), c.X(1), c.X(2), c.X(3), c.X(5)};
    if (lstm) inputs.push_back(c.X(6));
    for (int i = 0; i < outputs; ++i) inputs.push_back(c.dY(i));
    std::map<std::string, Attribute> attrs = {
        {"hidden_size", GradientContext::Int(n.attr_int("hidden_size", 0))},
        {"direction", GradientContext::String(n.attr_string("direction", "forward"))},
        {"layout", GradientContext::Int(c.opset() >= 14 ? n.attr_int("layout", 0) : 0)}};
    if (!lstm) attrs["linear_before_reset"] = GradientContext::Int(n.attr_int("linear_before_reset", 0));
    auto grads = c.Emit(lstm ? "LSTMGrad" : "GRUGrad", inputs, lstm ? 6 : 5, attrs, kTandemDomain);
    const std::vector<size_t> forward_slot = {0, 1, 2, 3, 5, 6};
    for (size_t g = 0; g < grads.size(); ++g)
      if (c.wants(forward_slot[g]) && !c.X(forward_slot[g]).empty()) c.SetInputGrad(forward_slot[g], grads[g]);
    return absl::OkStatus();
  };
}

}  // namespace

void RegisterRecurrentGradients(GradientRegistry& r) {
  r.Add("LSTM", RecurrentRule(true));
  r.Add("GRU", RecurrentRule(false));
}

}  // namespace tandem::training::rules
