#include "providers/cpu/host_memory.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "providers/cpu/dnnl_util.h"
#include "framework/env_switch.h"

namespace tandem::cpu {
namespace {
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = 4096;
// Under AddressSanitizer large buffers stay on the (instrumented) heap, so overruns of them
// are still caught; they are aligned and advised all the same.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMapLarge = false;
#else
constexpr bool kMapLarge = true;
#endif

size_t PageRounded(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

void Advise(void* p, size_t bytes) {
  if (HugePagesWanted()) madvise(p, PageRounded(bytes), MADV_HUGEPAGE);
}
}  // namespace

bool HugePagesWanted() { return !SwitchedOff("TANDEM_CPU_HUGE_PAGES"); }

size_t HostAlignment(size_t bytes) { return bytes >= kHugePage ? kHugePage : 64; }

void* AllocateHost(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (HostAlignment(bytes) != kHugePage || !kMapLarge) {
    void* p = nullptr;
    if (posix_memalign(&p, HostAlignment(bytes), bytes) != 0) return nullptr;
    if (HostAlignment(bytes) == kHugePage) Advise(p, bytes);
    return p;
  }
  // Map a huge page more than needed, keep the 2 MiB-aligned part, and advise it (unless
  // turned off). The mapping ends at the last small page of the buffer, so a partial last
  // huge page stays in small pages instead of being backed whole. Where the kernel has no
  // THP the advice fails and the buffer keeps small pages.
  const size_t len = PageRounded(bytes);
  void* base = mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  const uintptr_t b = reinterpret_cast<uintptr_t>(base), a = (b + kHugePage - 1) / kHugePage * kHugePage;
  if (a > b) munmap(base, a - b);
  const uintptr_t end = b + len + kHugePage;
  if (end > a + len) munmap(reinterpret_cast<void*>(a + len), end - (a + len));
  void* p = reinterpret_cast<void*>(a);
  Advise(p, len);
  return p;
}

void FreeHost(void* p, size_t bytes) {
  if (!p) return;
  if (bytes == 0) bytes = 1;
  if (bytes >= kHugePage && kMapLarge)
    munmap(p, PageRounded(bytes));
  else
    std::free(p);
}

dnnl::memory HostMemory(const dnnl::memory::desc& md, HostBuffer& owner) {
  owner = MakeHostBuffer(md.get_size());
  if (!owner) throw std::bad_alloc();
  return dnnl::memory(md, DnnlEngine(), owner.get());
}

}  // namespace tandem::cpu
