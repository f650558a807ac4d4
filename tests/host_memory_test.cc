// Host buffers of the CPU provider (providers/cpu/host_memory.h): small ones 64-byte
// aligned from the heap; from 2 MiB on mapped on their own, 2 MiB-aligned, and advised as
// transparent huge pages unless TANDEM_CPU_HUGE_PAGES=0 — the advice read back from the
// kernel (the "hg" flag of the mapping in /proc/self/smaps) where it has THP at all.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>

#include "providers/cpu/host_memory.h"
#include "tests/scoped_env.h"

namespace tandem {
namespace {

using testing::ScopedEnv;

// The VmFlags of the mapping holding p, or "" when none does.
std::string VmFlagsOf(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {  // a mapping's first line
      inside = a >= lo && a < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

bool KernelHasThp() {
  struct stat st;
  return stat("/sys/kernel/mm/transparent_hugepage/enabled", &st) == 0;
}

bool Advised(const std::string& flags) { return (" " + flags + " ").find(" hg ") != std::string::npos; }

TEST(HostMemory, SmallBuffersComeFromTheHeapAligned) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{100}, size_t{1} << 20, (size_t{2} << 20) - 1}) {
    void* p = cpu::AllocateHost(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
    EXPECT_EQ(cpu::HostAlignment(bytes), 64u);
    std::memset(p, 0x5a, bytes);
    cpu::FreeHost(p, bytes);
  }
}

TEST(HostMemory, LargeBuffersAreHugePageAlignedAndAdvised) {
  const size_t sizes[] = {size_t{2} << 20, (size_t{5} << 20) + 12345};
  for (const char* env : {"", "0"}) {
    const ScopedEnv huge("TANDEM_CPU_HUGE_PAGES", env);
    for (size_t bytes : sizes) {
      cpu::HostBuffer b = cpu::MakeHostBuffer(bytes);
      ASSERT_NE(b.get(), nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b.get()) % (size_t{2} << 20), 0u) << bytes;
      std::memset(b.get(), 0x33, bytes);  // every byte is ours to write
      EXPECT_EQ(static_cast<unsigned char*>(b.get())[bytes - 1], 0x33);
      const std::string flags = VmFlagsOf(b.get());
      ASSERT_FALSE(flags.empty()) << "no mapping holds the buffer";
      if (KernelHasThp()) {
        EXPECT_EQ(Advised(flags), std::string(env) != "0") << "TANDEM_CPU_HUGE_PAGES=" << env << ": " << flags;
      }
    }
  }
}

TEST(HostMemory, OneDnnMemoryOnAHostBuffer) {
  const dnnl::memory::desc md({512, 2048}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
  cpu::HostBuffer owner;
  dnnl::memory m = cpu::HostMemory(md, owner);
  EXPECT_EQ(m.get_data_handle(), owner.get());
  EXPECT_EQ(owner.get_deleter().bytes, md.get_size());
}

}  // namespace
}  // namespace tandem
