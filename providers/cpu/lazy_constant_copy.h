// A kernel's handle on the packed copy of its constant weights: the first Get calls
// `find_or_make` (typically a ConstantCopies::Get of packed_weights.h, which finds another
// kernel's live copy or packs one) and keeps what it returns; later calls return that copy.
// Thread-safe: kernels of one session may run on several threads at once, and only the
// first caller packs.
#pragma once
#include <memory>
#include <mutex>

namespace tandem::cpu {

template <typename Packed>
class LazyConstantCopy {
 public:
  // find_or_make: () -> std::shared_ptr<const Packed>, never null.
  template <typename FindOrMake>
  const Packed& Get(FindOrMake&& find_or_make) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!copy_) copy_ = find_or_make();
    return *copy_;
  }

 private:
  std::mutex mu_;
  std::shared_ptr<const Packed> copy_;  // guarded by mu_
};

}  // namespace tandem::cpu
