#include "providers/cpu/kernels/packed_matmul_weights.h"

#include <atomic>
#include <utility>

namespace tandem::cpu {
namespace {
std::atomic<int64_t> packed_count{0};
}  // namespace

int64_t MatMulWeightsPacked() { return packed_count.load(std::memory_order_relaxed); }

dnnl::memory PackedMatMulWeights::Get(const Tensor& b, const dnnl::memory::desc& stored,
                                      const dnnl::memory::desc& wanted) {
  if (wanted == stored) return dnnl::memory();
  for (const Packed& p : packed_)
    if (p.memory.get_desc() == wanted) return p.memory;
  Packed p;
  p.memory = HostMemory(wanted, p.storage);
  dnnl::memory plain = WrapTensor(b, stored);
  dnnl::reorder(plain, p.memory).execute(DnnlStream(), plain, p.memory);
  DnnlStream().wait();
  packed_count.fetch_add(1, std::memory_order_relaxed);
  packed_.push_back(std::move(p));
  return packed_.back().memory;
}

}  // namespace tandem::cpu
