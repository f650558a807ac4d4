#include "providers/cpu/cpu_allocator.h"

#include <cstdlib>
#include <new>

#include "graph/resource_limits.h"

namespace tandem {

struct CpuAllocator::State {
  std::mutex mu;
  std::multimap<size_t, void*> free_list;  // capacity -> block
  size_t in_use = 0, peak = 0, reused = 0;
  bool alive = true;
  ~State() {
    for (auto& [cap, p] : free_list) std::free(p);
  }
};

namespace {
size_t Bucket(size_t bytes) {
  // Round up to 64 bytes below 4 KiB, else to the next power-of-two quarter step.
  if (bytes <= 4096) return (bytes + 63) / 64 * 64;
  size_t p = 4096;
  while (p < bytes) p <<= 1;
  size_t step = p / 4;
  return (bytes + step - 1) / step * step;
}
}  // namespace

CpuAllocator::CpuAllocator() : state_(std::make_shared<State>()) {}
CpuAllocator::~CpuAllocator() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->alive = false;
}

std::shared_ptr<Buffer> CpuAllocator::Allocate(size_t bytes) {
  const uint64_t limit = MaxMemoryBytes();
  if (std::string why = BufferOverLimit(bytes, limit); !why.empty()) throw AllocationError(why);
  const size_t cap = Bucket(bytes ? bytes : 1);
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (std::string why = LiveMemoryOverLimit(cap, state_->in_use, limit); !why.empty())
      throw AllocationError(why);
    auto it = state_->free_list.find(cap);
    if (it != state_->free_list.end()) {
      p = it->second;
      state_->free_list.erase(it);
      ++state_->reused;
    }
    state_->in_use += cap;
    if (state_->in_use > state_->peak) state_->peak = state_->in_use;
  }
  if (!p) {
    p = std::aligned_alloc(64, cap);
    if (!p) {
      std::lock_guard<std::mutex> lock(state_->mu);
      state_->in_use -= cap;
      throw AllocationError("out of memory allocating " + FormatBytes(cap));
    }
  }
  auto buf = std::make_shared<Buffer>();
  buf->data = p;
  buf->bytes = bytes;
  buf->device = device();
  std::shared_ptr<State> state = state_;
  buf->release = [state, cap](Buffer& b) {
    std::lock_guard<std::mutex> lock(state->mu);
    state->in_use -= cap;
    if (state->alive) state->free_list.emplace(cap, b.data);
    else std::free(b.data);
  };
  return buf;
}

size_t CpuAllocator::bytes_in_use() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->in_use;
}
size_t CpuAllocator::peak_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->peak;
}
size_t CpuAllocator::reused() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->reused;
}

}  // namespace tandem
