// Constant weights (initializers) packed once into the form a kernel reads them in (the
// layout a oneDNN primitive wants, the panels of the skinny products), and shared by every
// kernel of the process that wants the same tensor in the same form. Where several nodes read
// one initializer (the branches of a weight-tied model such as a Siamese network, the layers
// of a model that repeats one layer's weights, a convolution applied at each step of an
// unrolled loop) they then stream one packed copy instead of one per node: eight chained
// 512-channel 3x3 convolutions on 7x7 sharing one initializer ran 24% faster on 2 Emerald
// Rapids cores than with eight copies
// (bench/results/2026-11-27-cpu-vs-ort-shared-weights.md). Float32 throughout: only the
// layout changes.
//
// A tensor is identified by its address within its live buffer: a copy is found only while
// the buffer it was made from is alive (a new buffer at a freed one's address never matches),
// and the copy does not keep that buffer alive (a float copy that a float16 kernel makes of
// its weights on every call is freed as before). Copies of different sessions never meet
// unless the sessions share the tensor's buffer (two sessions made from one Graph). A copy
// goes when its last kernel does. Thread-safe; one lock, held while a copy is made.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <dnnl.hpp>

#include "graph/tensor.h"
#include "providers/cpu/host_memory.h"

namespace tandem::cpu {

namespace packed_weights_internal {
void CountPacked();
void CountShared();
}  // namespace packed_weights_internal

// The copies of constant tensors in one kind of packed form, `Form` telling the variants of
// the form apart (layouts, kernel set; compared with ==).
template <typename Form, typename Packed>
class ConstantCopies {
 public:
  // The live copy of `w` in `form`, else make() (a std::unique_ptr<const Packed> built from
  // w), kept as it. `made` (optional) tells which. `w` must not change while its buffer
  // lives (an initializer or other constant).
  template <typename Make>
  std::shared_ptr<const Packed> Get(const Tensor& w, const Form& form, Make&& make, bool* made = nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Entry& e : entries_) {
      if (e.data != w.raw() || !(e.form == form) || e.buffer.lock() != w.buffer()) continue;
      if (auto live = e.copy.lock()) {
        packed_weights_internal::CountShared();
        if (made) *made = false;
        return live;
      }
    }
    std::shared_ptr<const Packed> copy = make();
    std::vector<Entry> live;
    for (Entry& e : entries_)
      if (!e.copy.expired() && !e.buffer.expired()) live.push_back(std::move(e));
    entries_ = std::move(live);
    entries_.push_back(Entry{w.raw(), w.buffer(), form, copy});
    packed_weights_internal::CountPacked();
    if (made) *made = true;
    return copy;
  }

 private:
  struct Entry {
    const void* data;
    std::weak_ptr<Buffer> buffer;  // the tensor's storage: an entry matches only while it lives
    Form form;
    std::weak_ptr<const Packed> copy;
  };
  std::mutex mu_;
  std::vector<Entry> entries_;  // guarded by mu_; dead ones dropped on insert
};

// A constant tensor reordered into a oneDNN layout.
struct PackedCopy {
  HostBuffer storage;   // host_memory.h: huge pages for large weights
  dnnl::memory memory;  // the copy, in the wanted layout
};

// `w` (stored as `stored`) in the layout `wanted`: the live copy another kernel made of the
// same tensor in that layout, else a reorder made now. `reordered` (optional) tells which.
// Throws dnnl::error or std::bad_alloc.
std::shared_ptr<const PackedCopy> PackConstantWeights(const Tensor& w, const dnnl::memory::desc& stored,
                                                      const dnnl::memory::desc& wanted, bool* reordered = nullptr);

// Since the process started, over every kind of copy: copies made, and requests answered with
// another kernel's live copy (tests check that a shared initializer is packed once).
int64_t ConstantWeightsPacked();
int64_t ConstantWeightsShared();

}  // namespace tandem::cpu
