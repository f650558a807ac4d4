// Dense-chain fusion: a run of dense layers (Gemm, or MatMul + Add), each optionally
// followed by Relu, Tanh or Sigmoid, where every layer's output feeds only the next
// layer's input, becomes one
// ai.tandem DenseChain node (providers/cpu/kernels/nn/dense_chain_ops.cc), whose gradient is
// one DenseChainGrad (training/rules/linear.cc). The CPU kernels stream the batch through
// all layers in tiles of rows that stay in cache, so an MLP's activations never travel
// to memory; a 2-20-5-1 MLP's training step drops from ~15 nodes to 2.
//
// A Gemm is a layer when transA = 0, alpha = beta = 1, its B (the weight) is a float32
// matrix of known shape (an initializer or a graph input, e.g. a trained parameter) of at
// most kMaxDenseChainWeights elements, and its C (the bias) holds one value per output
// ([N] or [1, N]). So is a MatMul(A, W) whose only reader is an Add of such a bias (Keras
// and tf2onnx Dense layers), when A is known to be a matrix. Intermediate values must
// have no other reader and not be graph outputs.
// Only the CPU has these kernels: callers apply it when the CPU runs the whole graph.
#pragma once
#include <cstdint>

#include "graph/graph.h"

namespace tandem {

// Larger layers are left to the GEMM primitives, which block for cache themselves: a
// training step of three tanh layers at batch 1024 (2-core AVX-512 Xeon) took 0.75 ms
// chained vs 0.92 unfused at width 32, 2.29 vs 1.58 at 64 and 8.4 vs 2.7 at 128 (GPT-2's
// 128-wide projections ran 5x slower chained); their inference at batch 1024, 0.80 vs 0.09 ms
// at width 64 and 2.4 vs 0.3 at 128.
constexpr int64_t kMaxDenseChainWeights = 1 << 11;

// Returns the number of Gemm nodes fused into chains of at least `min_layers` layers.
// Training takes single layers too (DenseChainGrad replaces a Gemm's backward nodes);
// inference asks for 2, leaving a lone Gemm to FusedGemm and its oneDNN post-ops.
int FuseDenseChains(Graph& graph, int min_layers = 1);

}  // namespace tandem
