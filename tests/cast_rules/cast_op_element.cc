// One translation unit of cast_rules_o0_test: the Cast op's element rule
// (ops/cast_element.h), instantiated here for float -> int32.
#include <cstdint>

#include "ops/cast_element.h"

int32_t CastOpToInt32(float v) { return tandem::CastElement<int32_t, float>(v); }
