// The dense-chain tile loops built with AVX2 + FMA (CMakeLists.txt sets -mavx2 -mfma for
// this file; see dense_chain_tiles.h). Nothing here runs unless the CPU reports both.
#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#define DENSE_CHAIN_ISA avx2
#include "providers/cpu/microkernels/dense_chain_tiles_impl.h"

namespace tandem::cpu::dense_chain {

extern const TileKernels kAvx2TileKernels = {
    avx2::ForwardTile<kWide>,  avx2::ForwardTile<kNarrow>,         avx2::ForwardTile<1>,
    avx2::BackwardWide,        avx2::BackwardSums<kNarrow>, avx2::BackwardSums<1>};

}  // namespace tandem::cpu::dense_chain
#endif
