// Element types narrower than 16 bits (onnx 1.14 and later): float8 E4M3FN, E4M3FNUZ,
// E5M2, E5M2FNUZ and E8M0, float4 E2M1, int4/uint4 and int2/uint2.
//
// A Tensor holds one element per byte: a float type's bit pattern (4-bit codes in the low
// nibble), an integer type's value as int8/uint8. TensorProtos pack 4-bit types two per
// byte and 2-bit types four per byte, low bits first (PackedBits says which).
// Arithmetic kernels do not take these types; Cast, CastLike, QuantizeLinear,
// DequantizeLinear and the kernels that only move bytes do.
#pragma once
#include <cstdint>

#include "graph/data_type.h"

namespace tandem {

bool IsLowPrecision(DataType t);
bool IsLowPrecisionFloat(DataType t);
// Bits per element in a TensorProto: 8, 4 or 2 (8 for every other type it is asked about).
int PackedBits(DataType t);

// The value of one stored element (NaN for a float type's NaN codes).
double LowPrecisionToDouble(DataType t, uint8_t stored);

// Rounding of a float to float8 E8M0 (a power of two): Cast's round_mode.
enum class E8M0Rounding { kUp, kDown, kNearest };

// The stored byte for `v` as Cast writes it. Float types (numpy / ml_dtypes semantics, as
// onnx's reference) round to nearest even; with `saturate` (float8 only) values beyond
// the largest finite one, infinities included, become it, else they overflow to infinity
// (E5M2) or NaN; float4 E2M1 always saturates and maps NaN to 6. Integer types truncate
// toward zero, as every float-to-integer Cast, then keep the low bits (LowPrecisionFromInt64).
// ONNX leaves a float out of the integer type's range undefined; this rule, one for all
// integer widths, is Tandem's choice (ml_dtypes 0.7 writes 0, ONNX Runtime 1.32 rounds half
// away from zero and then wraps); NaN, infinities and |v| >= 2^63 give 0.
uint8_t LowPrecisionFromDouble(DataType t, double v, bool saturate,
                               E8M0Rounding e8m0 = E8M0Rounding::kUp);

// An integer cast to int4/uint4/int2/uint2 (`t` one of them) as ONNX defines it for every
// fixed-point narrowing: the higher bits are discarded and the rest read in two's
// complement for the signed types (int32 9 -> int4 -7, int64 -9 -> uint4 7).
uint8_t LowPrecisionFromInt64(DataType t, int64_t v);

}  // namespace tandem
