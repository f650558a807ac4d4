#include "graph/data_type.h"

namespace tandem {

size_t SizeOf(DataType t) {
  switch (t) {
    case DataType::kFloat: case DataType::kInt32: case DataType::kUint32: return 4;
    case DataType::kDouble: case DataType::kInt64: case DataType::kUint64: return 8;
    case DataType::kFloat16: case DataType::kBfloat16:
    case DataType::kInt16: case DataType::kUint16: return 2;
    case DataType::kInt8: case DataType::kUint8: case DataType::kBool: return 1;
    case DataType::kFloat8E4M3FN: case DataType::kFloat8E4M3FNUZ: case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ: case DataType::kUint4: case DataType::kInt4:
    case DataType::kFloat4E2M1: case DataType::kFloat8E8M0: case DataType::kUint2:
    case DataType::kInt2: return 1;  // unpacked in memory
    case DataType::kString: return sizeof(std::string);
    case DataType::kUndefined: return 0;
  }
  return 0;
}

const char* DataTypeName(DataType t) {
  switch (t) {
    case DataType::kFloat: return "float";
    case DataType::kUint8: return "uint8";
    case DataType::kInt8: return "int8";
    case DataType::kUint16: return "uint16";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kString: return "string";
    case DataType::kBool: return "bool";
    case DataType::kFloat16: return "float16";
    case DataType::kDouble: return "double";
    case DataType::kUint32: return "uint32";
    case DataType::kUint64: return "uint64";
    case DataType::kBfloat16: return "bfloat16";
    case DataType::kFloat8E4M3FN: return "float8e4m3fn";
    case DataType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DataType::kFloat8E5M2: return "float8e5m2";
    case DataType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case DataType::kUint4: return "uint4";
    case DataType::kInt4: return "int4";
    case DataType::kFloat4E2M1: return "float4e2m1";
    case DataType::kFloat8E8M0: return "float8e8m0";
    case DataType::kUint2: return "uint2";
    case DataType::kInt2: return "int2";
    case DataType::kUndefined: return "undefined";
  }
  return "unknown";
}

bool IsFloatingPoint(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 ||
         t == DataType::kBfloat16;
}
bool IsSignedInteger(DataType t) {
  return t == DataType::kInt8 || t == DataType::kInt16 || t == DataType::kInt32 ||
         t == DataType::kInt64;
}
bool IsUnsignedInteger(DataType t) {
  return t == DataType::kUint8 || t == DataType::kUint16 || t == DataType::kUint32 ||
         t == DataType::kUint64;
}
bool IsKnownDataType(int32_t v) {
  return (v >= 1 && v <= 13) || (v >= 16 && v <= 26);
}

Float16::Float16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) {  // inf / nan
    bits = static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  } else if (exp >= 31) {
    bits = static_cast<uint16_t>(sign | 0x7c00u);
  } else if (exp <= 0) {
    if (exp < -10) { bits = static_cast<uint16_t>(sign); return; }
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    bits = static_cast<uint16_t>(sign | half);
  } else {
    uint32_t half = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;  // may carry into exp: fine
    bits = static_cast<uint16_t>(sign | half);
  }
}

Float16::operator float() const {
  uint32_t sign = (bits & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1f;
  uint32_t mant = bits & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // subnormal: normalise
      exp = 1;
      while (!(mant & 0x400u)) { mant <<= 1; --exp; }
      mant &= 0x3ffu;
      x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

BFloat16::BFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) {  // nan
    bits = static_cast<uint16_t>((x >> 16) | 0x40u);
    return;
  }
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);  // round to nearest even
  bits = static_cast<uint16_t>((x + rounding) >> 16);
}

BFloat16::operator float() const {
  uint32_t x = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

}  // namespace tandem
