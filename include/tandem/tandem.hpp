// Tandem C++ API: a header-only C++17 wrapper over the C API in tandem.h.
//
// Error handling: EXCEPTIONS. Every call that fails throws tandem::Error (a
// std::runtime_error) carrying the C API's TandemCode (code()) and its message (what()).
// Nothing returns a status to check. Destructors never throw.
//
// Ownership: the owning classes (Env, SessionOptions, Session, Tensor, IoBinding,
// TrainingOptions, TrainingSession) hold one C handle each, are move-only, and free it
// with the paired tandem_*_release in their destructor. A moved-from object is empty
// (get() == nullptr); calling a method on it is an INVALID_ARGUMENT error from the C API.
// get() gives the raw handle for mixing with C calls; release() gives up ownership of it.
//
// Lifetimes: an Env must outlive the sessions made from it; a Tensor made with Wrap
// must not outlive the memory it wraps; an IoBinding must not outlive its Session, and
// an input bound to it must live until it is rebound or the binding is destroyed.
//
// Threads and semantics are the C API's: see tandem.h for the details of each call
// (this header documents only what the wrapper adds or changes).
#ifndef TANDEM_TANDEM_HPP_
#define TANDEM_TANDEM_HPP_

#include <cstddef>
#include <cstdint>
#include <locale>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tandem.h"

namespace tandem {

// ---- Errors ------------------------------------------------------------------------

// A failed C API call: code() is its TandemCode, what() its message.
class Error : public std::runtime_error {
 public:
  Error(TandemCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  TandemCode code() const noexcept { return code_; }

 private:
  TandemCode code_;
};

namespace detail {

// Takes ownership of `status`: returns for NULL (success), else frees it and throws.
inline void Check(TandemStatus* status) {
  if (status == nullptr) return;
  // Owned before anything can throw (copying the message may), so it is always released.
  std::unique_ptr<TandemStatus, void (*)(TandemStatus*)> owned(status, tandem_status_release);
  throw Error(tandem_status_code(status), tandem_status_message(status));
}

template <typename H, void (*ReleaseFn)(H*)>
struct Releaser {
  void operator()(H* h) const noexcept { ReleaseFn(h); }
};

// The move-only owner of one C handle.
template <typename H, void (*ReleaseFn)(H*)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(H* h) : h_(h) {}
  H* get() const noexcept { return h_.get(); }
  // Gives up ownership: the caller frees the returned handle.
  H* release() noexcept { return h_.release(); }
  explicit operator bool() const noexcept { return h_ != nullptr; }

