#include "providers/cpu/kernels/packed_matmul_weights.h"

#include <atomic>

namespace tandem::cpu {
namespace {
std::atomic<int64_t> packed_count{0};
}  // namespace

int64_t MatMulWeightsPacked() { return packed_count.load(std::memory_order_relaxed); }

dnnl::memory PackedMatMulWeights::Get(const Tensor& b, const dnnl::memory::desc& stored,
                                      const dnnl::memory::desc& wanted) {
  if (wanted == stored) return dnnl::memory();
  for (const dnnl::memory& m : packed_)
    if (m.get_desc() == wanted) return m;
  dnnl::memory packed(wanted, DnnlEngine());
  dnnl::memory plain = WrapTensor(b, stored);
  dnnl::reorder(plain, packed).execute(DnnlStream(), plain, packed);
  DnnlStream().wait();
  packed_.push_back(packed);
  packed_count.fetch_add(1, std::memory_order_relaxed);
  return packed;
}

}  // namespace tandem::cpu
