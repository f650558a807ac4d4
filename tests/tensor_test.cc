#include <gtest/gtest.h>

#include <cmath>

#include "graph/tensor.h"

namespace tandem {
namespace {

TEST(Float16, RoundTripsRepresentableValues) {
  for (float f : {0.f, 1.f, -2.5f, 65504.f, 6.103515625e-05f, 5.960464477539063e-08f})
    EXPECT_EQ(static_cast<float>(Float16(f)), f) << f;
}

TEST(Float16, RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties to even -> 1.
  EXPECT_EQ(static_cast<float>(Float16(1.f + std::ldexp(1.f, -11))), 1.f);
  EXPECT_TRUE(std::isinf(static_cast<float>(Float16(1e6f))));
  EXPECT_TRUE(std::isnan(static_cast<float>(Float16(NAN))));
}

TEST(BFloat16, KeepsTopBits) {
  EXPECT_EQ(static_cast<float>(BFloat16(1.f)), 1.f);
  EXPECT_EQ(static_cast<float>(BFloat16(3.140625f)), 3.140625f);
}

TEST(Tensor, CastFloatToInt64Truncates) {
  Tensor t = Tensor::FromVector<float>({1.7f, -2.2f}, {2});
  Tensor i = t.CastTo(DataType::kInt64);
  EXPECT_EQ(i.data<int64_t>()[0], 1);
  EXPECT_EQ(i.data<int64_t>()[1], -2);
}

}  // namespace
}  // namespace tandem
