// Inference sessions: creation, model metadata, Run, device transfers, profiles.
#include <cstdlib>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "c_api/handles.h"

using namespace tandem::capi;
using tandem::Tensor;

namespace {

// Import failures ("[import] ...": parse, checker, unsupported) are TANDEM_INVALID_MODEL.
TandemStatus* LoadStatus(const absl::Status& s) {
  TandemStatus* out = FromStatus(s);
  if (out && s.code() == absl::StatusCode::kInvalidArgument &&
      out->message.rfind("[import]", 0) == 0)
    out->code = TANDEM_INVALID_MODEL;
  return out;
}

TandemStatus* FinishCreate(absl::StatusOr<std::unique_ptr<tandem::Session>> session,
                           TandemSession** out) {
  if (!session.ok()) return LoadStatus(session.status());
  auto h = std::make_unique<TandemSession>();
  h->session = std::move(*session);
  for (const auto& [name, w] : h->session->graph().initializers) h->constant_buffers.insert(w.buffer().get());
  *out = h.release();
  return nullptr;
}

// The model's inputs or outputs, or an error status.
TandemStatus* IoList(const char* function, const TandemSession* s, TandemIoKind kind,
                     const std::vector<tandem::ValueInfo>** list) {
  if (s == nullptr) return NullArgument(function, "session");
  if (kind != TANDEM_INPUTS && kind != TANDEM_OUTPUTS)
    return MakeStatus(TANDEM_INVALID_ARGUMENT, std::string("[c_api] ") + function +
                                                   ": kind must be TANDEM_INPUTS or TANDEM_OUTPUTS");
  *list = kind == TANDEM_INPUTS ? &s->session->inputs() : &s->session->outputs();
  return nullptr;
}

// The ValueInfo of input/output `index`, or an error status.
TandemStatus* IoInfo(const char* function, const TandemSession* s, TandemIoKind kind,
                     size_t index, const tandem::ValueInfo** info) {
  const std::vector<tandem::ValueInfo>* list = nullptr;
  if (TandemStatus* st = IoList(function, s, kind, &list)) return st;
  if (index >= list->size())
    return MakeStatus(TANDEM_INVALID_ARGUMENT,
                      absl::StrCat("[c_api] ", function, ": ", kind == TANDEM_INPUTS ? "input" : "output",
                                   " index ", index, " is out of range (the model has ",
                                   list->size(), ")"));
  *info = &(*list)[index];
  return nullptr;
}

// ToDevice / ToHost through the C API: a new handle, still marked as the caller's memory
// when the transfer was a no-op (same buffer).
TandemStatus* Transfer(const char* function,
                       absl::StatusOr<Tensor> (tandem::Session::*move)(const Tensor&) const,
                       const TandemSession* s, const TandemTensor* t, TandemTensor** out) {
  return Guard(function, [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL(function, s);
    TANDEM_CAPI_NOT_NULL(function, t);
    TANDEM_CAPI_NOT_NULL(function, out);
    auto moved = (s->session.get()->*move)(t->tensor);
    if (!moved.ok()) return FromStatus(moved.status());
    auto* h = NewTensorHandle(std::move(*moved));
    h->caller_memory = t->caller_memory && h->tensor.buffer() == t->tensor.buffer();
    *out = h;
    return nullptr;
  });
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) out += absl::StrFormat("\\u%04x", c);
    else out += c;
  }
  return out + "\"";
}

}  // namespace

extern "C" {

TandemStatus* tandem_session_create(TandemEnv* env, const char* model_path,
                                    const TandemSessionOptions* options, TandemSession** out) {
  return Guard("tandem_session_create", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_create", env);
    TANDEM_CAPI_NOT_NULL("tandem_session_create", model_path);
    TANDEM_CAPI_NOT_NULL("tandem_session_create", out);
    tandem::SessionOptions o = options ? options->options : tandem::SessionOptions{};
    return FinishCreate(tandem::Session::Load(model_path, o), out);
  });
}

