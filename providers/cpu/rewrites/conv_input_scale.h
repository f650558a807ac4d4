// A squeeze-and-excitation gate folded into the convolution after it, on the CPU.
//
// EfficientNet, MobileNetV3, RegNetY and GhostNet scale a feature map by a per-channel gate
// and feed the product to a 1x1 convolution: Y = Conv(Mul(X, S), W) with X [1, C, H, W]
// and S [1, C, 1, 1]. The Mul reads and writes the whole map; scaling the weights instead,
// Y = Conv(X, W * S) (W'[o, c, ...] = W[o, c, ...] * S[c]), touches O * C * kh * kw values:
// far fewer where the map is large and the weights small (early layers; on EfficientNet-B0
// the first five of its sixteen gates). This pass writes
// FusedConv(X, W, B, Sum, Scale = S) (ai.tandem FusedConv's input 4), whose kernel scales
// its weights by Scale on each call, and drops the Mul.
//
// Conditions: the Mul and the convolution (Conv, or FusedConv without a Scale, a fused
// pool or a residual sum yet) are float nodes assigned to `provider`; the Mul's output is
// read by the convolution alone (as X, nowhere else, not a graph output); one operand, the
// gate, has the static shape [1, C, 1, 1] and is written by a Sigmoid or HardSigmoid (alone
// or fused into the node before: finite, so W * S stays finite), the other [1, C, H, W];
// the convolution is 2-D, of one group, with constant float weights [O, C, kh, kw] at most a
// quarter of the map they spare (4 * O * kh * kw <= H * W; larger ones cost more to scale,
// each call, in the layout oneDNN reads, than the Mul). Scale is [1, C] as stored: any
// channel blocking of a 1x1 map keeps its C values in order (a value is blocked only where
// the block divides C), so the blocked-layout pass, which runs after, may hand it over
// blocked. Training graphs are left alone. TANDEM_CPU_CONV_INPUT_SCALE=0 turns it off.
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Rewrites `graph` (partitioned, in execution order); returns the number of Muls folded.
int FuseConvInputScale(Graph& graph, const std::string& provider);

}  // namespace tandem::cpu
