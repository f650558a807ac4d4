// Narrow element types against codes from ml_dtypes 0.6 (what onnx's reference uses) and
// the ONNX float8 spec's table, and a TensorProto round trip of the packed 4-bit form.
#include <cmath>

#include <gtest/gtest.h>

#include "graph/low_precision.h"
#include "onnx_import/tensor_proto.h"

namespace tandem {
namespace {

uint8_t Enc(DataType t, double v, bool saturate = true) { return LowPrecisionFromDouble(t, v, saturate); }

TEST(LowPrecision, Float8CodesMatchMlDtypes) {
  // 1.0 in each format (ml_dtypes: 56, 64, 60, 64).
  EXPECT_EQ(Enc(DataType::kFloat8E4M3FN, 1.0), 0x38);
  EXPECT_EQ(Enc(DataType::kFloat8E4M3FNUZ, 1.0), 0x40);
  EXPECT_EQ(Enc(DataType::kFloat8E5M2, 1.0), 0x3C);
  EXPECT_EQ(Enc(DataType::kFloat8E5M2FNUZ, 1.0), 0x40);
  // E4M3FN without saturation: 464 is a tie that rounds to the even 448, 465 overflows to NaN.
  EXPECT_EQ(Enc(DataType::kFloat8E4M3FN, 464, false), 0x7E);
  EXPECT_EQ(Enc(DataType::kFloat8E4M3FN, 465, false), 0x7F);
  EXPECT_EQ(Enc(DataType::kFloat8E4M3FN, -1e-9, false), 0x80);  // negative zero
  EXPECT_EQ(Enc(DataType::kFloat8E4M3FN, 1e6, true), 0x7E);     // saturates to 448
  EXPECT_EQ(Enc(DataType::kFloat8E4M3FN, -INFINITY, true), 0xFE);
  // E5M2: the tie above 57344 goes to infinity; NaN is 0x7E.
  EXPECT_EQ(Enc(DataType::kFloat8E5M2, 61440, false), 0x7C);
  EXPECT_EQ(Enc(DataType::kFloat8E5M2, INFINITY, false), 0x7C);
  EXPECT_EQ(Enc(DataType::kFloat8E5M2, NAN, false), 0x7E);
  // FNUZ: no negative zero; 248 overflows (240 is the largest), NaN is 0x80.
  EXPECT_EQ(Enc(DataType::kFloat8E4M3FNUZ, -1e-9, false), 0x00);
  EXPECT_EQ(Enc(DataType::kFloat8E4M3FNUZ, 248, false), 0x80);
  EXPECT_EQ(Enc(DataType::kFloat8E4M3FNUZ, 248, true), 0x7F);
  // Subnormals (E4M3FN: 2^-9 is code 1).
  EXPECT_EQ(Enc(DataType::kFloat8E4M3FN, std::ldexp(1.0, -9)), 0x01);
  EXPECT_EQ(LowPrecisionToDouble(DataType::kFloat8E4M3FN, 0x01), std::ldexp(1.0, -9));
}

TEST(LowPrecision, DecodeIsTheInverseOnEveryFiniteCode) {
  for (DataType t : {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                     DataType::kFloat8E5M2FNUZ}) {
    for (int c = 0; c < 256; ++c) {
      const double v = LowPrecisionToDouble(t, static_cast<uint8_t>(c));
      if (!std::isfinite(v)) continue;
      const uint8_t back = Enc(t, v, false);
      EXPECT_EQ(LowPrecisionToDouble(t, back), v) << DataTypeName(t) << " code " << c;
    }
  }
  EXPECT_EQ(LowPrecisionToDouble(DataType::kFloat8E4M3FN, 0x7E), 448.0);
  EXPECT_EQ(LowPrecisionToDouble(DataType::kFloat8E5M2, 0x7B), 57344.0);
  EXPECT_TRUE(std::isinf(LowPrecisionToDouble(DataType::kFloat8E5M2, 0x7C)));
  EXPECT_TRUE(std::isnan(LowPrecisionToDouble(DataType::kFloat8E4M3FNUZ, 0x80)));
}

TEST(LowPrecision, Float4AndIntegers) {
  // float4 E2M1 (ml_dtypes): ties to even, saturating, NaN to -0.
  EXPECT_EQ(Enc(DataType::kFloat4E2M1, 0.25), 0x0);
  EXPECT_EQ(Enc(DataType::kFloat4E2M1, 0.75), 0x2);   // 1.0
  EXPECT_EQ(Enc(DataType::kFloat4E2M1, 5.0), 0x6);    // 4.0
  EXPECT_EQ(Enc(DataType::kFloat4E2M1, 9.0), 0x7);    // 6.0
  EXPECT_EQ(Enc(DataType::kFloat4E2M1, -3.5), 0xE);   // -4.0
  EXPECT_EQ(Enc(DataType::kFloat4E2M1, NAN), 0x8);
  EXPECT_EQ(LowPrecisionToDouble(DataType::kFloat4E2M1, 0x7), 6.0);
  // int4/uint4/int2: truncate toward zero, then keep the low bits (tests/cast_narrow_integers_test.cc).
  EXPECT_EQ(static_cast<int8_t>(Enc(DataType::kInt4, 7.6)), 7);
  EXPECT_EQ(static_cast<int8_t>(Enc(DataType::kInt4, 9.0)), -7);
  EXPECT_EQ(static_cast<int8_t>(Enc(DataType::kInt4, -3.5)), -3);
  EXPECT_EQ(Enc(DataType::kUint4, -3.5), 13);
  EXPECT_EQ(static_cast<int8_t>(Enc(DataType::kInt2, 2.5)), -2);
  // float8 E8M0 rounds up by default: 1.5 -> 2 (code 128).
  EXPECT_EQ(Enc(DataType::kFloat8E8M0, 1.5), 128);
  EXPECT_EQ(LowPrecisionToDouble(DataType::kFloat8E8M0, 127), 1.0);
}

TEST(LowPrecision, Int4TensorProtoPacksTwoPerByte) {
  onnx::TensorProto p;
  p.set_data_type(static_cast<int>(DataType::kInt4));
  p.add_dims(3);
  p.set_raw_data(std::string("\x9F\x05", 2));  // -1, -7 | 5 (last nibble padding)
  auto t = TensorFromProto(p, "");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ElementAsInt64(0), -1);
  EXPECT_EQ(t->ElementAsInt64(1), -7);
  EXPECT_EQ(t->ElementAsInt64(2), 5);
  onnx::TensorProto back;
  TensorToProto(*t, "x", &back);
  EXPECT_EQ(back.raw_data(), std::string("\x9F\x05", 2));
}

}  // namespace
}  // namespace tandem
