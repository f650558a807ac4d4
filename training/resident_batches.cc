#include "training/resident_batches.h"

namespace tandem::training {
namespace {

bool IsFloat32(const Tensor& t) { return t.defined() && t.dtype() == DataType::kFloat; }

// The dataset's tensors by slot: "x", "y", "more:NAME".
std::map<std::string, const Tensor*> Slots(const Dataset& d) {
  std::map<std::string, const Tensor*> s = {{"x", &d.x}, {"y", &d.y}};
  for (const auto& [name, t] : d.more) s["more:" + name] = &t;
  return s;
}

Tensor* SlotOf(Dataset& d, const std::string& slot) {
  if (slot == "x") return &d.x;
  if (slot == "y") return &d.y;
  return &d.more[slot.substr(5)];
}

}  // namespace

int64_t ResidentBatches::ResidentBytes(const Dataset& host) {
  int64_t bytes = 0;
  for (const auto& [slot, t] : Slots(host))
    if (IsFloat32(*t)) bytes += static_cast<int64_t>(t->bytes());
  return bytes;
}

absl::StatusOr<std::unique_ptr<ResidentBatches>> ResidentBatches::Create(const Trainer& trainer, const Dataset& host) {
  std::unique_ptr<ResidentBatches> r(new ResidentBatches());
  r->host_ = host;
  Graph g;
  g.name = "resident_batches";
  g.opsets[""] = 13;
  g.inputs.push_back(ValueInfo{"rows", DataType::kInt64, Shape::Of({-1})});
  int k = 0;
  for (const auto& [slot, t] : Slots(host)) {
    if (!IsFloat32(*t)) continue;
    const std::string in = "data" + std::to_string(k), out = "batch" + std::to_string(k);
    ++k;
    auto up = trainer.ToDevice(*t);
    if (!up.ok()) return up.status();
    r->device_[in] = std::move(*up);
    r->output_of_[slot] = in;
    Shape shape = Shape::Of(t->dims());
    g.inputs.push_back(ValueInfo{in, DataType::kFloat, shape});
    Node n;
    n.name = "gather_" + in;
    n.op_type = "Gather";
    n.inputs = {in, "rows"};
    n.outputs = {out};
    g.nodes.push_back(n);
    shape.dims[0] = Dim{};  // the batch
    g.outputs.push_back(ValueInfo{out, DataType::kFloat, shape});
  }
  if (k == 0) return absl::InvalidArgumentError("the dataset holds no float32 tensor to keep on the device");
  SessionOptions so;
  so.providers = trainer.providers();
  so.constant_folding = false;
  so.outputs_on_host = false;  // the batches stay on the device for the step
  auto s = Session::FromGraph(std::move(g), so);
  if (!s.ok()) return s.status();
  r->gather_ = std::move(*s);
  return r;
}

Dataset ResidentBatches::All() const {
  Dataset all = host_;
  for (const auto& [slot, in] : output_of_) *SlotOf(all, slot) = device_.at(in);
  return all;
}

absl::StatusOr<Dataset> ResidentBatches::Gather(const int64_t* rows, int64_t count) {
  std::map<std::string, Tensor> feeds = device_;
  feeds["rows"] = Tensor::FromVector<int64_t>(std::vector<int64_t>(rows, rows + count), {count});
  auto out = gather_->Run(feeds);
  if (!out.ok()) return out.status();
  Dataset batch;
  const std::vector<int64_t> picked(rows, rows + count);
  size_t next = 0;  // outputs come in the order the slots were added (std::map order)
  for (const auto& [slot, t] : Slots(host_)) {
    Tensor* dst = SlotOf(batch, slot);
    if (output_of_.count(slot)) {
      *dst = (*out)[next++];
    } else {
      *dst = GatherRows(*t, picked);  // on the host
    }
  }
  return batch;
}

}  // namespace tandem::training
