#include "runtime/plan.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "absl/strings/str_cat.h"
#include "framework/kernel_guard.h"
#include "ops/tandem_ops.h"
#include "placement/partitioner.h"
#include "runtime/plan_capture.h"

namespace tandem {

namespace {
// Whether the kernel of `provider`/`def` reads input i from host memory.
bool ReadsOnHost(const ExecutionProvider& provider, const KernelDef* def, int i) {
  return provider.device().type == DeviceType::kCpu || (def && def->reads_on_host(i));
}
bool ReadsMetadataOnly(const KernelDef* def, int i) { return def && def->reads_metadata_only(i); }
}  // namespace

Plan::Plan(const Graph& graph) : graph_(graph) {}
Plan::~Plan() = default;

int Plan::Slot(const std::string& name) {
  auto it = slot_of_.find(name);
  if (it != slot_of_.end()) return it->second;
  int s = static_cast<int>(slot_names_.size());
  slot_names_.push_back(name);
  slot_of_[name] = s;
  return s;
}

absl::StatusOr<std::unique_ptr<Plan>> Plan::Build(
    const Graph& graph, const std::map<std::string, ExecutionProvider*>& providers,
    int num_threads) {
  std::unique_ptr<Plan> plan(new Plan(graph));
  plan->num_threads_ = num_threads;
  for (const auto& [name, t] : graph.initializers) plan->constants_.push_back({plan->Slot(name), &t});
  for (const ValueInfo& in : graph.inputs) plan->input_slots_.push_back(plan->Slot(in.name));
  for (const std::string& name : graph.outer_scope_names)
    plan->outer_slots_.push_back({plan->Slot(name), name});

  for (const auto& [name, p] : providers) plan->providers_.push_back(p);
  // Graph inputs may be fed on a device. Host kernels that read one directly read a
  // "host shadow" slot instead, filled by Run with the input itself or its host copy,
  // while device kernels (and in-place updates) keep the caller's tensor.
  // A plan whose providers all compute on the host needs none: inputs are host tensors.
  std::map<std::string, int> shadow_of;  // graph input -> its host shadow slot
  bool any_device = false;
  for (const auto& [name, p] : providers) any_device |= p->device().type != DeviceType::kCpu;
  if (any_device)
    for (const ValueInfo& in : graph.inputs) shadow_of[in.name] = -1;
  std::map<int, size_t> last_use;  // slot -> step index
  for (const Node& node : graph.nodes) {
    Step step;
    step.node = &node;
    auto pit = providers.find(node.provider);
    if (pit == providers.end())
      return absl::InternalError("[plan] " + node.Describe() + " is assigned to unknown provider '" +
                                 node.provider + "'");
    step.provider = pit->second;
    if (node.domain == kTandemDomain && !FindTandemOp(node.op_type))
      return absl::InvalidArgumentError(node.Describe() + ": ai.tandem has no op '" + node.op_type +
                                        "' (ops/tandem_ops.h declares them; `tandem inspect --op all` lists them)");
    KernelInfo info = DescribeNode(graph, node, step.provider);
    const KernelRegistry& reg = step.provider->registry();
    DataType lookup = KernelLookupType(reg, info);
    step.def = reg.Find(node.domain, node.op_type, info.opset, lookup);
    auto kernel = step.provider->MakeKernel(info);
    if (!kernel.ok()) return kernel.status();
    step.kernel = std::move(*kernel);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& in = node.inputs[i];
      const int k = static_cast<int>(i);
      if ((step.def && step.def->any_device) || ReadsMetadataOnly(step.def, k))
        step.input_device.push_back(std::nullopt);
      else
        step.input_device.push_back(ReadsOnHost(*step.provider, step.def, k) ? Device{}
                                                                              : step.provider->device());
      auto shadow = shadow_of.find(in);
      if (!in.empty() && ReadsOnHost(*step.provider, step.def, k) && !ReadsMetadataOnly(step.def, k) &&
          shadow != shadow_of.end()) {
        if (shadow->second < 0) shadow->second = plan->Slot(in + "\x01on_host");
        step.inputs.push_back(shadow->second);
      } else {
        step.inputs.push_back(in.empty() ? -1 : plan->Slot(in));
      }
    }
    for (const std::string& out : node.outputs) {
      step.outputs.push_back(out.empty() ? -1 : plan->Slot(out));
      step.wanted.push_back(!out.empty());
    }
    size_t index = plan->steps_.size();
    for (int s : step.inputs)
      if (s >= 0) last_use[s] = index;
    for (const auto& [key, a] : node.attributes) {
      if (a.kind != Attribute::Kind::kGraph || !a.g) continue;
      for (const std::string& name : a.g->outer_scope_names)
        if (plan->slot_of_.count(name)) last_use[plan->slot_of_[name]] = index;
      auto sub = Build(*a.g, providers, num_threads);
      if (!sub.ok())
        return absl::Status(sub.status().code(), node.Describe() + ": subgraph '" + key + "': " +
                                                     std::string(sub.status().message()));
      step.subplans[key] = std::move(*sub);
    }
    plan->steps_.push_back(std::move(step));
  }
  for (const ValueInfo& in : graph.inputs) {
    auto shadow = shadow_of.find(in.name);
    plan->input_host_shadow_.push_back(shadow == shadow_of.end() ? -1 : shadow->second);
  }
  std::set<int> keep;  // graph outputs, inputs and constants are never released
  for (const ValueInfo& out : graph.outputs) {
    auto it = plan->slot_of_.find(out.name);
    if (it == plan->slot_of_.end())
      return absl::InvalidArgumentError("[plan] graph output '" + out.name + "' is never produced");
    plan->output_slots_.push_back(it->second);
    keep.insert(it->second);
  }
  for (int slot : plan->output_slots_)
    plan->output_slot_repeats_.push_back(
        std::count(plan->output_slots_.begin(), plan->output_slots_.end(), slot) > 1);
  for (const auto& [slot, step] : last_use)
    if (!keep.count(slot)) plan->steps_[step].release_after.push_back(slot);
  return plan;
}

