// Tensor handles: host tensors owned by the library or wrapping the caller's memory.
#include "c_api/handles.h"
#include "graph/data_type.h"

namespace tandem::capi {

TandemTensor* NewTensorHandle(Tensor t) {
  auto* h = new TandemTensor;
  h->tensor = std::move(t);
  return h;
}

void PublishTensors(std::vector<Tensor> tensors, TandemTensor** out) {
  std::vector<std::unique_ptr<TandemTensor>> made;
  for (Tensor& t : tensors) {
    made.push_back(std::make_unique<TandemTensor>());
    made.back()->tensor = std::move(t);
  }
  for (size_t i = 0; i < made.size(); ++i) out[i] = made[i].release();
}

namespace {

// Checks dtype and dims of a new tensor; on success *dims_out holds the dims.
TandemStatus* CheckNewTensor(const char* function, TandemDataType dtype, const int64_t* dims,
                             size_t rank, Dims* dims_out) {
  // The C API's TandemDataType stops at bfloat16; the narrow types (graph/low_precision.h)
  // stay inside the engine.
  if (!IsKnownDataType(dtype) || dtype == TANDEM_UNDEFINED || dtype > TANDEM_BFLOAT16)
    return MakeStatus(TANDEM_INVALID_ARGUMENT, std::string("[c_api] ") + function +
                                                   ": unknown data type " + std::to_string(dtype));
  if (dtype == TANDEM_STRING)
    return MakeStatus(TANDEM_UNIMPLEMENTED, std::string("[c_api] ") + function +
                                                ": string tensors are not supported by the C API");
  if (rank > 0 && dims == nullptr) return NullArgument(function, "dims");
  int64_t numel = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 0)
      return MakeStatus(TANDEM_INVALID_ARGUMENT, std::string("[c_api] ") + function + ": dim " +
                                                     std::to_string(i) + " is negative (" +
                                                     std::to_string(dims[i]) + ")");
    if (dims[i] > 0 && numel > (int64_t{1} << 50) / dims[i])
      return MakeStatus(TANDEM_INVALID_ARGUMENT,
                        std::string("[c_api] ") + function + ": the tensor is too large");
    numel *= dims[i];
  }
  dims_out->assign(dims, dims + rank);
  return nullptr;
}

// A tensor over the caller's memory on `device` (no copy, no release).
TandemStatus* WrapCallerMemory(const char* function, TandemDataType dtype, const int64_t* dims, size_t rank,
                               tandem::Device device, void* data, size_t byte_size, TandemTensor** out) {
  return Guard(function, [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL(function, out);
    tandem::Dims d;
    if (TandemStatus* s = CheckNewTensor(function, dtype, dims, rank, &d)) return s;
    size_t need = static_cast<size_t>(tandem::NumElements(d)) * tandem::SizeOf(static_cast<tandem::DataType>(dtype));
    if (need > 0 && data == nullptr) return NullArgument(function, "data");
    if (byte_size < need)
      return MakeStatus(TANDEM_INVALID_ARGUMENT, std::string("[c_api] ") + function + ": " + std::to_string(byte_size) +
                                                     " bytes given, the shape " + tandem::DimsToString(d) +
                                                     " needs " + std::to_string(need));
    auto buffer = std::make_shared<tandem::Buffer>();
    buffer->data = data;
    buffer->bytes = byte_size;  // no release: the memory is the caller's
    buffer->device = device;
    auto* h = NewTensorHandle(Tensor(static_cast<tandem::DataType>(dtype), std::move(d), buffer));
    h->caller_memory = true;
    *out = h;
    return nullptr;
  });
}

// *data = the address of t's first element (host or device); string, sequence and
// optional values are refused.
TandemStatus* FirstElement(const char* function, TandemTensor& t, void** data) {
  if (t.tensor.dtype() == tandem::DataType::kString || !t.tensor.is_tensor())
    return MakeStatus(TANDEM_UNIMPLEMENTED, std::string("[c_api] ") + function +
                                                ": string, sequence and optional values are not supported by the C API");
  *data = t.tensor.raw();
  return nullptr;
}

}  // namespace
}  // namespace tandem::capi

using namespace tandem::capi;
using tandem::Tensor;

extern "C" {

TandemStatus* tandem_tensor_create(TandemDataType dtype, const int64_t* dims, size_t rank,
                                   TandemTensor** out) {
  return Guard("tandem_tensor_create", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_tensor_create", out);
    tandem::Dims d;
    if (TandemStatus* s = CheckNewTensor("tandem_tensor_create", dtype, dims, rank, &d)) return s;
    *out = NewTensorHandle(Tensor::Host(static_cast<tandem::DataType>(dtype), std::move(d)));
    return nullptr;
  });
}

TandemStatus* tandem_tensor_wrap(TandemDataType dtype, const int64_t* dims, size_t rank, void* data,
                                 size_t byte_size, TandemTensor** out) {
  return WrapCallerMemory("tandem_tensor_wrap", dtype, dims, rank, tandem::Device{}, data, byte_size, out);
}

