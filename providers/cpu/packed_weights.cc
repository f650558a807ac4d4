#include "providers/cpu/packed_weights.h"

#include <atomic>
#include <utility>

#include "providers/cpu/dnnl_util.h"

namespace tandem::cpu {
namespace {

std::atomic<int64_t> packed_count{0}, shared_count{0};

// The two layouts of a oneDNN reorder.
struct Layouts {
  dnnl::memory::desc stored, wanted;
  bool operator==(const Layouts& o) const { return stored == o.stored && wanted == o.wanted; }
};

}  // namespace

namespace packed_weights_internal {
void CountPacked() { packed_count.fetch_add(1, std::memory_order_relaxed); }
void CountShared() { shared_count.fetch_add(1, std::memory_order_relaxed); }
}  // namespace packed_weights_internal

int64_t ConstantWeightsPacked() { return packed_count.load(std::memory_order_relaxed); }
int64_t ConstantWeightsShared() { return shared_count.load(std::memory_order_relaxed); }

std::shared_ptr<const PackedCopy> PackConstantWeights(const Tensor& w, const dnnl::memory::desc& stored,
                                                      const dnnl::memory::desc& wanted, bool* reordered) {
  static ConstantCopies<Layouts, PackedCopy> copies;
  return copies.Get(
      w, Layouts{stored, wanted},
      [&] {
        auto packed = std::make_unique<PackedCopy>();
        packed->memory = HostMemory(wanted, packed->storage);
        dnnl::memory plain = WrapTensor(w, stored);
        dnnl::reorder(plain, packed->memory).execute(DnnlStream(), plain, packed->memory);
        DnnlStream().wait();
        return std::unique_ptr<const PackedCopy>(std::move(packed));
      },
      reordered);
}

}  // namespace tandem::cpu