void Plan::ResetProfile() {
  trace_.clear();
  for (Step& s : steps_) {
    s.total_us = 0;
    s.calls = 0;
    for (auto& [k, sub] : s.subplans) sub->ResetProfile();
  }
}

void Plan::set_profiling(bool on, bool events) {
  profiling_ = on || events;
  tracing_ = events;
  for (Step& s : steps_)
    for (auto& [k, sub] : s.subplans) sub->set_profiling(on, events);
}

std::vector<StepProfile> Plan::profile() const {
  std::vector<StepProfile> out;
  for (const Step& s : steps_)
    out.push_back({s.node->name.empty() ? s.node->outputs[0] : s.node->name, s.node->op_type,
                   s.provider->name(), s.total_us, s.calls});
  return out;
}

int Plan::ThreadsFor(const std::vector<const Tensor*>& inputs) const {
  if (num_threads_ <= 1) return num_threads_;
  int64_t elements = 0;
  for (const Tensor* t : inputs)
    if (t && t->is_tensor()) elements += t->numel();
  return elements < kSerialNodeElements ? 1 : num_threads_;
}

absl::Status Plan::RunStep(Step& step, std::vector<Tensor>& values, const OuterScope& outer) {
  const Node& node = *step.node;
  std::vector<const Tensor*>& inputs = step.input_values;
  inputs.clear();
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    int s = step.inputs[i];
    if (s < 0) {
      inputs.push_back(nullptr);
      continue;
    }
    if (!values[s].defined())
      return absl::InvalidArgumentError(node.Describe() + ": input " + std::to_string(i) + " '" +
                                        node.inputs[i] + "' has no value");
    inputs.push_back(&values[s]);
  }
  // A kernel must never be handed memory it cannot reach (the partitioner's Copy nodes
  // guarantee this; the check turns a bug into an error instead of a crash).
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::optional<Device>& want = step.input_device[i];
    if (!want || !inputs[i] || !inputs[i]->is_tensor() || !inputs[i]->buffer()) continue;
    if (inputs[i]->device() != *want)
      return absl::InternalError(node.Describe() + ": input " + std::to_string(i) + " '" +
                                 node.inputs[i] + "' is on " + inputs[i]->device().ToString() +
                                 ", the kernel reads it on " + want->ToString());
  }
  // Types known only at run time must still match the kernel's registration.
  if (step.def && !step.def->types.empty()) {
    int ti = step.def->type_input;
    if (ti < static_cast<int>(inputs.size()) && inputs[ti]) {
      DataType t = inputs[ti]->dtype();
      bool ok = false;
      for (DataType d : step.def->types) ok |= d == t;
      if (!ok)
        return absl::UnimplementedError(node.Describe() + ": " + step.provider->registry().ExplainMiss(
            node.domain, node.op_type, graph_.opset(node.domain), t));
    }
  }
  const int threads = ThreadsFor(inputs);
  omp_set_num_threads(threads);  // this thread's team size for the kernel's parallel regions
  std::vector<Tensor>& outputs = step.output_values;
  outputs.assign(step.outputs.size(), Tensor());
  KernelContext ctx(inputs, &outputs, step.wanted, &step.provider->allocator(), threads);
  if (!step.subplans.empty()) {
    ctx.set_subgraph_runner([&](const std::string& attr, const std::vector<Tensor>& sub_inputs)
                                -> absl::StatusOr<std::vector<Tensor>> {
      auto it = step.subplans.find(attr);
      if (it == step.subplans.end())
        return absl::InvalidArgumentError("no subgraph attribute '" + attr + "'");
      OuterScope scope = [&](const std::string& name) -> const Tensor* {
        auto s = slot_of_.find(name);
        if (s != slot_of_.end() && values[s->second].defined()) return &values[s->second];
        return outer ? outer(name) : nullptr;
      };
      return it->second->Run(sub_inputs, scope);
    });
  }
  auto start = profiling_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  absl::Status status = ComputeCatching(*step.kernel, ctx);
  double us = 0;  // this call's time (profiling; tracing implies it)
  if (profiling_) {
    step.provider->Synchronize().IgnoreError();
    us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    step.total_us += us;
    ++step.calls;
  }
  if (tracing_) {
    constexpr size_t kMaxTraceEvents = 1 << 20;  // ~100 MB of events; later ones are dropped
    TraceEvent e;
    e.node = node.name.empty() ? node.outputs[0] : node.name;
    e.op = node.op_type;
    e.provider = step.provider->name();
    for (const Tensor* t : inputs)
      if (t && t->is_tensor()) e.shapes += (e.shapes.empty() ? "" : " ") + DimsToString(t->dims());
    e.start_us = std::chrono::duration<double, std::micro>(start.time_since_epoch()).count();
    e.duration_us = us;
    if (trace_.size() < kMaxTraceEvents) trace_.push_back(std::move(e));
    for (auto& [attr, sub] : step.subplans) {  // bodies run inside this node
      trace_.insert(trace_.end(), sub->trace_.begin(), sub->trace_.end());
      sub->trace_.clear();
    }
  }
  if (!status.ok())
    return absl::Status(status.code(), absl::StrCat("[", step.provider->name(), "] ", node.Describe(),
                                                    ": ", status.message()));
  for (size_t i = 0; i < step.outputs.size(); ++i) {
    if (step.outputs[i] < 0) continue;
    if (!outputs[i].defined())
      return absl::InternalError(node.Describe() + ": kernel did not produce output " +
                                 std::to_string(i) + " '" + node.outputs[i] + "'");
    values[step.outputs[i]] = std::move(outputs[i]);
  }
  outputs.clear();  // unread outputs go back to the pool now (the capacity stays)
  for (int s : step.release_after) values[s] = Tensor();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> Plan::Run(std::vector<Tensor> inputs, const OuterScope& outer) {
  if (capture_ && capture_->off.empty() && !profiling_ && !outer) return RunCapturing(std::move(inputs));
  return RunLaunches(std::move(inputs), outer);
}

