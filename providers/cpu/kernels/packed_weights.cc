#include "providers/cpu/kernels/packed_weights.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "providers/cpu/dnnl_util.h"

namespace tandem::cpu {
namespace {

struct Entry {
  const void* data;
  dnnl::memory::desc stored, wanted;
  std::weak_ptr<const PackedCopy> packed;
};

std::mutex registry_mutex;
std::vector<Entry> registry;  // guarded by registry_mutex; dead entries pruned on insert
std::atomic<int64_t> packed_count{0}, shared_count{0};

}  // namespace

int64_t ConstantWeightsPacked() { return packed_count.load(std::memory_order_relaxed); }
int64_t ConstantWeightsShared() { return shared_count.load(std::memory_order_relaxed); }

std::shared_ptr<const PackedCopy> PackConstantWeights(const Tensor& w, const dnnl::memory::desc& stored,
                                                      const dnnl::memory::desc& wanted, bool* reordered) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  for (const Entry& e : registry) {
    if (e.data != w.raw() || e.stored != stored || e.wanted != wanted) continue;
    if (auto live = e.packed.lock()) {
      shared_count.fetch_add(1, std::memory_order_relaxed);
      if (reordered) *reordered = false;
      return live;
    }
  }
  auto packed = std::make_shared<PackedCopy>();
  packed->source = w;
  packed->memory = HostMemory(wanted, packed->storage);
  dnnl::memory plain = WrapTensor(w, stored);
  dnnl::reorder(plain, packed->memory).execute(DnnlStream(), plain, packed->memory);
  DnnlStream().wait();
  registry.erase(std::remove_if(registry.begin(), registry.end(), [](const Entry& e) { return e.packed.expired(); }),
                 registry.end());
  registry.push_back(Entry{w.raw(), stored, wanted, packed});
  packed_count.fetch_add(1, std::memory_order_relaxed);
  if (reordered) *reordered = true;
  return packed;
}

}  // namespace tandem::cpu