 protected:
  std::unique_ptr<H, Releaser<H, ReleaseFn>> h_;
};

// Formats a number for tandem_training_options_set independently of the global locale:
// the shortest of 15 or 17 significant digits that reads back as the same value.
template <typename T>
std::string ToText(T value) {
  for (int digits : {15, 17}) {
    std::ostringstream os;
    os.imbue(std::locale::classic());
    os.precision(digits);
    os << +value;  // + prints int8_t/uint8_t as numbers
    std::istringstream is(os.str());
    is.imbue(std::locale::classic());
    T back{};
    if (digits == 17 || ((is >> back) && back == value)) return os.str();
  }
  return std::string();
}

}  // namespace detail

// The library's version ("0.1.0") and the API version it implements.
inline std::string Version() { return tandem_version(); }
inline uint32_t ApiVersion() { return tandem_api_version(); }

// ---- Element types -------------------------------------------------------------------

// DataTypeOf<T>::value is the TandemDataType of C++ type T (float, double, the fixed-width
// integers, bool). Types without one (e.g. float16) are used through the untyped calls.
template <typename T>
struct DataTypeOf;
#define TANDEM_HPP_DTYPE(T, V) \
  template <>                  \
  struct DataTypeOf<T> {       \
    static constexpr TandemDataType value = V; \
  };
TANDEM_HPP_DTYPE(float, TANDEM_FLOAT)
TANDEM_HPP_DTYPE(double, TANDEM_DOUBLE)
TANDEM_HPP_DTYPE(int8_t, TANDEM_INT8)
TANDEM_HPP_DTYPE(uint8_t, TANDEM_UINT8)
TANDEM_HPP_DTYPE(int16_t, TANDEM_INT16)
TANDEM_HPP_DTYPE(uint16_t, TANDEM_UINT16)
TANDEM_HPP_DTYPE(int32_t, TANDEM_INT32)
TANDEM_HPP_DTYPE(uint32_t, TANDEM_UINT32)
TANDEM_HPP_DTYPE(int64_t, TANDEM_INT64)
TANDEM_HPP_DTYPE(uint64_t, TANDEM_UINT64)
TANDEM_HPP_DTYPE(bool, TANDEM_BOOL)
#undef TANDEM_HPP_DTYPE

// The size in bytes of one element (0 for UNDEFINED and STRING).
inline size_t ElementSize(TandemDataType dtype) {
  switch (dtype) {
    case TANDEM_FLOAT: case TANDEM_INT32: case TANDEM_UINT32: return 4;
    case TANDEM_DOUBLE: case TANDEM_INT64: case TANDEM_UINT64: return 8;
    case TANDEM_INT16: case TANDEM_UINT16: case TANDEM_FLOAT16: case TANDEM_BFLOAT16: return 2;
    case TANDEM_INT8: case TANDEM_UINT8: case TANDEM_BOOL: return 1;
    default: return 0;
  }
}

// The ONNX spelling of a type ("float", "int64", ...); "undefined" for unknown values.
inline const char* DataTypeName(TandemDataType dtype) {
  switch (dtype) {
    case TANDEM_FLOAT: return "float";
    case TANDEM_UINT8: return "uint8";
    case TANDEM_INT8: return "int8";
    case TANDEM_UINT16: return "uint16";
    case TANDEM_INT16: return "int16";
    case TANDEM_INT32: return "int32";
    case TANDEM_INT64: return "int64";
    case TANDEM_STRING: return "string";
    case TANDEM_BOOL: return "bool";
    case TANDEM_FLOAT16: return "float16";
    case TANDEM_DOUBLE: return "double";
    case TANDEM_UINT32: return "uint32";
    case TANDEM_UINT64: return "uint64";
    case TANDEM_BFLOAT16: return "bfloat16";
    default: return "undefined";
  }
}

// The number of elements of a shape (1 for rank 0). Negative dims are an error.
inline int64_t NumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw Error(TANDEM_INVALID_ARGUMENT, "[tandem.hpp] negative dimension in a tensor shape");
    n *= d;
  }
  return n;
}

// ---- Env ---------------------------------------------------------------------------

// Process-wide state (tandem_env_create with this header's TANDEM_API_VERSION, so a
// library older than the header is refused here). Thread-safe.
class Env : public detail::Handle<TandemEnv, tandem_env_release> {
 public:
  Env() {
    TandemEnv* env = nullptr;
    detail::Check(tandem_env_create(TANDEM_API_VERSION, &env));
    h_.reset(env);
  }
  // Adopts a handle made by tandem_env_create.
  explicit Env(TandemEnv* adopt) { h_.reset(adopt); }

  // Whether provider `name` ("cpu", "cuda") can run here; `why` (optional) receives the
  // reason when it cannot.
  bool ProviderAvailable(const std::string& name, std::string* why = nullptr) const {
    int available = 0;
    const char* reason = nullptr;
    detail::Check(tandem_env_provider_available(get(), name.c_str(), &available, &reason));
    if (why != nullptr) *why = reason != nullptr ? reason : "";
    return available != 0;
  }
};

// ---- Tensor ------------------------------------------------------------------------

// Where a tensor's memory lives.
struct Device {
  TandemDeviceType type = TANDEM_DEVICE_CPU;
  int index = 0;
  bool is_host() const { return type == TANDEM_DEVICE_CPU; }
};

// A dense tensor (host or device) owning its handle. Not synchronised (see tandem.h).
class Tensor : public detail::Handle<TandemTensor, tandem_tensor_release> {
 public:
  Tensor() = default;
  // Adopts a handle (e.g. one a C call returned).
  explicit Tensor(TandemTensor* adopt) { h_.reset(adopt); }

