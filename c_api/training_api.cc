// Training sessions: steps, evaluation, prediction, learning rate, checkpoints, export.
// Every call try-locks the session: a concurrent call is refused with TANDEM_BUSY.
#include "absl/strings/str_cat.h"
#include "c_api/handles.h"
#include "onnx_import/export.h"
#include "onnx_import/import.h"
#include "training/checkpoint.h"
#include "training/data_parallel.h"
#include "training/metrics.h"

using namespace tandem::capi;
using tandem::Tensor;

// The first lines of every training entry point: the session is given and not in use.
#define TANDEM_TRAINING_ENTER(function)                       \
  TANDEM_CAPI_NOT_NULL(function, ts);                         \
  BusyGuard busy_guard(ts->busy);                             \
  if (busy_guard.busy()) return BusyStatus(function, "training session")

namespace {

TandemStatus* Prefixed(const char* function, const absl::Status& s) {
  if (s.ok()) return nullptr;
  return FromStatus(absl::Status(s.code(), absl::StrCat("[c_api] ", function, ": ", s.message())));
}

}  // namespace

extern "C" {

TandemStatus* tandem_training_session_create(TandemEnv* env, const char* model_path,
                                             const TandemTrainingOptions* options,
                                             TandemTrainingSession** out) {
  return Guard("tandem_training_session_create", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_training_session_create", env);
    TANDEM_CAPI_NOT_NULL("tandem_training_session_create", model_path);
    TANDEM_CAPI_NOT_NULL("tandem_training_session_create", out);
    auto graph = tandem::ImportModelFile(model_path);
    if (!graph.ok()) {
      TandemStatus* s = FromStatus(graph.status());
      if (s->code == TANDEM_INVALID_ARGUMENT) s->code = TANDEM_INVALID_MODEL;
      return s;
    }
    tandem::training::TrainerOptions o = options ? options->options : tandem::training::TrainerOptions{};
    auto group = tandem::training::JoinDataParallel(options && options->distributed);
    if (!group.ok()) return FromStatus(group.status());
    o.communicator = group->comm;
    auto trainer = tandem::training::Trainer::Create(*graph, o);
    if (!trainer.ok()) return FromStatus(trainer.status());
    auto ts = std::make_unique<TandemTrainingSession>();
    ts->trainer = std::move(*trainer);
    ts->model_inputs = graph->inputs;
    ts->output_count = graph->outputs.size();
    ts->loss_kind = o.spec.loss;
    for (size_t i = 0; i < graph->outputs.size(); ++i)
      if (graph->outputs[i].name == o.spec.prediction) ts->prediction_index = i;
    *out = ts.release();
    return nullptr;
  });
}

void tandem_training_session_release(TandemTrainingSession* ts) { delete ts; }

TandemStatus* tandem_training_session_rank(const TandemTrainingSession* ts, int* rank, int* size) {
  return Guard("tandem_training_session_rank", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_training_session_rank", ts);
    const tandem::Communicator* comm = ts->trainer->communicator();
    if (rank) *rank = comm ? comm->rank() : 0;
    if (size) *size = comm ? comm->size() : 1;
    return nullptr;
  });
}

TandemStatus* tandem_training_session_device_stream(const TandemTrainingSession* ts, void** stream) {
  return Guard("tandem_training_session_device_stream", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_training_session_device_stream", ts);
    TANDEM_CAPI_NOT_NULL("tandem_training_session_device_stream", stream);
    *stream = ts->trainer->training_session().primary_provider().native_stream();
    return nullptr;
  });
}

TandemStatus* tandem_training_session_input_count(const TandemTrainingSession* ts, size_t* count) {
  return Guard("tandem_training_session_input_count", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_training_session_input_count", ts);
    TANDEM_CAPI_NOT_NULL("tandem_training_session_input_count", count);
    *count = ts->model_inputs.size();
    return nullptr;
  });
}

