// How long an idle OpenMP thread spins before it sleeps: Tandem's default for GNU OpenMP
// (libgomp, which oneDNN and Tandem's kernels run on).
//
// libgomp's own default spins for 300,000 rounds (milliseconds) at every barrier and between
// parallel regions. On a machine where another program keeps a core busy, those spinning
// threads compete with it for the cores, and a region waits for whichever of its threads the
// scheduler has just put aside: BERT-base at batch 1 on 2 threads took 2.8x its unloaded
// time (ONNX Runtime 1.9x). Spinning 1,000 rounds (tens of microseconds) still catches the
// next region of a running model, and then sleeps: 1.7x under the same load, unchanged
// unloaded (bench/results/2026-11-27-zoo-busy-core.md).
//
// libgomp reads its settings once, when it is loaded, before any code of a program that
// links it runs (even an executable's .preinit_array sees no environment yet). So the CLI
// sets the default and executes itself again (cli/openmp_wait_default.h), and the Python
// package sets it while it loads libtandem (python/tandem/_lib.py holds the same number;
// tests/openmp_wait_test.py checks both through libgomp's own OMP_DISPLAY_ENV). A program
// that links libtandem itself sets GOMP_SPINCOUNT or OMP_WAIT_POLICY in its environment
// (README, "Sharing the CPU").
#pragma once
#include <cstdlib>

namespace tandem {

inline constexpr char kDefaultGompSpinCount[] = "1000";

// Puts GOMP_SPINCOUNT=kDefaultGompSpinCount into the environment unless the user chose a
// waiting policy (OMP_WAIT_POLICY or GOMP_SPINCOUNT set); true when it did.
inline bool SetDefaultOpenMpWait() {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return false;
  return setenv("GOMP_SPINCOUNT", kDefaultGompSpinCount, /*overwrite=*/0) == 0;
}

}  // namespace tandem
