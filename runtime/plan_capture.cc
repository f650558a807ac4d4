// Plan's device-graph runs (runtime/plan_capture.h): which steps a recording holds, and
// the runs that record, replay or launch.
#include "runtime/plan_capture.h"

#include <map>
#include <new>

#include "absl/strings/str_cat.h"
#include "framework/copy_kernel.h"
#include "runtime/plan.h"

namespace tandem {

std::string Plan::EnableCapture() {
  capture_ = std::make_unique<PlanCapture>();
  capture_->off = ClassifyForCapture(*capture_);
  return capture_->off;
}

std::string Plan::capture_status() const { return capture_ ? capture_->off : "device graphs are off"; }

int64_t Plan::replays() const { return capture_ ? capture_->replays : 0; }

std::string Plan::ClassifyForCapture(PlanCapture& c) const {
  using Role = PlanCapture::Role;
  std::map<int, int> input_of;  // graph input slot -> its index
  for (size_t i = 0; i < input_slots_.size(); ++i) input_of[input_slots_[i]] = static_cast<int>(i);
  std::set<int> constants, shape_values;  // shape_values: fixed for fixed input shapes
  for (const auto& [slot, t] : constants_) constants.insert(slot), shape_values.insert(slot);
  const std::set<int> outputs(output_slots_.begin(), output_slots_.end());
  std::map<int, int> readers;
  for (const Step& st : steps_)
    for (int s : st.inputs)
      if (s >= 0) ++readers[s];

  for (const Step& st : steps_)
    if (!IsDeviceCopy(*st.node) && st.provider->device().type != DeviceType::kCpu) {
      if (c.device && c.device != st.provider) return "the plan has nodes on two devices";
      c.device = st.provider;
    }
  if (!c.device) return "nothing runs on a device";
  if (!c.device->SupportsCapture()) return c.device->name() + " cannot record its work";

  std::set<int> in_place_slots;
  for (size_t k = 0; k < steps_.size(); ++k) {
    const Step& st = steps_[k];
    const Node& n = *st.node;
    if (!st.subplans.empty()) return n.Describe() + " runs a subgraph";
    if (IsDeviceCopy(n)) {
      const bool to_host = n.attr_string("to", "") == "cpu";
      const int src = st.inputs.empty() ? -1 : st.inputs[0];
      if (!to_host && (input_of.count(src) || constants.count(src))) {
        c.roles.push_back(Role::kPrologue);
        if (input_of.count(src)) c.input_copies.push_back({k, input_of[src]});
        continue;
      }
      bool only_outputs = to_host;
      for (int s : st.outputs) only_outputs &= s < 0 || (outputs.count(s) && !readers.count(s));
      if (!only_outputs) return n.Describe() + " moves a value between devices in the middle of the run";
      c.roles.push_back(Role::kEpilogue);
      for (int s : st.outputs)
        if (s >= 0) c.epilogue_slots.insert(s);
      continue;
    }
    if (st.provider->device().type == DeviceType::kCpu) {
      // Not run again on replay: only what follows from shapes (a node of no inputs, such
      // as an unseeded RandomNormal, or a random one, would be frozen).
      bool any_input = false;
      for (int s : st.inputs) any_input |= s >= 0;
      if (!any_input || n.op_type.rfind("Random", 0) == 0 || n.op_type == "Bernoulli" || n.op_type == "Multinomial")
        return n.Describe() + " runs on the host and draws new values each run";
      for (size_t i = 0; i < st.inputs.size(); ++i) {
        const int s = st.inputs[i];
        if (s >= 0 && !shape_values.count(s) && !(st.def && st.def->reads_metadata_only(static_cast<int>(i))))
          return n.Describe() + " computes on the host with input '" + n.inputs[i] + "', which changes between runs";
      }
      c.roles.push_back(Role::kShape);
      for (int s : st.outputs)
        if (s >= 0) shape_values.insert(s);
      continue;
    }
    for (size_t i = 0; i < st.inputs.size(); ++i) {
      const int s = st.inputs[i];
      const int k = static_cast<int>(i);
      if (s >= 0 && st.def && st.def->reads_on_host(k) && !st.def->reads_metadata_only(k) && !shape_values.count(s))
        return n.Describe() + " reads input '" + n.inputs[i] + "' on the host, and it changes between runs";
      if (s >= 0 && st.def && st.def->updates_inputs_in_place) in_place_slots.insert(s);
    }
    c.roles.push_back(Role::kBody);
  }
  c.in_place.assign(input_slots_.size(), false);
  for (size_t i = 0; i < input_slots_.size(); ++i) c.in_place[i] = in_place_slots.count(input_slots_[i]) > 0;
  for (const auto& [step, i] : c.input_copies)
    if (in_place_slots.count(steps_[step].outputs[0])) c.in_place[i] = true;
  return "";
}

absl::Status Plan::RunRole(int role) {
  for (size_t k = 0; k < steps_.size(); ++k) {
    const int r = capture_->roles[k];
    const bool wanted = role == PlanCapture::kBody ? (r == PlanCapture::kBody || r == PlanCapture::kShape) : r == role;
    if (!wanted) continue;
    if (absl::Status s = RunStep(steps_[k], values_, nullptr); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> Plan::RunCapturing(std::vector<Tensor> inputs) {
  PlanCapture& c = *capture_;
  std::vector<PlanCapture::Feed> signature;
  for (const Tensor& t : inputs) {
    if (!t.defined() || !t.is_tensor()) return RunLaunches(std::move(inputs), nullptr);  // its error, or no recording
    signature.push_back({t.dtype(), t.dims(), t.device()});
  }
  if (!c.warm || signature != c.signature) {
    c.Drop();
    c.signature = std::move(signature);
    c.warm = true;
    c.recordings_in_a_row = 0;
    return RunLaunches(std::move(inputs), nullptr);
  }
  if (c.graph) {
    bool same_buffers = true;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (c.in_place[i] && c.bound[i].defined()) same_buffers &= inputs[i].raw() == c.bound[i].raw();
    if (same_buffers) return Replay(std::move(inputs));
    c.Drop();
  }
  if (++c.recordings_in_a_row > PlanCapture::kMaxRecordingsInARow) {
    c.off = absl::StrCat("inputs updated in place came in new buffers ", PlanCapture::kMaxRecordingsInARow,
                         " runs in a row");
    return RunLaunches(std::move(inputs), nullptr);
  }
  return Record(std::move(inputs));
}

absl::StatusOr<std::vector<Tensor>> Plan::Record(std::vector<Tensor> inputs) {
  PlanCapture& c = *capture_;
  ExecutionProvider& dev = *c.device;
  const std::vector<Tensor> original = inputs;  // launched again if the recording fails
  auto launch_instead = [&](const std::string& why) {
    c.Drop();
    c.off = why;
    return RunLaunches(original, nullptr);
  };
  // Device-fed inputs that nothing updates in place are read from buffers of the plan's own.
  c.bound.assign(inputs.size(), Tensor());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].device() != dev.device()) continue;
    if (c.in_place[i]) {
      c.bound[i] = inputs[i];
      continue;
    }
    Tensor own;
    try {
      own = AllocateTensor(dev.allocator(), inputs[i].dtype(), inputs[i].dims());
    } catch (const std::bad_alloc& e) {
      return launch_instead(std::string("no memory for a recorded input: ") + e.what());
    }
    if (own.bytes() && !own.raw()) return launch_instead("no memory for a recorded input");
    if (absl::Status s = dev.Copy(inputs[i], own); !s.ok()) return launch_instead("recording: " + std::string(s.message()));
    c.bound[i] = own;
    inputs[i] = own;
  }
  ClearSlotsOnExit clear{values_};
  if (absl::Status s = BindInputs(inputs, nullptr); !s.ok()) return launch_instead("recording: " + std::string(s.message()));
  if (absl::Status s = RunRole(PlanCapture::kPrologue); !s.ok())
    return launch_instead("recording: " + std::string(s.message()));
  for (const auto& [step, i] : c.input_copies) c.prologue_outputs.push_back(values_[steps_[step].outputs[0]]);
  if (absl::Status s = dev.BeginCapture(); !s.ok()) {
    if (absl::IsUnavailable(s)) {  // another session is recording on the device: try on a later run
      c.Drop();
      return RunLaunches(original, nullptr);
    }
    return launch_instead("recording: " + std::string(s.message()));
  }
  // The capture ends whatever happens, an exception included (a device stream left
  // capturing would swallow every later launch).
  struct CaptureGuard {
    ExecutionProvider& dev;
    bool open = true;
    absl::StatusOr<std::unique_ptr<DeviceGraph>> End() {
      open = false;
      return dev.EndCapture();
    }
    ~CaptureGuard() {
      if (open) dev.EndCapture().IgnoreError();
    }
  } capture{dev};
  absl::Status ran = RunRole(PlanCapture::kBody);
  auto graph = capture.End();
  if (!ran.ok()) return launch_instead("recording: " + std::string(ran.message()));
  if (!graph.ok()) return launch_instead("recording: " + std::string(graph.status().message()));
  c.graph = std::move(*graph);
  c.kept.assign(values_.size(), Tensor());
  for (int s : output_slots_) c.kept[s] = values_[s];
  for (size_t k = 0; k < steps_.size(); ++k)
    if (c.roles[k] == PlanCapture::kEpilogue)
      for (int s : steps_[k].inputs)
        if (s >= 0) c.kept[s] = values_[s];
  if (absl::Status s = c.graph->Replay(); !s.ok()) {
    c.Drop();
    return s;
  }
  return CapturedOutputs(original);
}

absl::StatusOr<std::vector<Tensor>> Plan::Replay(std::vector<Tensor> inputs) {
  PlanCapture& c = *capture_;
  ExecutionProvider& dev = *c.device;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (c.bound[i].defined() && !c.in_place[i])
      if (absl::Status s = dev.Copy(inputs[i], c.bound[i]); !s.ok()) return s;
  for (size_t k = 0; k < c.input_copies.size(); ++k) {
    const int i = c.input_copies[k].second;
    if (c.bound[i].defined()) continue;  // device-fed: the copy step passed the bound buffer through
    if (absl::Status s = dev.Copy(inputs[i], c.prologue_outputs[k]); !s.ok()) return s;
  }
  if (absl::Status s = c.graph->Replay(); !s.ok()) return s;
  ++c.replays;
  c.recordings_in_a_row = 0;
  ClearSlotsOnExit clear{values_};
  values_.resize(slot_names_.size());
  for (size_t s = 0; s < c.kept.size(); ++s)
    if (c.kept[s].defined()) values_[s] = c.kept[s];
  return CapturedOutputs(inputs);
}

absl::StatusOr<std::vector<Tensor>> Plan::CapturedOutputs(const std::vector<Tensor>& inputs) {
  PlanCapture& c = *capture_;
  ExecutionProvider& dev = *c.device;
  if (absl::Status s = RunRole(PlanCapture::kEpilogue); !s.ok()) return s;
  std::map<int, size_t> input_at;  // graph input slot -> index
  for (size_t k = 0; k < input_slots_.size(); ++k) input_at[input_slots_[k]] = k;
  std::vector<Tensor> out;
  for (size_t i = 0; i < output_slots_.size(); ++i) {
    const int slot = output_slots_[i];
    if (auto in = input_at.find(slot); in != input_at.end() && in->second < inputs.size()) {
      out.push_back(inputs[in->second]);  // an input passed straight through: this run's
      continue;
    }
    const Tensor& v = values_[slot];
    if (!v.defined())
      return absl::InvalidArgumentError("graph output '" + graph_.outputs[i].name + "' has no value");
    if (c.epilogue_slots.count(slot)) {
      out.push_back(v);  // the epilogue's fresh host copy
      continue;
    }
    if (!v.is_tensor() || v.device() != dev.device()) {
      out.push_back(v.Clone());  // a shape, kept for every replay: the caller gets their own
      continue;
    }
    bool theirs = false;  // an input the recording updated in place: the caller's own buffer
    for (size_t k = 0; k < inputs.size() && !theirs; ++k)
      if (c.in_place[k] && c.bound[k].defined() && c.bound[k].raw() == v.raw() && c.bound[k].bytes() == v.bytes()) {
        out.push_back(v);
        theirs = true;
      }
    if (theirs) continue;
    Tensor fresh;
    try {
      fresh = AllocateTensor(dev.allocator(), v.dtype(), v.dims());
    } catch (const std::bad_alloc& e) {
      return absl::ResourceExhaustedError("[" + dev.name() + "] output '" + graph_.outputs[i].name + "': " + e.what());
    }
    if (fresh.bytes() && !fresh.raw())
      return absl::ResourceExhaustedError("[" + dev.name() + "] out of memory for output '" + graph_.outputs[i].name + "'");
    if (absl::Status s = dev.Copy(v, fresh); !s.ok()) return s;
    out.push_back(std::move(fresh));
  }
  return out;
}

}  // namespace tandem