TandemStatus* tandem_training_session_output_count(const TandemTrainingSession* ts, size_t* count) {
  return Guard("tandem_training_session_output_count", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_training_session_output_count", ts);
    TANDEM_CAPI_NOT_NULL("tandem_training_session_output_count", count);
    *count = ts->output_count;
    return nullptr;
  });
}

TandemStatus* tandem_training_session_input_name(const TandemTrainingSession* ts, size_t index,
                                                 const char** name) {
  return Guard("tandem_training_session_input_name", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_training_session_input_name", ts);
    TANDEM_CAPI_NOT_NULL("tandem_training_session_input_name", name);
    if (index >= ts->model_inputs.size())
      return MakeStatus(TANDEM_INVALID_ARGUMENT,
                        absl::StrCat("[c_api] tandem_training_session_input_name: index ", index,
                                     " is out of range (the model has ", ts->model_inputs.size(), " inputs)"));
    *name = ts->model_inputs[index].name.c_str();
    return nullptr;
  });
}

TandemStatus* tandem_training_session_train_step(TandemTrainingSession* ts,
                                                 const char* const* input_names,
                                                 const TandemTensor* const* inputs,
                                                 size_t input_count, const TandemTensor* target,
                                                 double* loss) {
  const char* fn = "tandem_training_session_train_step";
  return Guard(fn, [&]() -> TandemStatus* {
    TANDEM_TRAINING_ENTER(fn);
    TANDEM_CAPI_NOT_NULL(fn, target);
    std::map<std::string, Tensor> feeds;
    if (TandemStatus* s = CollectFeeds(fn, input_names, inputs, input_count, &feeds)) return s;
    const Tensor& y = target->tensor;
    if (absl::Status st = ts->trainer->ShareLocalBatch(y.rank() > 0 ? y.dim(0) : 1); !st.ok()) return FromStatus(st);
    auto l = ts->trainer->Step(feeds, y);
    if (!l.ok()) return FromStatus(l.status());
    if (loss) *loss = *l;
    return nullptr;
  });
}

TandemStatus* tandem_training_session_eval_step(TandemTrainingSession* ts,
                                                const char* const* input_names,
                                                const TandemTensor* const* inputs, size_t input_count,
                                                const TandemTensor* target, double* loss,
                                                double* accuracy) {
  const char* fn = "tandem_training_session_eval_step";
  return Guard(fn, [&]() -> TandemStatus* {
    TANDEM_TRAINING_ENTER(fn);
    TANDEM_CAPI_NOT_NULL(fn, target);
    std::map<std::string, Tensor> feeds;
    if (TandemStatus* s = CollectFeeds(fn, input_names, inputs, input_count, &feeds)) return s;
    auto out = ts->trainer->Predict(feeds);
    if (!out.ok()) return FromStatus(out.status());
    // Metrics read on the host: a target uploaded to the device is copied back first.
    auto host_target = ts->trainer->ToHost(target->tensor);
    if (!host_target.ok()) return FromStatus(host_target.status());
    tandem::training::MetricAccumulator acc(ts->loss_kind);
    Tensor prediction = (*out)[ts->prediction_index];
    if (absl::Status s = acc.Add(prediction, *host_target); !s.ok()) return Prefixed(fn, s);
    auto m = tandem::training::ReduceMetrics(acc.Result(), ts->trainer->communicator());
    if (!m.ok()) return FromStatus(m.status());
    if (loss) *loss = m->loss;
    if (accuracy) *accuracy = m->accuracy;
    return nullptr;
  });
}