absl::Status Plan::BindInputs(std::vector<Tensor>& inputs, const OuterScope& outer) {
  std::vector<Tensor>& values = values_;
  values.resize(slot_names_.size());
  for (const auto& [slot, t] : constants_) values[slot] = *t;
  for (const auto& [slot, name] : outer_slots_) {
    const Tensor* t = outer ? outer(name) : nullptr;
    if (t) values[slot] = *t;
  }
  if (inputs.size() > input_slots_.size())
    return absl::InvalidArgumentError(absl::StrCat("graph '", graph_.name, "' takes ",
                                                   input_slots_.size(), " inputs, got ", inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) continue;
    const int shadow = input_host_shadow_[i];
    if (shadow >= 0) {
      auto host = CopyToHost(providers_, inputs[i]);
      if (!host.ok()) return host.status();
      values[shadow] = std::move(*host);
    }
    values[input_slots_[i]] = std::move(inputs[i]);  // a tensor copy costs a Dims allocation
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> Plan::RunLaunches(std::vector<Tensor> inputs, const OuterScope& outer) {
  std::vector<Tensor>& values = values_;
  ClearSlotsOnExit clear{values};
  if (absl::Status s = BindInputs(inputs, outer); !s.ok()) return s;
  for (Step& step : steps_) {
    absl::Status s = RunStep(step, values, outer);
    if (!s.ok()) return s;
  }
  std::vector<Tensor> out;
  for (size_t i = 0; i < output_slots_.size(); ++i) {
    if (!values[output_slots_[i]].defined())
      return absl::InvalidArgumentError("graph output '" + graph_.outputs[i].name + "' has no value");
    // The values are cleared on the way out: an output named once is moved, not copied.
    Tensor& v = values[output_slots_[i]];
    out.push_back(output_slot_repeats_[i] ? v : std::move(v));
  }
  return out;
}

}  // namespace tandem