  // A new host tensor of zeros that owns its memory.
  static Tensor Create(TandemDataType dtype, const std::vector<int64_t>& dims) {
    TandemTensor* t = nullptr;
    detail::Check(tandem_tensor_create(dtype, dims.data(), dims.size(), &t));
    return Tensor(t);
  }
  template <typename T>
  static Tensor Create(const std::vector<int64_t>& dims) {
    return Create(DataTypeOf<T>::value, dims);
  }
  // A new host tensor holding a copy of `values` (values.size() must equal the numel).
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values, const std::vector<int64_t>& dims) {
    if (static_cast<int64_t>(values.size()) != NumElements(dims))
      throw Error(TANDEM_INVALID_ARGUMENT, "[tandem.hpp] FromVector: " + std::to_string(values.size()) +
                                               " values do not fill the shape");
    Tensor t = Create<T>(dims);
    T* out = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
    return t;
  }

  // A host tensor over `data` (numel(dims) elements of T), without a copy: `data` must
  // outlive the tensor. The const overload is for inputs: do not write through data<T>().
  template <typename T>
  static Tensor Wrap(T* data, std::vector<int64_t> dims) {
    const size_t bytes = static_cast<size_t>(NumElements(dims)) * sizeof(T);
    TandemTensor* t = nullptr;
    detail::Check(tandem_tensor_wrap(DataTypeOf<T>::value, dims.data(), dims.size(),
                                     static_cast<void*>(data), bytes, &t));
    return Tensor(t);
  }
  template <typename T>
  static Tensor Wrap(const T* data, std::vector<int64_t> dims) {
    return Wrap<T>(const_cast<T*>(data), std::move(dims));
  }
  // Untyped Wrap: `byte_size` must cover numel(dims) elements of `dtype`.
  static Tensor Wrap(TandemDataType dtype, void* data, size_t byte_size, const std::vector<int64_t>& dims) {
    TandemTensor* t = nullptr;
    detail::Check(tandem_tensor_wrap(dtype, dims.data(), dims.size(), data, byte_size, &t));
    return Tensor(t);
  }

  TandemDataType dtype() const {
    TandemDataType d = TANDEM_UNDEFINED;
    detail::Check(tandem_tensor_dtype(get(), &d));
    return d;
  }
  size_t rank() const {
    size_t r = 0;
    detail::Check(tandem_tensor_rank(get(), &r));
    return r;
  }
  std::vector<int64_t> dims() const {
    std::vector<int64_t> d(rank());
    detail::Check(tandem_tensor_dims(get(), d.data(), d.size()));
    return d;
  }
  int64_t numel() const { return NumElements(dims()); }
  size_t byte_size() const {
    size_t b = 0;
    detail::Check(tandem_tensor_byte_size(get(), &b));
    return b;
  }
  Device device() const {
    Device d;
    detail::Check(tandem_tensor_device(get(), &d.type, &d.index));
    return d;
  }

  // The host memory (FAILED_PRECONDITION for a device tensor: Session::ToHost first).
  // The typed forms check that T matches dtype() (INVALID_ARGUMENT otherwise).
  void* raw_data() const {
    void* p = nullptr;
    detail::Check(tandem_tensor_data(get(), &p));
    return p;
  }
  template <typename T>
  T* data() {
    CheckType<T>();
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  const T* data() const {
    CheckType<T>();
    return static_cast<const T*>(raw_data());
  }
  // A copy of a host tensor's elements.
  template <typename T>
  std::vector<T> ToVector() const {
    const T* p = data<T>();
    return std::vector<T>(p, p + numel());
  }

 private:
  template <typename T>
  void CheckType() const {
    const TandemDataType d = dtype();
    if (d != DataTypeOf<T>::value)
      throw Error(TANDEM_INVALID_ARGUMENT, std::string("[tandem.hpp] tensor holds ") + DataTypeName(d) +
                                               ", asked for " + DataTypeName(DataTypeOf<T>::value));
  }
};

// ---- Session options -----------------------------------------------------------------

