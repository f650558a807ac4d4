#include "providers/cpu/kernels/math/packed_matmul_weights.h"

#include <atomic>

namespace tandem::cpu {
namespace {
std::atomic<int64_t> packed_count{0};
}  // namespace

int64_t MatMulWeightsPacked() { return packed_count.load(std::memory_order_relaxed); }

dnnl::memory PackedMatMulWeights::Get(const Tensor& b, const dnnl::memory::desc& stored,
                                      const dnnl::memory::desc& wanted) {
  if (wanted == stored) return dnnl::memory();
  for (const auto& p : packed_)
    if (p->memory.get_desc() == wanted) return p->memory;
  bool reordered = false;
  packed_.push_back(PackConstantWeights(b, stored, wanted, &reordered));
  if (reordered) packed_count.fetch_add(1, std::memory_order_relaxed);
  return packed_.back()->memory;
}

}  // namespace tandem::cpu
