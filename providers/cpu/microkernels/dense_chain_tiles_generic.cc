// The dense-chain tile loops for the baseline instruction set (see dense_chain_tiles.h).
#define DENSE_CHAIN_ISA baseline
#include "providers/cpu/microkernels/dense_chain_tiles_impl.h"

namespace tandem::cpu::dense_chain {

extern const TileKernels kBaselineTileKernels = {
    baseline::ForwardTile<kWide>,  baseline::ForwardTile<kNarrow>,         baseline::ForwardTile<1>,
    baseline::BackwardWide,        baseline::BackwardSums<kNarrow>, baseline::BackwardSums<1>};

}  // namespace tandem::cpu::dense_chain