// Options for Session; the setters return *this for chaining. Defaults and meaning: tandem.h.
class SessionOptions : public detail::Handle<TandemSessionOptions, tandem_session_options_release> {
 public:
  SessionOptions() {
    TandemSessionOptions* o = nullptr;
    detail::Check(tandem_session_options_create(&o));
    h_.reset(o);
  }
  // Providers in order of preference ("cuda", "cpu", or a single "auto").
  SessionOptions& SetProviders(const std::vector<std::string>& names) {
    std::vector<const char*> p;
    for (const auto& n : names) p.push_back(n.c_str());
    detail::Check(tandem_session_options_set_providers(get(), p.data(), p.size()));
    return *this;
  }
  // Intra-op CPU threads; 0 = all cores.
  SessionOptions& SetThreads(int threads) {
    detail::Check(tandem_session_options_set_threads(get(), threads));
    return *this;
  }
  SessionOptions& SetOptimizationLevel(int level) {
    detail::Check(tandem_session_options_set_optimization_level(get(), level));
    return *this;
  }
  SessionOptions& SetProfiling(bool enabled) {
    detail::Check(tandem_session_options_set_profiling(get(), enabled ? 1 : 0));
    return *this;
  }
  SessionOptions& SetOutputsOnDevice(bool enabled) {
    detail::Check(tandem_session_options_set_outputs_on_device(get(), enabled ? 1 : 0));
    return *this;
  }
};

// ---- Inference session ---------------------------------------------------------------

// A model input's or output's declared type. dims[i] is -1 where the size is symbolic or
// unknown, and symbols[i] its name ("batch") or "" when it has none. rank is -1 (and dims
// empty) when the model does not fix the rank.
struct IoInfo {
  std::string name;
  TandemDataType dtype = TANDEM_UNDEFINED;
  int64_t rank = -1;
  std::vector<int64_t> dims;
  std::vector<std::string> symbols;

  // "float[batch,2]" (or "float[?]" for an unknown rank).
  std::string ToString() const {
    std::string s = std::string(DataTypeName(dtype)) + "[";
    if (rank < 0) return s + "?]";
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i > 0) s += ",";
      s += dims[i] >= 0 ? std::to_string(dims[i]) : (symbols[i].empty() ? "?" : symbols[i]);
    }
    return s + "]";
  }
};

class IoBinding;

// Inputs by name: the tensors are borrowed for the call.
using Feeds = std::vector<std::pair<std::string, const Tensor*>>;

// A loaded model. Thread-safe: Run may be called from many threads at once.
class Session : public detail::Handle<TandemSession, tandem_session_release> {
 public:
  Session() = default;
  explicit Session(TandemSession* adopt) { h_.reset(adopt); }
  // Loads an ONNX file; `options` nullptr = defaults. `env` must outlive the session.
  Session(const Env& env, const std::string& model_path, const SessionOptions* options = nullptr) {
    TandemSession* s = nullptr;
    detail::Check(tandem_session_create(env.get(), model_path.c_str(),
                                        options != nullptr ? options->get() : nullptr, &s));
    h_.reset(s);
  }
  Session(const Env& env, const std::string& model_path, const SessionOptions& options)
      : Session(env, model_path, &options) {}
  // From a serialized ModelProto in memory (copied).
  Session(const Env& env, const void* model_data, size_t size, const SessionOptions* options = nullptr) {
    TandemSession* s = nullptr;
    detail::Check(tandem_session_create_from_memory(env.get(), model_data, size,
                                                    options != nullptr ? options->get() : nullptr, &s));
    h_.reset(s);
  }
  Session(const Env& env, const void* model_data, size_t size, const SessionOptions& options)
      : Session(env, model_data, size, &options) {}

  size_t input_count() const { return IoCount(TANDEM_INPUTS); }
  size_t output_count() const { return IoCount(TANDEM_OUTPUTS); }
  std::vector<std::string> input_names() const { return IoNames(TANDEM_INPUTS); }
  std::vector<std::string> output_names() const { return IoNames(TANDEM_OUTPUTS); }
  // Metadata of input/output `index` (NOT_FOUND/INVALID_ARGUMENT past the end).
  IoInfo input(size_t index) const { return Info(TANDEM_INPUTS, index); }
  IoInfo output(size_t index) const { return Info(TANDEM_OUTPUTS, index); }
  std::vector<IoInfo> inputs() const { return Infos(TANDEM_INPUTS); }
  std::vector<IoInfo> outputs() const { return Infos(TANDEM_OUTPUTS); }

