// IO binding: inputs bound once (kept where they live), results delivered into bound
// tensors or kept in the binding.
#include "absl/strings/str_cat.h"
#include "c_api/handles.h"

using namespace tandem::capi;
using tandem::Tensor;

namespace {

const tandem::ValueInfo* FindInfo(const std::vector<tandem::ValueInfo>& list, const std::string& name) {
  for (const auto& vi : list)
    if (vi.name == name) return &vi;
  return nullptr;
}

// Copies `src` into the caller's bound tensor `dst` through the provider owning one side.
absl::Status CopyInto(const tandem::Session& s, const Tensor& src, Tensor& dst) {
  if (src.dtype() != dst.dtype() || src.dims() != dst.dims())
    return absl::InvalidArgumentError(absl::StrCat(
        "the result is ", tandem::DataTypeName(src.dtype()), tandem::DimsToString(src.dims()),
        ", the bound tensor is ", tandem::DataTypeName(dst.dtype()), tandem::DimsToString(dst.dims())));
  tandem::Device device = src.device().type != tandem::DeviceType::kCpu ? src.device() : dst.device();
  tandem::ExecutionProvider* p = tandem::ProviderOn(s.providers(), device);
  if (!p) return absl::FailedPreconditionError("no provider of this session owns " + device.ToString());
  return p->Copy(src, dst);
}

}  // namespace

extern "C" {

TandemStatus* tandem_io_binding_create(TandemSession* s, TandemIoBinding** out) {
  return Guard("tandem_io_binding_create", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_io_binding_create", s);
    TANDEM_CAPI_NOT_NULL("tandem_io_binding_create", out);
    auto* b = new TandemIoBinding;
    b->session = s;
    *out = b;
    return nullptr;
  });
}

void tandem_io_binding_release(TandemIoBinding* binding) { delete binding; }

TandemStatus* tandem_io_binding_bind_input(TandemIoBinding* b, const char* name,
                                           const TandemTensor* t) {
  return Guard("tandem_io_binding_bind_input", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_io_binding_bind_input", b);
    TANDEM_CAPI_NOT_NULL("tandem_io_binding_bind_input", name);
    TANDEM_CAPI_NOT_NULL("tandem_io_binding_bind_input", t);
    BusyGuard guard(b->busy);
    if (guard.busy()) return BusyStatus("tandem_io_binding_bind_input", "IO binding");
    const tandem::ValueInfo* vi = FindInfo(b->session->session->inputs(), name);
    if (!vi)
      return MakeStatus(TANDEM_NOT_FOUND, std::string("[c_api] tandem_io_binding_bind_input: the "
                                                      "model has no input named '") + name + "'");
    if (vi->kind == tandem::ValueKind::kTensor) {
      std::string why = tandem::FeedMismatch(*vi, t->tensor);
      if (!why.empty())
        return MakeStatus(TANDEM_INVALID_ARGUMENT,
                          std::string("[c_api] tandem_io_binding_bind_input: '") + name + "' " + why);
    }
    auto old = b->inputs.find(name);
    if (old != b->inputs.end()) b->caller_inputs.erase(old->second.buffer().get());
    b->inputs[name] = t->tensor;
    if (t->caller_memory) b->caller_inputs.insert(t->tensor.buffer().get());
    return nullptr;
  });
}

TandemStatus* tandem_io_binding_bind_output(TandemIoBinding* b, const char* name, TandemTensor* t) {
  return Guard("tandem_io_binding_bind_output", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_io_binding_bind_output", b);
    TANDEM_CAPI_NOT_NULL("tandem_io_binding_bind_output", name);
    TANDEM_CAPI_NOT_NULL("tandem_io_binding_bind_output", t);
    BusyGuard guard(b->busy);
    if (guard.busy()) return BusyStatus("tandem_io_binding_bind_output", "IO binding");
    const tandem::ValueInfo* vi = FindInfo(b->session->session->outputs(), name);
    if (!vi)
      return MakeStatus(TANDEM_NOT_FOUND, std::string("[c_api] tandem_io_binding_bind_output: the "
                                                      "model has no output named '") + name + "'");
    std::string why = tandem::FeedMismatch(*vi, t->tensor);
    if (!why.empty())
      return MakeStatus(TANDEM_INVALID_ARGUMENT,
                        std::string("[c_api] tandem_io_binding_bind_output: '") + name + "' " + why);
    b->output_targets[name] = t->tensor;  // shares the caller's buffer
    return nullptr;
  });
}

TandemStatus* tandem_session_run_with_binding(TandemSession* s, TandemIoBinding* b) {
  return Guard("tandem_session_run_with_binding", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_run_with_binding", s);
    TANDEM_CAPI_NOT_NULL("tandem_session_run_with_binding", b);
    if (b->session != s)
      return MakeStatus(TANDEM_INVALID_ARGUMENT, "[c_api] tandem_session_run_with_binding: the "
                                                 "binding was made for another session");
    BusyGuard guard(b->busy);
    if (guard.busy()) return BusyStatus("tandem_session_run_with_binding", "IO binding");
    auto results = s->session->Run(b->inputs);
    if (!results.ok()) return FromStatus(results.status());
    const auto& names = s->session->outputs();
    for (size_t i = 0; i < names.size(); ++i) {
      Tensor& r = (*results)[i];
      auto target = b->output_targets.find(names[i].name);
      if (target != b->output_targets.end()) {
        absl::Status c = CopyInto(*s->session, r, target->second);
        if (!c.ok())
          return FromStatus(absl::Status(c.code(), "[c_api] tandem_session_run_with_binding: output '" +
                                                       names[i].name + "': " + std::string(c.message())));
        b->outputs[names[i].name] = target->second;
      } else {
        b->outputs[names[i].name] = MustCopyOutput(*s, r, b->caller_inputs) ? r.Clone() : std::move(r);
      }
    }
    return nullptr;
  });
}

TandemStatus* tandem_io_binding_output(TandemIoBinding* b, const char* name, TandemTensor** out) {
  return Guard("tandem_io_binding_output", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_io_binding_output", b);
    TANDEM_CAPI_NOT_NULL("tandem_io_binding_output", name);
    TANDEM_CAPI_NOT_NULL("tandem_io_binding_output", out);
    BusyGuard guard(b->busy);
    if (guard.busy()) return BusyStatus("tandem_io_binding_output", "IO binding");
    auto it = b->outputs.find(name);
    if (it == b->outputs.end())
      return MakeStatus(TANDEM_NOT_FOUND, std::string("[c_api] tandem_io_binding_output: no result "
                                                      "for '") + name + "' (no run yet, or no such output)");
    *out = NewTensorHandle(it->second);
    return nullptr;
  });
}

}  // extern "C"
