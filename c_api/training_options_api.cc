// Training options set by name, spelled like `tandem train`'s flags.
#include "c_api/handles.h"
#include "graph/parse_number.h"
#include "training/losses.h"
#include "training/optimizer.h"

using namespace tandem::capi;

namespace {

absl::Status Number(const std::string& key, const std::string& value, double* out) {
  auto v = tandem::ParseFiniteDouble(value);
  if (!v.ok())
    return absl::InvalidArgumentError("'" + key + "' wants a number, got '" + value + "': " +
                                      std::string(v.status().message()));
  *out = *v;
  return absl::OkStatus();
}

absl::Status Integer(const std::string& key, const std::string& value, int64_t* out) {
  auto v = tandem::ParseInt64(value, 0);
  if (!v.ok())
    return absl::InvalidArgumentError("'" + key + "' wants an integer >= 0, got '" + value + "': " +
                                      std::string(v.status().message()));
  *out = *v;
  return absl::OkStatus();
}

// Applies one setting; the error names the key and the value.
absl::Status Set(TandemTrainingOptions& all, const std::string& key, const std::string& value) {
  tandem::training::TrainerOptions& o = all.options;
  namespace tr = tandem::training;
  tr::OptimizerSpec& opt = o.spec.optimizer;
  tr::LrSchedule& sch = o.schedule;
  double x = 0;
  int64_t n = 0;
  // Float settings of the optimizer and schedule.
  const std::map<std::string, float*> floats = {
      {"lr", &opt.lr}, {"momentum", &opt.momentum}, {"beta1", &opt.beta1}, {"beta2", &opt.beta2},
      {"epsilon", &opt.epsilon}, {"weight_decay", &opt.weight_decay}, {"clip_norm", &opt.clip_norm},
      {"gamma", &sch.gamma}, {"min_lr", &sch.min_lr}};
  const std::map<std::string, int64_t*> integers = {
      {"step_size", &sch.step_size}, {"total_steps", &sch.total_steps},
      {"warmup_steps", &sch.warmup_steps}};
  if (auto f = floats.find(key); f != floats.end()) {
    if (auto s = Number(key, value, &x); !s.ok()) return s;
    *f->second = static_cast<float>(x);
  } else if (auto i = integers.find(key); i != integers.end()) {
    if (auto s = Integer(key, value, &n); !s.ok()) return s;
    *i->second = n;
  } else if (key == "loss") {
    auto loss = tr::LossFromString(value);
    if (!loss.ok()) return loss.status();
    o.spec.loss = *loss;
  } else if (key == "reduction") {
    if (value != "mean" && value != "sum")
      return absl::InvalidArgumentError("'reduction' must be mean or sum, got '" + value + "'");
    o.spec.reduction = value == "sum" ? tr::Reduction::kSum : tr::Reduction::kMean;
  } else if (key == "prediction") {
    o.spec.prediction = value;
  } else if (key == "optimizer") {
    auto kind = tr::OptimizerFromString(value);
    if (!kind.ok()) return kind.status();
    opt.kind = *kind;
  } else if (key == "nesterov") {
    if (value != "0" && value != "1")
      return absl::InvalidArgumentError("'nesterov' must be 0 or 1, got '" + value + "'");
    opt.nesterov = value == "1";
  } else if (key == "schedule") {
    auto kind = tr::ScheduleFromString(value);
    if (!kind.ok()) return kind.status();
    sch.kind = *kind;
  } else if (key == "freeze") {
    o.spec.freeze.push_back(value);
  } else if (key == "threads") {
    if (auto s = Integer(key, value, &n); !s.ok()) return s;
    o.num_threads = static_cast<int>(n);
  } else if (key == "device") {
    if (value != "cpu" && value != "cuda" && value != "auto")
      return absl::InvalidArgumentError("'device' must be cpu, cuda or auto, got '" + value + "'");
    o.providers = ProvidersForDevice(value);
  } else if (key == "distributed") {
    if (value != "mpi" && value != "none")
      return absl::InvalidArgumentError("'distributed' must be mpi or none, got '" + value + "'");
    all.distributed = value == "mpi";
  } else if (key == "profiling") {
    if (value != "0" && value != "1")
      return absl::InvalidArgumentError("'profiling' must be 0 or 1, got '" + value + "'");
    o.profiling = value == "1";
  } else {
    return absl::InvalidArgumentError("unknown training option '" + key + "'");
  }
  return absl::OkStatus();
}

}  // namespace

extern "C" {

TandemStatus* tandem_training_options_create(TandemTrainingOptions** out) {
  return Guard("tandem_training_options_create", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_training_options_create", out);
    *out = new TandemTrainingOptions;
    return nullptr;
  });
}

void tandem_training_options_release(TandemTrainingOptions* options) { delete options; }

TandemStatus* tandem_training_options_set(TandemTrainingOptions* options, const char* key,
                                          const char* value) {
  return Guard("tandem_training_options_set", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_training_options_set", options);
    TANDEM_CAPI_NOT_NULL("tandem_training_options_set", key);
    TANDEM_CAPI_NOT_NULL("tandem_training_options_set", value);
    absl::Status s = Set(*options, key, value);
    if (s.ok()) return nullptr;
    return MakeStatus(TANDEM_INVALID_ARGUMENT,
                      "[c_api] tandem_training_options_set: " + std::string(s.message()));
  });
}

}  // extern "C"