TandemStatus* tandem_session_create_from_memory(TandemEnv* env, const void* data, size_t size,
                                                const TandemSessionOptions* options,
                                                TandemSession** out) {
  return Guard("tandem_session_create_from_memory", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_create_from_memory", env);
    TANDEM_CAPI_NOT_NULL("tandem_session_create_from_memory", data);
    TANDEM_CAPI_NOT_NULL("tandem_session_create_from_memory", out);
    tandem::SessionOptions o = options ? options->options : tandem::SessionOptions{};
    auto graph = tandem::ImportModelBuffer(data, size, /*model_dir=*/"", "<memory>", o.import);
    if (!graph.ok()) return LoadStatus(graph.status());
    return FinishCreate(tandem::Session::FromGraph(std::move(*graph), o), out);
  });
}

void tandem_session_release(TandemSession* session) { delete session; }

TandemStatus* tandem_session_io_count(const TandemSession* s, TandemIoKind kind, size_t* count) {
  return Guard("tandem_session_io_count", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_io_count", s);
    TANDEM_CAPI_NOT_NULL("tandem_session_io_count", count);
    const std::vector<tandem::ValueInfo>* list = nullptr;
    if (TandemStatus* st = IoList("tandem_session_io_count", s, kind, &list)) return st;
    *count = list->size();
    return nullptr;
  });
}

TandemStatus* tandem_session_io_name(const TandemSession* s, TandemIoKind kind, size_t index,
                                     const char** name) {
  return Guard("tandem_session_io_name", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_io_name", name);
    const tandem::ValueInfo* info = nullptr;
    if (TandemStatus* st = IoInfo("tandem_session_io_name", s, kind, index, &info)) return st;
    *name = info->name.c_str();
    return nullptr;
  });
}

TandemStatus* tandem_session_io_dtype(const TandemSession* s, TandemIoKind kind, size_t index,
                                      TandemDataType* dtype) {
  return Guard("tandem_session_io_dtype", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_io_dtype", dtype);
    const tandem::ValueInfo* info = nullptr;
    if (TandemStatus* st = IoInfo("tandem_session_io_dtype", s, kind, index, &info)) return st;
    tandem::DataType t = info->kind == tandem::ValueKind::kTensor ? info->dtype : info->elem_type;
    *dtype = static_cast<TandemDataType>(t);
    return nullptr;
  });
}

TandemStatus* tandem_session_io_rank(const TandemSession* s, TandemIoKind kind, size_t index,
                                     int64_t* rank) {
  return Guard("tandem_session_io_rank", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_io_rank", rank);
    const tandem::ValueInfo* info = nullptr;
    if (TandemStatus* st = IoInfo("tandem_session_io_rank", s, kind, index, &info)) return st;
    *rank = info->shape.rank_known ? static_cast<int64_t>(info->shape.dims.size()) : -1;
    return nullptr;
  });
}

TandemStatus* tandem_session_io_dim(const TandemSession* s, TandemIoKind kind, size_t index,
                                    size_t axis, int64_t* value, const char** symbol) {
  return Guard("tandem_session_io_dim", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_io_dim", value);
    const tandem::ValueInfo* info = nullptr;
    if (TandemStatus* st = IoInfo("tandem_session_io_dim", s, kind, index, &info)) return st;
    if (!info->shape.rank_known || axis >= info->shape.dims.size())
      return MakeStatus(TANDEM_INVALID_ARGUMENT,
                        absl::StrCat("[c_api] tandem_session_io_dim: '", info->name, "' has no axis ",
                                     axis, " (shape ", info->shape.ToString(), ")"));
    const tandem::Dim& d = info->shape.dims[axis];
    *value = d.known() ? d.value : -1;
    if (symbol) *symbol = d.symbol.empty() ? nullptr : d.symbol.c_str();
    return nullptr;
  });
}

