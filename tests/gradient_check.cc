#include "tests/gradient_check.h"

#include <cmath>
#include <random>
#include <sstream>

#include "runtime/session.h"
#include "training/gradient_builder.h"

namespace tandem::testing {

Tensor RandomDoubles(const Dims& dims, unsigned seed, double lo, double hi) {
  Tensor t = Tensor::Host(DataType::kDouble, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<double>()[i] = u(rng);
  return t;
}

Attribute IntAttr(int64_t v) { return IntAttribute(v); }
Attribute IntsAttr(std::vector<int64_t> v) { return IntsAttribute(std::move(v)); }
Attribute FloatAttr(float v) { return FloatAttribute(v); }
Attribute StringAttr(std::string v) { return StringAttribute(std::move(v)); }

namespace {

std::string InputName(size_t i) { return "x" + std::to_string(i); }

// Forward graph: inputs x0..xn -> node -> outputs y0..ym; optionally the loss.
Graph BuildGraph(const GradCase& c, const Tensor* loss_weights) {
  Graph g;
  g.name = c.op + "_grad_check";
  g.opsets[""] = c.opset;
  if (!c.domain.empty()) g.opsets[c.domain] = 1;
  Node n;
  n.name = "under_test";
  n.op_type = c.op;
  n.domain = c.domain;
  n.attributes = c.attributes;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i].defined()) {
      n.inputs.push_back("");
      continue;
    }
    ValueInfo vi{InputName(i), c.inputs[i].dtype(), Shape::Of(c.inputs[i].dims())};
    if (c.inputs[i].dtype() == DataType::kDouble) g.inputs.push_back(vi);
    else g.initializers[vi.name] = c.inputs[i];  // integer inputs (axes, shapes) are constants
    n.inputs.push_back(vi.name);
  }
  for (int o = 0; o < c.num_outputs; ++o) n.outputs.push_back("y" + std::to_string(o));
  g.nodes.push_back(n);
  std::string y = "y" + std::to_string(c.loss_output);
  if (!loss_weights) {
    g.outputs.push_back(ValueInfo{y, DataType::kUndefined, Shape::Unknown()});
    return g;
  }
  g.initializers["loss_weights"] = *loss_weights;
  Node mul;
  mul.op_type = "Mul";
  mul.name = "weigh";
  mul.inputs = {y, "loss_weights"};
  mul.outputs = {"weighted"};
  Node sum;
  sum.op_type = "ReduceSum";
  sum.name = "sum";
  sum.inputs = {"weighted"};
  sum.outputs = {"loss"};
  sum.attributes["keepdims"] = IntAttr(0);
  // ReduceSum without axes reduces everything at every opset.
  g.nodes.push_back(mul);
  g.nodes.push_back(sum);
  g.outputs.push_back(ValueInfo{"loss", DataType::kDouble, Shape::Of({})});
  return g;
}

std::map<std::string, Tensor> Feeds(const GradCase& c, const std::vector<Tensor>& inputs) {
  std::map<std::string, Tensor> f;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].dtype() == DataType::kDouble) f[InputName(i)] = inputs[i];
  return f;
}

absl::StatusOr<double> Loss(Session& s, const GradCase& c, const std::vector<Tensor>& inputs) {
  auto out = s.Run(Feeds(c, inputs));
  if (!out.ok()) return out.status();
  return (*out)[0].data<double>()[0];
}

}  // namespace

std::string CheckGradients(const GradCase& c) {
  SessionOptions options;
  options.num_threads = 1;
  options.constant_folding = false;
  // 1. Forward once to learn Y's shape and build the loss weights.
  auto fwd = Session::FromGraph(BuildGraph(c, nullptr), options);
  if (!fwd.ok()) return "forward graph: " + std::string(fwd.status().message());
  auto y = (*fwd)->Run(Feeds(c, c.inputs));
  if (!y.ok()) return "forward run: " + std::string(y.status().message());
  if ((*y)[0].dtype() != DataType::kDouble) return "output is not float64";
  Tensor weights = Tensor::Host(DataType::kDouble, (*y)[0].dims());
  for (int64_t i = 0; i < weights.numel(); ++i) weights.data<double>()[i] = std::cos(1.3 * i + 0.2);

  // 2. Loss graph plus analytic gradients.
  Graph g = BuildGraph(c, &weights);
  std::vector<std::string> wrt;
  std::vector<size_t> checked;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    bool want = c.differentiate.empty() ? c.inputs[i].defined() && c.inputs[i].dtype() == DataType::kDouble
                                        : (i < c.differentiate.size() && c.differentiate[i]);
    if (want) {
      wrt.push_back(InputName(i));
      checked.push_back(i);
    }
  }
  auto grads = training::AddGradients(g, "loss", wrt);
  if (!grads.ok()) return "autograd: " + std::string(grads.status().message());
  for (const std::string& w : wrt) {
    if (!grads->count(w)) return "no gradient produced for " + w;
    g.outputs.push_back(ValueInfo{grads->at(w), DataType::kUndefined, Shape::Unknown()});
  }
  auto session = Session::FromGraph(g, options);
  if (!session.ok()) return "gradient graph: " + std::string(session.status().message());
  auto analytic = (*session)->Run(Feeds(c, c.inputs));
  if (!analytic.ok()) return "gradient run: " + std::string(analytic.status().message());

  // 3. Central differences on the loss alone.
  Graph loss_only = BuildGraph(c, &weights);
  auto loss_session = Session::FromGraph(loss_only, options);
  if (!loss_session.ok()) return "loss graph: " + std::string(loss_session.status().message());
  std::ostringstream err;
  const double h = 1e-6;
  for (size_t k = 0; k < checked.size(); ++k) {
    size_t i = checked[k];
    const Tensor& grad = (*analytic)[1 + k];
    if (grad.dims() != c.inputs[i].dims())
      return "gradient of input " + std::to_string(i) + " has shape " + DimsToString(grad.dims()) +
             ", input has " + DimsToString(c.inputs[i].dims());
    int64_t n = c.inputs[i].numel();
    int64_t step = std::max<int64_t>(1, n / 64);  // at most ~64 probes per input
    for (int64_t e = 0; e < n; e += step) {
      std::vector<Tensor> plus = c.inputs, minus = c.inputs;
      plus[i] = c.inputs[i].Clone();
      minus[i] = c.inputs[i].Clone();
      plus[i].data<double>()[e] += h;
      minus[i].data<double>()[e] -= h;
      auto lp = Loss(**loss_session, c, plus), lm = Loss(**loss_session, c, minus);
      if (!lp.ok() || !lm.ok()) return "finite difference run failed";
      double numeric = (*lp - *lm) / (2 * h);
      double got = grad.data<double>()[e];
      if (std::fabs(got - numeric) > 1e-7 + c.tolerance * std::max(1.0, std::fabs(numeric))) {
        err << "input " << i << " element " << e << ": autograd " << got << ", finite difference "
            << numeric << "; ";
        break;
      }
    }
  }
  return err.str();
}

}  // namespace tandem::testing