TandemStatus* tandem_tensor_wrap_device(TandemDataType dtype, const int64_t* dims, size_t rank,
                                        TandemDeviceType device, int device_index, void* data,
                                        size_t byte_size, TandemTensor** out) {
  if (device != TANDEM_DEVICE_CUDA || device_index < 0)
    return MakeStatus(TANDEM_INVALID_ARGUMENT,
                      "[c_api] tandem_tensor_wrap_device: device " + std::to_string(device) + ":" +
                          std::to_string(device_index) + " is not a CUDA device (use tandem_tensor_wrap for host memory)");
  return WrapCallerMemory("tandem_tensor_wrap_device", dtype, dims, rank,
                          tandem::Device{tandem::DeviceType::kCuda, device_index}, data, byte_size, out);
}

void tandem_tensor_release(TandemTensor* tensor) { delete tensor; }

TandemStatus* tandem_tensor_dtype(const TandemTensor* t, TandemDataType* dtype) {
  return Guard("tandem_tensor_dtype", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_tensor_dtype", t);
    TANDEM_CAPI_NOT_NULL("tandem_tensor_dtype", dtype);
    *dtype = static_cast<TandemDataType>(t->tensor.dtype());
    return nullptr;
  });
}

TandemStatus* tandem_tensor_rank(const TandemTensor* t, size_t* rank) {
  return Guard("tandem_tensor_rank", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_tensor_rank", t);
    TANDEM_CAPI_NOT_NULL("tandem_tensor_rank", rank);
    *rank = static_cast<size_t>(t->tensor.rank());
    return nullptr;
  });
}

TandemStatus* tandem_tensor_dims(const TandemTensor* t, int64_t* dims, size_t capacity) {
  return Guard("tandem_tensor_dims", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_tensor_dims", t);
    size_t rank = static_cast<size_t>(t->tensor.rank());
    if (rank > 0) TANDEM_CAPI_NOT_NULL("tandem_tensor_dims", dims);
    if (capacity < rank)
      return MakeStatus(TANDEM_INVALID_ARGUMENT, "[c_api] tandem_tensor_dims: capacity " +
                                                     std::to_string(capacity) + " < rank " +
                                                     std::to_string(rank));
    for (size_t i = 0; i < rank; ++i) dims[i] = t->tensor.dims()[i];
    return nullptr;
  });
}

TandemStatus* tandem_tensor_byte_size(const TandemTensor* t, size_t* bytes) {
  return Guard("tandem_tensor_byte_size", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_tensor_byte_size", t);
    TANDEM_CAPI_NOT_NULL("tandem_tensor_byte_size", bytes);
    *bytes = t->tensor.bytes();
    return nullptr;
  });
}

TandemStatus* tandem_tensor_device(const TandemTensor* t, TandemDeviceType* type, int* index) {
  return Guard("tandem_tensor_device", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_tensor_device", t);
    TANDEM_CAPI_NOT_NULL("tandem_tensor_device", type);
    tandem::Device d = t->tensor.device();
    *type = d.type == tandem::DeviceType::kCuda ? TANDEM_DEVICE_CUDA : TANDEM_DEVICE_CPU;
    if (index) *index = d.index;
    return nullptr;
  });
}

TandemStatus* tandem_tensor_data(TandemTensor* t, void** data) {
  return Guard("tandem_tensor_data", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_tensor_data", t);
    TANDEM_CAPI_NOT_NULL("tandem_tensor_data", data);
    if (t->tensor.device().type != tandem::DeviceType::kCpu)
      return MakeStatus(TANDEM_FAILED_PRECONDITION,
                        "[c_api] tandem_tensor_data: the tensor lives on " +
                            t->tensor.device().ToString() +
                            "; copy it with tandem_session_tensor_to_host first");
    return FirstElement("tandem_tensor_data", *t, data);
  });
}

TandemStatus* tandem_tensor_address(TandemTensor* t, void** data) {
  return Guard("tandem_tensor_address", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_tensor_address", t);
    TANDEM_CAPI_NOT_NULL("tandem_tensor_address", data);
    return FirstElement("tandem_tensor_address", *t, data);
  });
}

TandemStatus* tandem_tensor_host_view(TandemTensor* t, TandemDataType* dtype, size_t* rank,
                                      int64_t* dims, size_t capacity, void** data,
                                      size_t* byte_size) {
  if (TandemStatus* s = tandem_tensor_dtype(t, dtype)) return s;
  if (TandemStatus* s = tandem_tensor_rank(t, rank)) return s;
  if (TandemStatus* s = tandem_tensor_dims(t, dims, capacity)) return s;
  if (TandemStatus* s = tandem_tensor_data(t, data)) return s;
  return tandem_tensor_byte_size(t, byte_size);
}

}  // extern "C"