  // Runs the model on `feeds` (every input once) and returns the outputs named in
  // `output_names`, in that order, or all outputs in model order when it is empty.
  std::vector<Tensor> Run(const Feeds& feeds, const std::vector<std::string>& output_names = {}) {
    std::vector<const char*> in_names;
    std::vector<const TandemTensor*> in_tensors;
    for (const auto& f : feeds) {
      in_names.push_back(f.first.c_str());
      in_tensors.push_back(f.second != nullptr ? f.second->get() : nullptr);
    }
    std::vector<const char*> out_names;
    for (const auto& n : output_names) out_names.push_back(n.c_str());
    const size_t n_out = output_names.empty() ? output_count() : output_names.size();
    std::vector<TandemTensor*> raw(n_out, nullptr);
    std::vector<Tensor> out;
    out.reserve(n_out);  // before the call: adopting the handles below cannot throw
    detail::Check(tandem_session_run(get(), in_names.data(), in_tensors.data(), in_names.size(),
                                     output_names.empty() ? nullptr : out_names.data(), n_out,
                                     raw.data()));
    for (TandemTensor* t : raw) out.emplace_back(t);
    return out;
  }
  // The same with inputs held in a map (name -> tensor).
  std::vector<Tensor> Run(const std::map<std::string, Tensor>& feeds,
                          const std::vector<std::string>& output_names = {}) {
    Feeds f;
    for (const auto& kv : feeds) f.emplace_back(kv.first, &kv.second);
    return Run(f, output_names);
  }
  // Runs with the inputs and outputs bound in `binding` (made from this session).
  void Run(IoBinding& binding);

  // A copy of host tensor `t` on the session's first provider's device (the same memory
  // when that is the CPU), and a host copy of `t` wherever it lives.
  Tensor ToDevice(const Tensor& t) const {
    TandemTensor* out = nullptr;
    detail::Check(tandem_session_tensor_to_device(get(), t.get(), &out));
    return Tensor(out);
  }
  Tensor ToHost(const Tensor& t) const {
    TandemTensor* out = nullptr;
    detail::Check(tandem_session_tensor_to_host(get(), t.get(), &out));
    return Tensor(out);
  }

  // Per-node timings as JSON (needs SessionOptions::SetProfiling(true)).
  std::string Profile() const {
    char* json = nullptr;
    detail::Check(tandem_session_profile(get(), &json));
    std::string s = json != nullptr ? json : "";
    tandem_free(json);
    return s;
  }

 private:
  size_t IoCount(TandemIoKind kind) const {
    size_t n = 0;
    detail::Check(tandem_session_io_count(get(), kind, &n));
    return n;
  }
  std::vector<std::string> IoNames(TandemIoKind kind) const {
    std::vector<std::string> names;
    const size_t n = IoCount(kind);
    for (size_t i = 0; i < n; ++i) {
      const char* name = nullptr;
      detail::Check(tandem_session_io_name(get(), kind, i, &name));
      names.emplace_back(name != nullptr ? name : "");
    }
    return names;
  }
  IoInfo Info(TandemIoKind kind, size_t index) const {
    IoInfo info;
    const char* name = nullptr;
    detail::Check(tandem_session_io_name(get(), kind, index, &name));
    info.name = name != nullptr ? name : "";
    detail::Check(tandem_session_io_dtype(get(), kind, index, &info.dtype));
    detail::Check(tandem_session_io_rank(get(), kind, index, &info.rank));
    for (int64_t axis = 0; axis < info.rank; ++axis) {
      int64_t value = -1;
      const char* symbol = nullptr;
      detail::Check(tandem_session_io_dim(get(), kind, index, static_cast<size_t>(axis), &value, &symbol));
      info.dims.push_back(value);
      info.symbols.emplace_back(symbol != nullptr ? symbol : "");
    }
    return info;
  }
  std::vector<IoInfo> Infos(TandemIoKind kind) const {
    std::vector<IoInfo> v;
    const size_t n = IoCount(kind);
    for (size_t i = 0; i < n; ++i) v.push_back(Info(kind, i));
    return v;
  }
};

