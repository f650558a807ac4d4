#include "training/checkpoint.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "graph/parse_number.h"
#include "graph/regular_file.h"
#include "onnx_import/atomic_file.h"
#include "onnx_import/tensor_proto.h"

namespace tandem::training {

namespace {
constexpr char kMagic[] = "tandem.checkpoint";
constexpr char kStatePrefix[] = "optimizer_state:";

bool AllFinite(const Tensor& t) {
  if (!IsFloatingPoint(t.dtype())) return true;
  if (t.dtype() == DataType::kFloat) {
    const float* p = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i)
      if (!std::isfinite(p[i])) return false;
    return true;
  }
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(t.ElementAsDouble(i))) return false;
  return true;
}

void AddMeta(onnx::ModelProto& m, const std::string& key, const std::string& value) {
  auto* kv = m.add_metadata_props();
  kv->set_key(key);
  kv->set_value(value);
}
}  // namespace

absl::Status SaveCheckpoint(const std::string& path, const Checkpoint& c) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("tandem");
  AddMeta(m, kMagic, "1");
  AddMeta(m, "step", std::to_string(c.step));
  AddMeta(m, "epoch", std::to_string(c.epoch));
  AddMeta(m, "rng_state", c.rng_state);
  auto* g = m.mutable_graph();
  g->set_name("checkpoint");
  for (const auto& [name, t] : c.params) TensorToProto(t, name, g->add_initializer());
  for (const auto& [name, t] : c.state) TensorToProto(t, kStatePrefix + name, g->add_initializer());
  std::string bytes;
  if (!m.SerializeToString(&bytes)) return absl::InternalError("[checkpoint] serialization failed");
  absl::Status s = WriteFileAtomically(path, bytes);
  return s.ok() ? s : absl::Status(s.code(), "[checkpoint] " + std::string(s.message()));
}

absl::StatusOr<Checkpoint> LoadCheckpoint(const std::string& path) {
  auto fail = [&](const std::string& what) {
    return absl::InvalidArgumentError("[checkpoint] " + path + ": " + what);
  };
  if (auto s = RequireRegularFile(path); !s.ok()) return absl::Status(s.code(), "[checkpoint] " + std::string(s.message()));
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("[checkpoint] " + path + ": cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  onnx::ModelProto m;
  const std::string bytes = ss.str();
  if (!ParseModelProto(bytes.data(), bytes.size(), &m)) return fail("not a checkpoint (protobuf parsing failed)");
  std::map<std::string, std::string> meta;
  for (const auto& kv : m.metadata_props()) meta[kv.key()] = kv.value();
  if (meta[kMagic] != "1") return fail("not a Tandem checkpoint");
  Checkpoint c;
  // Counters a run adds to: far below where int64 arithmetic on them could overflow.
  constexpr int64_t kMaxCount = int64_t{1} << 53;
  for (const auto& [field, value] : {std::pair<const char*, int64_t*>{"step", &c.step}, {"epoch", &c.epoch}}) {
    if (!meta.count(field)) return fail(std::string("field '") + field + "' is missing");
    auto v = ParseInt64(meta[field], 0, kMaxCount);
    if (!v.ok()) return fail(std::string("field '") + field + "': " + std::string(v.status().message()));
    *value = *v;
  }
  c.rng_state = meta["rng_state"];
  const std::string prefix = kStatePrefix;
  for (const auto& init : m.graph().initializer()) {
    auto t = TensorFromProto(init, "");
    if (!t.ok()) return fail(std::string(t.status().message()));
    if (init.name().compare(0, prefix.size(), prefix) == 0)
      c.state[init.name().substr(prefix.size())] = std::move(*t);
    else
      c.params[init.name()] = std::move(*t);
  }
  return c;
}

std::string NonFiniteTensor(const Checkpoint& c) {
  for (const auto& [name, t] : c.params)
    if (!AllFinite(t)) return "parameter '" + name + "'";
  for (const auto& [name, t] : c.state)
    if (!AllFinite(t)) return "optimizer state '" + name + "'";
  return "";
}

}  // namespace tandem::training
