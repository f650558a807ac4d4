// Constant weights (initializers) reordered once into the layout a oneDNN primitive wants,
// and shared by every kernel of the process that wants the same initializer in the same
// layout. Where several nodes read one initializer (the branches of a weight-tied model such
// as a Siamese network, a convolution applied at each step of an unrolled loop) they then
// stream one packed copy instead of one per node: eight chained 512-channel 3x3 convolutions
// on 7x7 sharing one initializer ran 24% faster on 2 Emerald Rapids cores than with eight
// copies (bench/results/2026-11-27-cpu-vs-ort-shared-weights.md). Float32 throughout: only
// the layout changes.
//
// The initializer is identified by its address and kept alive by the packed copy, so the
// address cannot name another tensor while the copy lives; copies of different sessions
// never meet (each session owns its initializers). Thread-safe.
#pragma once
#include <cstdint>
#include <memory>

#include <dnnl.hpp>

#include "graph/tensor.h"
#include "providers/cpu/host_memory.h"

namespace tandem::cpu {

struct PackedCopy {
  Tensor source;        // the initializer it was packed from (kept alive: see above)
  HostBuffer storage;   // host_memory.h: huge pages for large weights
  dnnl::memory memory;  // the packed copy, in the wanted layout
};

// `w` (stored as `stored`) in the layout `wanted`: the live copy another kernel made of the
// same tensor in that layout, else a reorder made now. `reordered` (optional) tells which.
// The copy lives as long as any caller keeps the returned pointer. `w` must not change
// afterwards (an initializer or other constant). Throws dnnl::error or std::bad_alloc.
std::shared_ptr<const PackedCopy> PackConstantWeights(const Tensor& w, const dnnl::memory::desc& stored,
                                                      const dnnl::memory::desc& wanted, bool* reordered = nullptr);

// Since the process started: reorders PackConstantWeights made, and requests it answered with
// another kernel's live copy (tests check that a shared initializer is packed once).
int64_t ConstantWeightsPacked();
int64_t ConstantWeightsShared();

}  // namespace tandem::cpu
