// Choosing among the per-ISA builds of one microkernel family (skinny products,
// channels-last max pool, dense-chain tiles, small-map convolutions). A family is a table
// type of plain function pointers; each build is a file compiled with its ISA's flags that
// defines one table (kBaseline..., kAvx2..., kAvx512...). CMake's tandem_isa_family()
// (CMakeLists.txt) compiles those files and defines, on the family's dispatching file,
// TANDEM_AVX2_BUILD / TANDEM_AVX512_BUILD for the builds that exist on this target.
//
// The dispatching file declares every table and passes the optional ones to IsaBuilds
// through TANDEM_AVX2_TABLE / TANDEM_AVX512_TABLE: a table whose build is absent becomes
// nullptr and is never referenced, so the linker asks for no symbol that was not compiled. Direct
// references (not weak ones) keep the linker pulling each build's object out of the
// static archive.
#pragma once
#include <vector>

#include "providers/cpu/cpu_isa.h"

#ifdef TANDEM_AVX2_BUILD
#define TANDEM_AVX2_TABLE(table) (&(table))
#else
#define TANDEM_AVX2_TABLE(table) nullptr
#endif
#ifdef TANDEM_AVX512_BUILD
#define TANDEM_AVX512_TABLE(table) (&(table))
#else
#define TANDEM_AVX512_TABLE(table) nullptr
#endif

namespace tandem::cpu {

// The builds of one family this process may run, baseline first and widest last: an AVX2
// or AVX-512 build only where it is compiled in (non-null), the CPU has it and
// ONEDNN_MAX_CPU_ISA admits it (cpu_isa.h).
template <typename Kernels>
class IsaBuilds {
 public:
  using Table = Kernels;
  IsaBuilds(const Kernels& baseline, const Kernels* avx2, const Kernels* avx512) : runnable_{&baseline} {
    if (avx2 && Avx2Allowed()) runnable_.push_back(avx2);
    if (avx512 && Avx512Allowed()) runnable_.push_back(avx512);
  }
  const std::vector<const Kernels*>& runnable() const { return runnable_; }  // tests run each
  const Kernels& best() const { return *runnable_.back(); }                   // kernels run this

 private:
  std::vector<const Kernels*> runnable_;
};

// The one IsaBuilds of family `Kernels`, made on first use: what a family's Builds() returns.
// (The type comes from `baseline` alone, so an absent build may be passed as nullptr.)
template <typename Kernels>
const IsaBuilds<Kernels>& BuildsOf(const Kernels& baseline, const typename IsaBuilds<Kernels>::Table* avx2,
                                   const typename IsaBuilds<Kernels>::Table* avx512) {
  static const IsaBuilds<Kernels> builds(baseline, avx2, avx512);
  return builds;
}

}  // namespace tandem::cpu