TandemStatus* tandem_training_session_predict(TandemTrainingSession* ts,
                                              const char* const* input_names,
                                              const TandemTensor* const* inputs, size_t input_count,
                                              size_t output_count, TandemTensor** outputs) {
  const char* fn = "tandem_training_session_predict";
  return Guard(fn, [&]() -> TandemStatus* {
    TANDEM_TRAINING_ENTER(fn);
    TANDEM_CAPI_NOT_NULL(fn, outputs);
    if (output_count != ts->output_count)
      return MakeStatus(TANDEM_INVALID_ARGUMENT,
                        absl::StrCat("[c_api] ", fn, ": output_count must be the model's ",
                                     ts->output_count, " outputs, got ", output_count));
    std::map<std::string, Tensor> feeds;
    if (TandemStatus* s = CollectFeeds(fn, input_names, inputs, input_count, &feeds)) return s;
    auto out = ts->trainer->Predict(feeds);
    if (!out.ok()) return FromStatus(out.status());
    // Predict's outputs are on the host (its session copies them back); cloned so that
    // nothing aliases the parameters or the caller's memory.
    std::vector<Tensor> copies;
    for (const Tensor& t : *out) copies.push_back(t.Clone());
    PublishTensors(std::move(copies), outputs);
    return nullptr;
  });
}

TandemStatus* tandem_training_session_set_learning_rate(TandemTrainingSession* ts, double lr) {
  return Guard("tandem_training_session_set_learning_rate", [&]() -> TandemStatus* {
    const char* fn = "tandem_training_session_set_learning_rate";
    TANDEM_TRAINING_ENTER(fn);
    if (!(lr >= 0) || lr > 1e6)
      return MakeStatus(TANDEM_INVALID_ARGUMENT,
                        absl::StrCat("[c_api] ", fn, ": the learning rate must be in [0, 1e6], got ", lr));
    ts->trainer->set_base_learning_rate(static_cast<float>(lr));
    return nullptr;
  });
}

TandemStatus* tandem_training_session_learning_rate(TandemTrainingSession* ts, double* lr) {
  return Guard("tandem_training_session_learning_rate", [&]() -> TandemStatus* {
    const char* fn = "tandem_training_session_learning_rate";
    TANDEM_TRAINING_ENTER(fn);
    TANDEM_CAPI_NOT_NULL(fn, lr);
    *lr = ts->trainer->next_learning_rate();
    return nullptr;
  });
}

TandemStatus* tandem_training_session_steps(TandemTrainingSession* ts, int64_t* steps) {
  return Guard("tandem_training_session_steps", [&]() -> TandemStatus* {
    const char* fn = "tandem_training_session_steps";
    TANDEM_TRAINING_ENTER(fn);
    TANDEM_CAPI_NOT_NULL(fn, steps);
    *steps = ts->trainer->steps_taken();
    return nullptr;
  });
}

TandemStatus* tandem_training_session_save_checkpoint(TandemTrainingSession* ts, const char* path) {
  const char* fn = "tandem_training_session_save_checkpoint";
  return Guard(fn, [&]() -> TandemStatus* {
    TANDEM_TRAINING_ENTER(fn);
    TANDEM_CAPI_NOT_NULL(fn, path);
    auto c = ts->trainer->MakeCheckpoint(/*epochs_done=*/0, /*rng_state=*/"");
    if (!c.ok()) return FromStatus(c.status());
    return FromStatus(tandem::training::SaveCheckpoint(path, *c));
  });
}

TandemStatus* tandem_training_session_load_checkpoint(TandemTrainingSession* ts, const char* path) {
  const char* fn = "tandem_training_session_load_checkpoint";
  return Guard(fn, [&]() -> TandemStatus* {
    TANDEM_TRAINING_ENTER(fn);
    TANDEM_CAPI_NOT_NULL(fn, path);
    auto c = tandem::training::LoadCheckpoint(path);
    if (!c.ok()) return FromStatus(c.status());
    return FromStatus(ts->trainer->RestoreCheckpoint(*c));
  });
}

TandemStatus* tandem_training_session_export(TandemTrainingSession* ts, const char* path) {
  const char* fn = "tandem_training_session_export";
  return Guard(fn, [&]() -> TandemStatus* {
    TANDEM_TRAINING_ENTER(fn);
    TANDEM_CAPI_NOT_NULL(fn, path);
    auto g = ts->trainer->ExportInference();
    if (!g.ok()) return FromStatus(g.status());
    return FromStatus(tandem::ExportModelFile(*g, path));
  });
}

}  // extern "C"