// Inputs and outputs bound once, run many times with Session::Run(binding). One thread at
// a time (BUSY otherwise). Must not outlive its session.
class IoBinding : public detail::Handle<TandemIoBinding, tandem_io_binding_release> {
 public:
  IoBinding() = default;
  explicit IoBinding(Session& session) {
    TandemIoBinding* b = nullptr;
    detail::Check(tandem_io_binding_create(session.get(), &b));
    h_.reset(b);
  }
  // Binds input `name` to `t` (referenced, not copied: `t` must live until rebound or
  // until the binding is destroyed). Checked against the model now.
  IoBinding& BindInput(const std::string& name, const Tensor& t) {
    detail::Check(tandem_io_binding_bind_input(get(), name.c_str(), t.get()));
    return *this;
  }
  // Each run writes output `name` into `t` (same dtype and shape as the result).
  IoBinding& BindOutput(const std::string& name, Tensor& t) {
    detail::Check(tandem_io_binding_bind_output(get(), name.c_str(), t.get()));
    return *this;
  }
  // The latest result of an output left unbound (shares memory with the binding's copy,
  // which the next run overwrites).
  Tensor Output(const std::string& name) {
    TandemTensor* t = nullptr;
    detail::Check(tandem_io_binding_output(get(), name.c_str(), &t));
    return Tensor(t);
  }
};

inline void Session::Run(IoBinding& binding) {
  detail::Check(tandem_session_run_with_binding(get(), binding.get()));
}

// ---- Training ----------------------------------------------------------------------

// Training settings by name (the keys of tandem_training_options_set in tandem.h, e.g.
// Set("loss", "mse").Set("optimizer", "adam").Set("lr", 1e-3)). Chainable.
class TrainingOptions : public detail::Handle<TandemTrainingOptions, tandem_training_options_release> {
 public:
  TrainingOptions() {
    TandemTrainingOptions* o = nullptr;
    detail::Check(tandem_training_options_create(&o));
    h_.reset(o);
  }
  TrainingOptions& Set(const std::string& key, const std::string& value) {
    detail::Check(tandem_training_options_set(get(), key.c_str(), value.c_str()));
    return *this;
  }
  TrainingOptions& Set(const std::string& key, const char* value) { return Set(key, std::string(value)); }
  // Numbers: bool as 0/1, integers as such, floating point with full precision.
  template <typename T, typename = std::enable_if_t<std::is_arithmetic<T>::value>>
  TrainingOptions& Set(const std::string& key, T value) {
    if (std::is_same<T, bool>::value) return Set(key, std::string(value ? "1" : "0"));
    return Set(key, detail::ToText(value));
  }
};

// EvalStep's result: accuracy is -1 for losses that are not classification losses.
struct EvalResult {
  double loss = 0;
  double accuracy = -1;
};

// A model being trained. Not thread-safe (a concurrent call throws Error with code BUSY).
class TrainingSession : public detail::Handle<TandemTrainingSession, tandem_training_session_release> {
 public:
  TrainingSession() = default;
  explicit TrainingSession(TandemTrainingSession* adopt) { h_.reset(adopt); }
  // `env` must outlive the session.
  TrainingSession(const Env& env, const std::string& model_path, const TrainingOptions& options) {
    TandemTrainingSession* ts = nullptr;
    detail::Check(tandem_training_session_create(env.get(), model_path.c_str(), options.get(), &ts));
    h_.reset(ts);
  }

  // The data inputs a batch feeds, in model order.
  std::vector<std::string> input_names() const {
    size_t n = 0;
    detail::Check(tandem_training_session_input_count(get(), &n));
    std::vector<std::string> names;
    for (size_t i = 0; i < n; ++i) {
      const char* name = nullptr;
      detail::Check(tandem_training_session_input_name(get(), i, &name));
      names.emplace_back(name != nullptr ? name : "");
    }
    return names;
  }

