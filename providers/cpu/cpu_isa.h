// Which of Tandem's own CPU code paths this process may use. oneDNN picks its kernels by
// the CPU's instruction set, capped by the environment variable ONEDNN_MAX_CPU_ISA (or
// DNNL_MAX_CPU_ISA); Tandem's own paths chosen by CPU features (the dense-chain tile
// loops' AVX2 build, the skinny products' AVX2 and AVX-512 builds; microkernels/
// isa_dispatch.h chooses among them) follow the same cap,
// so one setting makes the whole CPU provider run as it would on an older CPU, e.g.
// ONEDNN_MAX_CPU_ISA=SSE41 for the baseline x86-64 paths (the ISA ctest entries run the
// parity and conformance tests that way).
#pragma once
#include <string_view>

namespace tandem::cpu {

// Whether a cap (a value of ONEDNN_MAX_CPU_ISA in any case; empty: none) admits AVX2:
// SSE41 and AVX are below it; AVX2, AVX2_VNNI, AVX512_*, ALL and any other value are not.
bool CapAdmitsAvx2(std::string_view cap);

// Whether AVX2 + FMA code may run: the CPU has both and the cap in the environment admits
// it. Read once per process.
bool Avx2Allowed();

// Whether a cap admits AVX-512: none, ALL, and the AVX512_* and AVX10_* values do; the
// AVX2 family and below do not.
bool CapAdmitsAvx512(std::string_view cap);
// Whether AVX-512F (+ FMA) code may run: the CPU has it and the cap admits it.
bool Avx512Allowed();

}  // namespace tandem::cpu
