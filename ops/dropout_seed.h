// The seed of a Dropout node's masks (the counter-based draws of
// ops/dropout_mask.h), alike on every provider: its `seed` attribute
// (the trainer gives every Dropout one, from --seed), else one drawn per kernel from the
// system's entropy, as ONNX leaves unseeded Dropout to the runtime.
#pragma once
#include <cstdint>
#include <random>

#include "graph/node.h"

namespace tandem {

inline uint64_t DropoutSeed(const Node& node) {
  if (node.has_attr("seed")) return static_cast<uint64_t>(node.attr_int("seed", 0));
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace tandem
