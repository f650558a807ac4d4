// `tandem convert --weights fp16|bf16`: float32 initializers of at least `min_elements`
// values are stored as float16 or bfloat16 (halving the file), each followed by a Cast
// back to float32 under the original name, so every reader — subgraphs included — sees
// the same float32 value as before, rounded to the narrower type. The computation stays
// in float32.
#pragma once
#include <cstdint>

#include "graph/graph.h"

namespace tandem::convert {

// Returns the number of initializers converted. `to` is kFloat16 or kBfloat16.
int StoreWeightsAs(Graph& graph, DataType to, int64_t min_elements);

}  // namespace tandem::convert
