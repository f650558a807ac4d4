// Host buffers for the CPU provider's large, long-lived data: weights reordered into
// oneDNN's layouts or packed for the skinny products, and activations (cpu_allocator.h).
// A buffer of 2 MiB or more is mapped on its own, 2 MiB-aligned, and advised to the kernel
// as transparent huge pages (madvise MADV_HUGEPAGE; Debian's default THP mode only backs advised memory), so
// streaming tens of MB of convolution weights takes far fewer TLB misses: resnet18 at
// batch 1 ran 2-6% faster on 2 Sapphire Rapids cores. Smaller buffers are 64-byte aligned.
// TANDEM_CPU_HUGE_PAGES=0 leaves out the advice (the default page size everywhere).
#pragma once
#include <cstddef>
#include <memory>

#include <dnnl.hpp>

namespace tandem::cpu {

// Whether buffers of 2 MiB and more are advised as huge pages (TANDEM_CPU_HUGE_PAGES, read
// at each allocation).
bool HugePagesWanted();
// The alignment AllocateHost gives a buffer of `bytes`: 2 MiB from 2 MiB on, else 64.
size_t HostAlignment(size_t bytes);
// A buffer of `bytes` (at least 1), or nullptr when out of memory. A huge-page buffer is
// mapped fresh (advised before its first touch: recycled heap memory would keep the small
// pages it was first faulted in). Release with FreeHost and the same `bytes`.
void* AllocateHost(size_t bytes);
void FreeHost(void* p, size_t bytes);

struct HostFree {
  size_t bytes = 0;
  void operator()(void* p) const { FreeHost(p, bytes); }
};
using HostBuffer = std::unique_ptr<void, HostFree>;
// AllocateHost(bytes) owned (null when out of memory).
inline HostBuffer MakeHostBuffer(size_t bytes) { return HostBuffer(AllocateHost(bytes), HostFree{bytes}); }

// A oneDNN memory of `md` on the CPU engine whose storage AllocateHost gives and `owner`
// keeps (the memory must not outlive it); throws std::bad_alloc when out of memory.
dnnl::memory HostMemory(const dnnl::memory::desc& md, HostBuffer& owner);

}  // namespace tandem::cpu
