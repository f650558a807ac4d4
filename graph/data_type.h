// Element types of tensors. Values match onnx::TensorProto::DataType so import is a cast.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace tandem {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16,
  // Narrow types (graph/low_precision.h): one element per byte in a Tensor.
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
};

// Bytes per element; 0 for kUndefined, sizeof(std::string) for kString.
size_t SizeOf(DataType t);
// "float", "int64", ... as ONNX spells them in tensor(...) types.
const char* DataTypeName(DataType t);
bool IsFloatingPoint(DataType t);   // float, double, float16, bfloat16
bool IsSignedInteger(DataType t);
bool IsUnsignedInteger(DataType t);  // includes bool? no: bool is separate
bool IsKnownDataType(int32_t onnx_type);

// IEEE half and bfloat16 stored as raw bits; converted through float for arithmetic.
struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  explicit Float16(float f);
  operator float() const;
};
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f);
  operator float() const;
};

template <typename T> struct DataTypeOf;
#define TANDEM_DTYPE_OF(T, E) \
  template <> struct DataTypeOf<T> { static constexpr DataType value = DataType::E; };
TANDEM_DTYPE_OF(float, kFloat)
TANDEM_DTYPE_OF(double, kDouble)
TANDEM_DTYPE_OF(Float16, kFloat16)
TANDEM_DTYPE_OF(BFloat16, kBfloat16)
TANDEM_DTYPE_OF(int8_t, kInt8)
TANDEM_DTYPE_OF(int16_t, kInt16)
TANDEM_DTYPE_OF(int32_t, kInt32)
TANDEM_DTYPE_OF(int64_t, kInt64)
TANDEM_DTYPE_OF(uint8_t, kUint8)
TANDEM_DTYPE_OF(uint16_t, kUint16)
TANDEM_DTYPE_OF(uint32_t, kUint32)
TANDEM_DTYPE_OF(uint64_t, kUint64)
TANDEM_DTYPE_OF(bool, kBool)
TANDEM_DTYPE_OF(std::string, kString)
#undef TANDEM_DTYPE_OF

}  // namespace tandem
