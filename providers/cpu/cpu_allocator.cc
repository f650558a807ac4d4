#include "providers/cpu/cpu_allocator.h"

#include <cstdlib>
#include <new>

#include "graph/resource_limits.h"
#include "providers/cpu/host_memory.h"

namespace tandem {

// Shared by the allocator and its live buffers; deleted by whichever goes last.
struct CpuAllocator::State {
  std::mutex mu;
  std::map<size_t, std::vector<void*>> free_list;  // capacity -> blocks (kept, never shrunk)
  size_t in_use = 0, peak = 0, reused = 0, live_buffers = 0;
  bool alive = true;
  ~State() {
    for (auto& [cap, blocks] : free_list)
      for (void* p : blocks) cpu::FreeHost(p, cap);
  }
  // A buffer's release: back to the free list, or freed once the allocator is gone.
  static void Release(State* state, size_t cap, void* block) {
    bool last = false;
    {
      std::lock_guard<std::mutex> lock(state->mu);
      state->in_use -= cap;
      --state->live_buffers;
      if (state->alive) state->free_list[cap].push_back(block);
      else cpu::FreeHost(block, cap);
      last = !state->alive && state->live_buffers == 0;
    }
    if (last) delete state;
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

CpuAllocator::CpuAllocator() : state_(new State) {}
CpuAllocator::~CpuAllocator() {
  bool last = false;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->alive = false;
    last = state_->live_buffers == 0;
  }
  if (last) delete state_;
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
    if (it != state_->free_list.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      ++state_->reused;
    }
    state_->in_use += cap;
    if (state_->in_use > state_->peak) state_->peak = state_->in_use;
    ++state_->live_buffers;
  }
  if (!p) {
    p = cpu::AllocateHost(cap);  // huge pages from 2 MiB (host_memory.h)
    if (!p) {
      std::lock_guard<std::mutex> lock(state_->mu);
      state_->in_use -= cap;
      --state_->live_buffers;
      throw AllocationError("out of memory allocating " + FormatBytes(cap));
    }
  }
  auto buf = std::make_shared<Buffer>();
  buf->data = p;
  buf->bytes = bytes;
  buf->device = device();
  // Two words: small enough for std::function to hold without a heap allocation.
  State* state = state_;
  buf->release = [state, cap](Buffer& b) { State::Release(state, cap, b.data); };
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
