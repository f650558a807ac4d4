// The structs behind the C API's opaque handles (include/tandem/tandem.h), and the
// helpers every entry point uses to turn C++ errors into TandemStatus values.
//
// Every entry point runs its body through Guard(): no exception crosses the C boundary
// (std::bad_alloc becomes TANDEM_RESOURCE_EXHAUSTED, anything else TANDEM_INTERNAL).
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "graph/resource_limits.h"
#include "graph/tensor.h"
#include "runtime/session.h"
#include "tandem/tandem.h"
#include "training/trainer.h"

struct TandemStatus {
  TandemCode code = TANDEM_OK;
  std::string message;
  bool static_storage = false;  // the out-of-memory fallback: release leaves it alone
};

struct TandemEnv {
  std::mutex mu;
  std::map<std::string, std::string> unavailable_reasons;  // what provider_available returned
};

struct TandemTensor {
  tandem::Tensor tensor;
  bool caller_memory = false;  // made by tandem_tensor_wrap: the buffer is the caller's
};

struct TandemSessionOptions {
  tandem::SessionOptions options;
};

struct TandemSession {
  std::unique_ptr<tandem::Session> session;
  // Buffers of the model's weights: an output sharing one is copied before the caller
  // gets it (writing through it would change the model for every later run).
  std::set<const tandem::Buffer*> constant_buffers;
};

struct TandemIoBinding {
  TandemSession* session = nullptr;
  std::mutex busy;                             // held by the one call using the binding
  std::map<std::string, tandem::Tensor> inputs;
  std::set<const tandem::Buffer*> caller_inputs;         // bound inputs wrapping caller memory
  std::map<std::string, tandem::Tensor> output_targets;  // share the caller's buffers
  std::map<std::string, tandem::Tensor> outputs;        // the latest results
};

struct TandemTrainingOptions {
  tandem::training::TrainerOptions options;
  bool distributed = false;  // "distributed": "mpi": join the launcher's group at create
};

struct TandemTrainingSession {
  std::unique_ptr<tandem::training::Trainer> trainer;
  std::vector<tandem::ValueInfo> model_inputs;  // the inference model's data inputs
  size_t output_count = 0;
  tandem::training::LossKind loss_kind = tandem::training::LossKind::kMse;
  size_t prediction_index = 0;  // the output the loss reads
  std::mutex busy;  // try-locked by every call: concurrent use is refused with TANDEM_BUSY
};

namespace tandem::capi {

TandemStatus* MakeStatus(TandemCode code, std::string message);
// nullptr for OK; otherwise the absl code mapped to a TandemCode, message kept.
TandemStatus* FromStatus(const absl::Status& s);
// "[c_api] <function>: argument '<name>' is NULL".
TandemStatus* NullArgument(const char* function, const char* name);

// A status that needs no allocation, for when making a status runs out of memory.
TandemStatus* OutOfMemoryStatus();

// Runs `body` (returning TandemStatus*) and turns exceptions into statuses.
template <typename F>
TandemStatus* Guard(const char* function, F&& body) noexcept {
  try {
    try {
      return body();
    } catch (const std::bad_alloc& e) {
      return MakeStatus(TANDEM_RESOURCE_EXHAUSTED,
                        std::string("[c_api] ") + function + ": " + AllocationFailureMessage(e));
    } catch (const std::exception& e) {
      return MakeStatus(TANDEM_INTERNAL, std::string("[c_api] ") + function + ": " + e.what());
    } catch (...) {
      return MakeStatus(TANDEM_INTERNAL, std::string("[c_api] ") + function + ": unknown exception");
    }
  } catch (...) {  // the status itself could not be made
    return OutOfMemoryStatus();
  }
}

// A new handle for `t` (outputs, copies); never caller memory.
TandemTensor* NewTensorHandle(Tensor t);
// Hands `tensors` to the caller as new handles in out[0..n): all of them or, if making
// one throws, none (out untouched, nothing leaked).
void PublishTensors(std::vector<Tensor> tensors, TandemTensor** out);

// Named C inputs -> the map Session::Run and Trainer take. Refuses NULL names/handles
// and duplicate names; `function` prefixes the messages.
TandemStatus* CollectFeeds(const char* function, const char* const* names,
                           const TandemTensor* const* inputs, size_t count,
                           std::map<std::string, Tensor>* feeds);

// Whether run result `t` must be copied before the caller gets it: it shares a buffer
// with the model's weights or with one of `caller_buffers` (the caller's own memory).
bool MustCopyOutput(const TandemSession& s, const Tensor& t,
                    const std::set<const Buffer*>& caller_buffers);

// Provider list for a device word ("cpu", "auto", or a provider name first).
std::vector<std::string> ProvidersForDevice(const std::string& device);

// Holds `mu` for the scope, or reports that another thread holds it.
class BusyGuard {
 public:
  explicit BusyGuard(std::mutex& mu) : lock_(mu, std::try_to_lock) {}
  bool busy() const { return !lock_.owns_lock(); }

 private:
  std::unique_lock<std::mutex> lock_;
};
TandemStatus* BusyStatus(const char* function, const char* what);

}  // namespace tandem::capi

// Shorthand for the first lines of an entry point.
#define TANDEM_CAPI_NOT_NULL(function, arg) \
  if ((arg) == nullptr) return ::tandem::capi::NullArgument(function, #arg)