  // One optimizer step; returns the batch loss before the update.
  double TrainStep(const Feeds& feeds, const Tensor& target) {
    Raw r(feeds);
    double loss = 0;
    detail::Check(tandem_training_session_train_step(get(), r.names.data(), r.tensors.data(),
                                                     r.names.size(), target.get(), &loss));
    return loss;
  }
  // For a model with one data input.
  double TrainStep(const Tensor& x, const Tensor& target) { return TrainStep(SingleFeed(x), target); }

  // Loss (and accuracy) of the current weights on a batch; no update.
  EvalResult EvalStep(const Feeds& feeds, const Tensor& target) {
    Raw r(feeds);
    EvalResult e;
    detail::Check(tandem_training_session_eval_step(get(), r.names.data(), r.tensors.data(),
                                                    r.names.size(), target.get(), &e.loss, &e.accuracy));
    return e;
  }
  EvalResult EvalStep(const Tensor& x, const Tensor& target) { return EvalStep(SingleFeed(x), target); }

  // The number of model outputs.
  size_t OutputCount() const {
    size_t n = 0;
    detail::Check(tandem_training_session_output_count(get(), &n));
    return n;
  }
  // The model's outputs with the current weights, in model order (host tensors).
  std::vector<Tensor> Predict(const Feeds& feeds) {
    Raw r(feeds);
    const size_t output_count = OutputCount();
    std::vector<TandemTensor*> raw(output_count, nullptr);
    std::vector<Tensor> out;
    out.reserve(output_count);  // before the call: adopting the handles below cannot throw
    detail::Check(tandem_training_session_predict(get(), r.names.data(), r.tensors.data(),
                                                  r.names.size(), output_count, raw.data()));
    for (TandemTensor* t : raw) out.emplace_back(t);
    return out;
  }
  // The first output of a model with one data input and one output.
  Tensor Predict(const Tensor& x) { return std::move(Predict(SingleFeed(x)).front()); }

  // The base learning rate (a schedule scales it); LearningRate() is the one the next
  // step uses.
  void SetLearningRate(double lr) { detail::Check(tandem_training_session_set_learning_rate(get(), lr)); }
  double LearningRate() {
    double lr = 0;
    detail::Check(tandem_training_session_learning_rate(get(), &lr));
    return lr;
  }
  int64_t Steps() {
    int64_t s = 0;
    detail::Check(tandem_training_session_steps(get(), &s));
    return s;
  }
  // This process's rank and the number of ranks (0 and 1 outside a data-parallel job).
  std::pair<int, int> Rank() const {
    int rank = 0, size = 1;
    detail::Check(tandem_training_session_rank(get(), &rank, &size));
    return {rank, size};
  }
  // Parameters, optimizer state and step count (written atomically; loading checks them).
  void SaveCheckpoint(const std::string& path) {
    detail::Check(tandem_training_session_save_checkpoint(get(), path.c_str()));
  }
  void LoadCheckpoint(const std::string& path) {
    detail::Check(tandem_training_session_load_checkpoint(get(), path.c_str()));
  }
  // Writes the trained model as a standard ONNX inference model.
  void Export(const std::string& path) { detail::Check(tandem_training_session_export(get(), path.c_str())); }

 private:
  struct Raw {
    explicit Raw(const Feeds& feeds) {
      for (const auto& f : feeds) {
        names.push_back(f.first.c_str());
        tensors.push_back(f.second != nullptr ? f.second->get() : nullptr);
      }
    }
    std::vector<const char*> names;
    std::vector<const TandemTensor*> tensors;
  };
  Feeds SingleFeed(const Tensor& x) const {
    const std::vector<std::string> names = input_names();
    if (names.size() != 1)
      throw Error(TANDEM_INVALID_ARGUMENT, "[tandem.hpp] the model has " + std::to_string(names.size()) +
                                               " data inputs: name them (Feeds)");
    return Feeds{{names[0], &x}};
  }
};

}  // namespace tandem

#endif  // TANDEM_TANDEM_HPP_
