// One translation unit of cast_rules_o0_test: the engine's saturating NumericCast
// (graph/numeric_cast.h), instantiated here for float -> int32.
#include <cstdint>

#include "graph/numeric_cast.h"

int32_t SaturatingToInt32(float v) { return tandem::NumericCast<int32_t>(v); }