TandemStatus* tandem_session_run(TandemSession* s, const char* const* input_names,
                                 const TandemTensor* const* inputs, size_t input_count,
                                 const char* const* output_names, size_t output_count,
                                 TandemTensor** outputs) {
  return Guard("tandem_session_run", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_run", s);
    if (output_count > 0) TANDEM_CAPI_NOT_NULL("tandem_session_run", outputs);
    const auto& model_outputs = s->session->outputs();
    // Which model output fills each requested slot.
    std::vector<size_t> pick(output_count);
    if (output_names == nullptr) {
      if (output_count != model_outputs.size())
        return MakeStatus(TANDEM_INVALID_ARGUMENT,
                          absl::StrCat("[c_api] tandem_session_run: output_names is NULL, so "
                                       "output_count must be the model's ", model_outputs.size(),
                                       " outputs, got ", output_count));
      for (size_t i = 0; i < output_count; ++i) pick[i] = i;
    } else {
      for (size_t i = 0; i < output_count; ++i) {
        if (output_names[i] == nullptr)
          return MakeStatus(TANDEM_INVALID_ARGUMENT,
                            absl::StrCat("[c_api] tandem_session_run: output name ", i, " is NULL"));
        size_t k = 0;
        while (k < model_outputs.size() && model_outputs[k].name != output_names[i]) ++k;
        if (k == model_outputs.size())
          return MakeStatus(TANDEM_NOT_FOUND, std::string("[c_api] tandem_session_run: the model "
                                                          "has no output named '") +
                                                  output_names[i] + "'");
        pick[i] = k;
      }
    }
    std::map<std::string, Tensor> feeds;
    if (TandemStatus* st = CollectFeeds("tandem_session_run", input_names, inputs, input_count, &feeds))
      return st;
    auto results = s->session->Run(feeds);
    if (!results.ok()) return FromStatus(results.status());
    // Outputs never alias the caller's memory or the weights (Identity of an input or of
    // an initializer).
    std::set<const tandem::Buffer*> caller_buffers;
    for (size_t i = 0; i < input_count; ++i)
      if (inputs[i]->caller_memory) caller_buffers.insert(inputs[i]->tensor.buffer().get());
    std::vector<Tensor> picked;
    for (size_t i = 0; i < output_count; ++i) {
      const Tensor& t = (*results)[pick[i]];
      picked.push_back(MustCopyOutput(*s, t, caller_buffers) ? t.Clone() : t);
    }
    PublishTensors(std::move(picked), outputs);
    return nullptr;
  });
}

TandemStatus* tandem_session_tensor_to_device(const TandemSession* s, const TandemTensor* t,
                                              TandemTensor** out) {
  return Transfer("tandem_session_tensor_to_device", &tandem::Session::ToDevice, s, t, out);
}

TandemStatus* tandem_session_tensor_to_host(const TandemSession* s, const TandemTensor* t,
                                            TandemTensor** out) {
  return Transfer("tandem_session_tensor_to_host", &tandem::Session::ToHost, s, t, out);
}

TandemStatus* tandem_session_device_stream(const TandemSession* s, void** stream) {
  return Guard("tandem_session_device_stream", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_device_stream", s);
    TANDEM_CAPI_NOT_NULL("tandem_session_device_stream", stream);
    *stream = s->session->primary_provider().native_stream();
    return nullptr;
  });
}

TandemStatus* tandem_session_order_before(const TandemSession* s, void* stream) {
  return Guard("tandem_session_order_before", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_order_before", s);
    for (tandem::ExecutionProvider* p : s->session->providers())  // the host's is a no-op
      if (absl::Status st = p->OrderBefore(stream); !st.ok()) return FromStatus(st);
    return nullptr;
  });
}

TandemStatus* tandem_session_profile(const TandemSession* s, char** json) {
  return Guard("tandem_session_profile", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_profile", s);
    TANDEM_CAPI_NOT_NULL("tandem_session_profile", json);
    std::string text = "{\"nodes\": [";
    bool first = true;
    for (const tandem::StepProfile& p : s->session->profile()) {
      absl::StrAppend(&text, first ? "" : ", ", "{\"node\": ", JsonString(p.node),
                      ", \"op\": ", JsonString(p.op), ", \"provider\": ", JsonString(p.provider),
                      ", \"calls\": ", p.calls, ", \"total_us\": ", absl::StrFormat("%.3f", p.total_us), "}");
      first = false;
    }
    text += "]}";
    char* copy = static_cast<char*>(std::malloc(text.size() + 1));
    if (!copy) return MakeStatus(TANDEM_RESOURCE_EXHAUSTED, "[c_api] tandem_session_profile: out of memory");
    std::memcpy(copy, text.c_str(), text.size() + 1);
    *json = copy;
    return nullptr;
  });
}

}  // extern "C"
