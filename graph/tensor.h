// Tensor: a typed, shaped view over a reference-counted buffer on some device.
// Buffers are shared (Reshape/Identity alias them); a buffer returns to its allocator's
// pool when the last Tensor that holds it is dropped — that is how the runtime reuses
// memory by liveness.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/data_type.h"

namespace tandem {

enum class DeviceType { kCpu, kCuda };
struct Device {
  DeviceType type = DeviceType::kCpu;
  int index = 0;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string ToString() const;
};

// Raw device memory. `release` (may be empty) gives the memory back to whoever owns it.
struct Buffer {
  void* data = nullptr;
  size_t bytes = 0;
  Device device;
  std::function<void(Buffer&)> release;
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (release) release(*this);
  }
};

using Dims = std::vector<int64_t>;

// What a runtime value holds. ONNX values are tensors, sequences of tensors, or optionals
// (a tensor or sequence, or nothing). All three travel as `Tensor` objects; see below.
enum class ValueKind : uint8_t { kTensor, kSequence, kOptional };
int64_t NumElements(const Dims& dims);
std::string DimsToString(const Dims& dims);

// Non-tensor values (ONNX sequence and optional) are also carried by Tensor, so the runtime,
// plans and KernelContext need no second value type. Such a Tensor has no buffer, dims {0}
// (numel() == 0, so code that mistakes it for a tensor sees an empty one), dtype() is the
// element type of the tensors it holds (kUndefined when unknown), and its elements are
// shared and immutable (copying the value is cheap; kernels build new sequences). Ordinary
// tensors are unaffected: kind() == kTensor and the rest of the API behaves as before.
class Tensor {
 public:
  Tensor() = default;
  // Wraps existing storage (no copy). `buffer` must hold at least numel*SizeOf(dtype) bytes.
  Tensor(DataType dtype, Dims dims, std::shared_ptr<Buffer> buffer, size_t byte_offset = 0);
  // Allocates zero-initialised host memory (strings: empty strings).
  static Tensor Host(DataType dtype, Dims dims);
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values, Dims dims);
  template <typename T>
  static Tensor Scalar(T value) { return FromVector<T>({value}, {}); }

  // ---- ONNX sequence / optional values ----
  // A sequence of tensors of element type `elem` (shapes may differ between elements).
  static Tensor Sequence(DataType elem, std::vector<Tensor> elements);
  // An optional holding `value` (a tensor or a sequence).
  static Tensor Optional(Tensor value);
  // An empty optional ("None"); `elem` is the element type when known.
  static Tensor NoneOptional(DataType elem = DataType::kUndefined);
  ValueKind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == ValueKind::kTensor; }
  bool is_sequence() const { return kind_ == ValueKind::kSequence; }
  bool is_optional() const { return kind_ == ValueKind::kOptional; }
  // Optional: whether it holds a value (is_none() is the opposite). Non-optionals that
  // are defined count as holding themselves.
  bool has_value() const { return is_optional() ? items_ && !items_->empty() : defined(); }
  bool is_none() const { return !has_value(); }
  // Elements of a sequence (empty for anything else).
  const std::vector<Tensor>& sequence() const;
  // The value of an optional that has_value(); *this for a non-optional.
  const Tensor& optional_value() const;

  // True for a tensor with a type, and for every sequence/optional value (even None).
  bool defined() const { return dtype_ != DataType::kUndefined || kind_ != ValueKind::kTensor; }
  DataType dtype() const { return dtype_; }
  const Dims& dims() const { return dims_; }
  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i < 0 ? i + rank() : i]; }
  int64_t numel() const { return NumElements(dims_); }
  size_t bytes() const { return static_cast<size_t>(numel()) * SizeOf(dtype_); }
  Device device() const { return buffer_ ? buffer_->device : Device{}; }
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }

  void* raw() { return buffer_ ? static_cast<char*>(buffer_->data) + offset_ : nullptr; }
  const void* raw() const {
    return buffer_ ? static_cast<const char*>(buffer_->data) + offset_ : nullptr;
  }
  template <typename T> T* data() { return static_cast<T*>(raw()); }
  template <typename T> const T* data() const { return static_cast<const T*>(raw()); }

  // Same buffer, new dims (numel must match). No copy.
  Tensor Reshaped(Dims dims) const;
  // Rows [begin, end) of dim 0 (clamped to [0, dim(0)]): the same buffer at an offset,
  // on whatever device it lives. No copy. Undefined and rank-0 values come back as is.
  Tensor Rows(int64_t begin, int64_t end) const;
  // Deep copy into fresh host memory (source must be on the host); sequences and
  // optionals copy their elements.
  Tensor Clone() const;
  // Host copy converted to `to` (numeric casts; strings parse/format).
  Tensor CastTo(DataType to) const;
  // Element i as double (host, numeric types only) — for tests, shape ops and printing.
  double ElementAsDouble(int64_t i) const;
  int64_t ElementAsInt64(int64_t i) const;
  std::vector<int64_t> ToInt64Vector() const;

 private:
  DataType dtype_ = DataType::kUndefined;
  Dims dims_;
  std::shared_ptr<Buffer> buffer_;
  size_t offset_ = 0;
  ValueKind kind_ = ValueKind::kTensor;
  std::shared_ptr<const std::vector<Tensor>> items_;  // sequence elements / optional value
};

template <typename T>
Tensor Tensor::FromVector(const std::vector<T>& values, Dims dims) {
  Tensor t = Host(DataTypeOf<T>::value, std::move(dims));
  T* out = t.data<T>();
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numel(); ++i)
    out[i] = values[i];
  return t;
}

// Calls f(T{}) with T the C++ type of `dtype` (numeric types and bool; not string).
// Returns false when the type is not numeric.
template <typename F>
bool VisitNumericType(DataType dtype, F&& f) {
  switch (dtype) {
    case DataType::kFloat: f(float{}); return true;
    case DataType::kDouble: f(double{}); return true;
    case DataType::kFloat16: f(Float16{}); return true;
    case DataType::kBfloat16: f(BFloat16{}); return true;
    case DataType::kInt8: f(int8_t{}); return true;
    case DataType::kInt16: f(int16_t{}); return true;
    case DataType::kInt32: f(int32_t{}); return true;
    case DataType::kInt64: f(int64_t{}); return true;
    case DataType::kUint8: f(uint8_t{}); return true;
    case DataType::kUint16: f(uint16_t{}); return true;
    case DataType::kUint32: f(uint32_t{}); return true;
    case DataType::kUint64: f(uint64_t{}); return true;
    case DataType::kBool: f(bool{}); return true;
    default: return false;
  }
}

}  // namespace tandem
