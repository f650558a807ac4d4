#include "training/training_graph.h"

#include <set>

#include "framework/env_switch.h"
#include "framework/execution_provider.h"
#include "ops/attention_subgraph.h"
#include "optimizer/constant_folding.h"
#include "optimizer/dense_chain_fusion.h"
#include "optimizer/dense_chain_loss_fusion.h"
#include "optimizer/gelu_fusion.h"
#include "optimizer/linear_layer_gemm.h"
#include "training/gradient_all_reduce.h"
#include "training/gradient_builder.h"
#include "training/gradient_rules.h"

namespace tandem::training {

namespace {

bool Frozen(const std::string& name, const std::vector<std::string>& freeze) {
  for (const std::string& f : freeze) {
    if (!f.empty() && f.back() == '*') {
      if (name.compare(0, f.size() - 1, f, 0, f.size() - 1) == 0) return true;
    } else if (name == f) {
      return true;
    }
  }
  return false;
}

// Dropout and BatchNormalization switch to their training behaviour. Dropout reads the
// step counter `step` and gets a seed (the header says how). BatchNormalization running
// mean/var become graph inputs; their updates become graph outputs (recorded in `stats`
// as input -> output) that the trainer feeds back for the next step.
absl::Status EnterTrainingMode(Graph& g, uint64_t seed, const std::string& step, const std::string& first_row,
                               std::vector<std::pair<std::string, std::string>>& stats) {
  uint64_t dropouts = 0;
  for (Node& n : g.nodes) {
    if (!n.domain.empty()) continue;
    if (n.op_type == "Dropout") {
      if (g.opset("") < 12)
        return absl::UnimplementedError(n.Describe() + ": training-mode Dropout needs opset >= 12");
      std::string flag = n.name + "/training_mode";
      g.initializers[flag] = Tensor::Scalar<bool>(true);
      n.inputs.resize(first_row.empty() ? 4 : 5);
      n.inputs[2] = flag;
      n.inputs[3] = step;
      if (!first_row.empty()) n.inputs[4] = first_row;
      if (!n.has_attr("seed"))
        n.attributes["seed"] = IntAttribute(static_cast<int64_t>(seed + 0x9e3779b97f4a7c15ull * dropouts));
      ++dropouts;
      if (n.outputs.size() < 2) n.outputs.resize(2);
      if (n.outputs[1].empty()) n.outputs[1] = n.outputs[0] + "/mask";  // output names are unique
    } else if (n.op_type == "BatchNormalization") {
      if (g.opset("") < 9)
        return absl::UnimplementedError(n.Describe() + ": training BatchNormalization needs opset >= 9");
      if (n.inputs.size() < 5) return absl::InvalidArgumentError(n.Describe() + ": needs 5 inputs");
      // From opset 14 the attribute selects training; before, the statistics outputs do.
      if (g.opset("") >= 14) n.attributes["training_mode"] = IntAttribute(1);
      n.outputs.resize(g.opset("") >= 14 ? 3 : 5);
      for (int k = 0; k < 2; ++k) {
        const std::string& stat = n.inputs[3 + k];
        auto it = g.initializers.find(stat);
        if (it == g.initializers.end())
          return absl::InvalidArgumentError(n.Describe() + ": running statistic '" + stat +
                                            "' must be an initializer to train");
        if (n.outputs[1 + k].empty()) n.outputs[1 + k] = stat + "/updated";
        g.inputs.push_back(ValueInfo{stat, it->second.dtype(), Shape::Of(it->second.dims())});
        g.initializers.erase(it);
        stats.push_back({stat, n.outputs[1 + k]});
      }
      for (size_t k = 3; k < n.outputs.size(); ++k)
        if (n.outputs[k].empty()) n.outputs[k] = n.name + "/saved_" + std::to_string(k);
    }
  }
  return absl::OkStatus();
}

}  // namespace

Graph InferenceMode(Graph g) {
  std::set<std::string> graph_outputs;
  for (const ValueInfo& o : g.outputs) graph_outputs.insert(o.name);
  for (Node& n : g.nodes) {
    if (!n.domain.empty()) continue;
    if (n.op_type == "BatchNormalization") {
      n.attributes.erase("training_mode");
      bool extra_read = false;
      for (size_t k = 1; k < n.outputs.size(); ++k) extra_read |= graph_outputs.count(n.outputs[k]) > 0;
      if (!extra_read) n.outputs.resize(1);
    } else if (n.op_type == "Dropout" && n.inputs.size() > 2) {
      n.inputs.resize(2);  // no training_mode input: inference
    }
  }
  return g;
}

std::vector<std::string> TrainableParameters(const Graph& inference,
                                             const std::vector<std::string>& freeze) {
  // BatchNormalization running mean/var, Dropout's ratio and Constant nodes' values are
  // not trained.
  std::set<std::string> fixed = inference.constants;
  for (const Node& n : inference.nodes) {
    if (!n.domain.empty()) continue;
    if (n.op_type == "BatchNormalization")
      for (size_t i = 3; i < n.inputs.size() && i < 5; ++i) fixed.insert(n.inputs[i]);
    else if (n.op_type == "Dropout" && n.inputs.size() > 1)
      fixed.insert(n.inputs[1]);
  }
  std::vector<std::string> out;
  for (const auto& [name, t] : inference.initializers)
    if (IsFloatingPoint(t.dtype()) && t.numel() > 0 && !fixed.count(name) && !Frozen(name, freeze))
      out.push_back(name);
  return out;
}

absl::StatusOr<TrainingGraph> BuildTrainingGraph(const Graph& inference, const TrainingSpec& spec) {
  TrainingGraph tg;
  tg.graph = inference;
  Graph& g = tg.graph;
  for (const ValueInfo& in : g.inputs) tg.data_inputs.push_back(in.name);
  tg.params = TrainableParameters(inference, spec.freeze);
  if (tg.params.empty()) return absl::InvalidArgumentError("[train] the model has no trainable parameters");
  for (const std::string& p : tg.params) {
    const Tensor& t = g.initializers.at(p);
    g.inputs.push_back(ValueInfo{p, t.dtype(), Shape::Of(t.dims())});
    g.initializers.erase(p);
  }
  tg.step = "train/step";
  tg.lr = "train/lr";
  g.inputs.push_back(ValueInfo{tg.step, DataType::kInt64, Shape::Of({})});
  g.inputs.push_back(ValueInfo{tg.lr, DataType::kFloat, Shape::Of({})});
  if (spec.all_reduce) {  // Dropout draws a rank's rows as the one-process run does
    tg.first_row = "train/first_row";
    g.inputs.push_back(ValueInfo{tg.first_row, DataType::kInt64, Shape::Of({})});
  }
  auto mode = EnterTrainingMode(g, spec.seed, tg.step, tg.first_row, tg.running_stats);
  if (!mode.ok()) return mode;
  if (spec.cpu_fusions) {
    // Folded first: the exporters' scalar chains (attention's Cast(Sqrt(d)) scale, GELU's
    // constants) become the initializers the fusions read. The parameters are inputs by now.
    auto cpu = CreateCpuProvider();
    if (auto folded = FoldConstants(g, *cpu); !folded.ok()) return folded.status();
    FuseDenseChains(g);
    if (!SwitchedOff("TANDEM_LINEAR_GEMM")) FuseLinearLayersIntoGemm(g);
    FuseGelu(g);
    if (!SwitchedOff("TANDEM_CPU_FUSED_ATTENTION"))
      FuseAttentionSubgraphs(g, "", !SwitchedOff("TANDEM_ATTENTION_HEADS_IN_PLACE"));
  }

  std::string prediction = spec.prediction.empty() ? g.outputs.at(0).name : spec.prediction;
  tg.target = "target";  // AddLoss declares it as a graph input
  auto loss = AddLoss(g, spec.loss, prediction, tg.target, spec.reduction);
  if (!loss.ok()) return loss.status();
  tg.loss = *loss;

  auto grads = AddGradients(g, tg.loss, tg.params);
  if (!grads.ok()) return grads.status();
  for (const std::string& p : tg.params)
    if (!grads->count(p))
      return absl::InvalidArgumentError("[train] parameter '" + p +
                                        "' does not affect the loss; freeze it with --freeze");

  g.opsets[kTandemDomain] = 1;

  std::vector<std::string> grad_names;
  for (const std::string& p : tg.params) grad_names.push_back(grads->at(p));
  if (spec.all_reduce) {
    tg.grad_scale = "train/grad_scale";
    grad_names = AddGradientAllReduce(g, tg.params, grad_names, tg.grad_scale, spec.bucket_bytes);
  }
  const OptimizerSpec& opt = spec.optimizer;
  if (opt.clip_norm > 0) {
    Node clip;
    clip.op_type = "GlobalNormClip";
    clip.domain = kTandemDomain;
    clip.name = "train/clip";
    clip.inputs = grad_names;
    clip.attributes["max_norm"] = FloatAttribute(opt.clip_norm);
    for (std::string& gname : grad_names) {
      gname += "/clipped";
      clip.outputs.push_back(gname);
    }
    g.nodes.push_back(std::move(clip));
  }
  g.outputs = {ValueInfo{tg.loss, DataType::kUndefined, Shape::Of({})}};
  for (const auto& [stat, updated] : tg.running_stats)
    g.outputs.push_back(ValueInfo{updated, DataType::kUndefined, Shape::Unknown()});
  const char* op = nullptr;
  switch (opt.kind) {
    case OptimizerKind::kSgd: op = "SGDUpdate"; break;
    case OptimizerKind::kMomentum: op = "MomentumUpdate"; break;
    case OptimizerKind::kAdam: op = "AdamUpdate"; break;
    case OptimizerKind::kAdamW: op = "AdamWUpdate"; break;
  }
  // The updates: one node per parameter, or one for all of them (spec.one_update_node),
  // each taking (param, grad, state...) per parameter, then step and lr.
  Node update;
  update.op_type = op;
  update.domain = kTandemDomain;
  update.attributes["momentum"] = FloatAttribute(opt.momentum);
  update.attributes["nesterov"] = IntAttribute(opt.nesterov ? 1 : 0);
  update.attributes["beta1"] = FloatAttribute(opt.beta1);
  update.attributes["beta2"] = FloatAttribute(opt.beta2);
  update.attributes["epsilon"] = FloatAttribute(opt.epsilon);
  update.attributes["weight_decay"] = FloatAttribute(opt.weight_decay);
  Node all = update;
  all.name = "train/update";
  for (size_t k = 0; k < tg.params.size(); ++k) {
    const std::string& p = tg.params[k];
    const ValueInfo pinfo = *g.FindValueInfo(p);  // a copy: g.inputs grows below
    std::vector<std::string> group = {p, grad_names[k]};
    for (const std::string& suffix : OptimizerStateSuffixes(opt.kind)) {
      std::string s = p + "/" + suffix;
      g.inputs.push_back(ValueInfo{s, pinfo.dtype, pinfo.shape});
      tg.state[p].push_back(s);
      group.push_back(s);
    }
    const std::string updated = p + "/updated";
    g.outputs.push_back(ValueInfo{updated, pinfo.dtype, pinfo.shape});
    if (spec.one_update_node) {
      all.inputs.insert(all.inputs.end(), group.begin(), group.end());
      all.outputs.push_back(updated);
      continue;
    }
    Node u = update;
    u.name = p + "/update";
    u.inputs = std::move(group);
    u.inputs.push_back(tg.step);
    u.inputs.push_back(tg.lr);
    u.outputs = {updated};
    g.nodes.push_back(std::move(u));
  }
  if (spec.one_update_node) {
    all.inputs.push_back(tg.step);
    all.inputs.push_back(tg.lr);
    g.nodes.push_back(std::move(all));
  }
  if (spec.cpu_fusions) FuseDenseChainMseLoss(g);
  return tg;
}

}  // namespace tandem::training
