// Small helpers the standard-ONNX rewrites (optimizer/onnx_rewrites/) share: constant lookup,
// known shapes, fresh names, redirecting readers and dropping nodes. They only touch the
// top-level node list; callers leave values that ValueReaders calls pinned alone.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/passes.h"

namespace tandem::rewrite {

// The initializer named `value`, or null.
const Tensor* Constant(const Graph& graph, const std::string& value);
// The values of a 1-D (or scalar) int32/int64 initializer of at most `max_elements`, else nullopt.
std::optional<std::vector<int64_t>> IntConstant(const Graph& graph, const std::string& value,
                                                int64_t max_elements);
// A one-value initializer (rank 0 or 1) of a per-tensor QuantizeLinear/DequantizeLinear: the
// float32 scale, or the uint8/int8 zero point; else null.
const Tensor* OneValueScale(const Graph& graph, const std::string& value);
const Tensor* OneValueZeroPoint(const Graph& graph, const std::string& value);
// A float32 constant of `channels` values that broadcasts as [1, channels, 1, ...] against
// an output of rank `rank` (one value per channel of a convolution's output).
bool IsPerChannelConstant(const Tensor* c, int64_t channels, int rank);
// The pads of Pad `n`, [begin..., end...]: its constant int64 input 1 from opset 11, its
// attribute before (`paddings` before opset 2); nullopt when input 1 is absent or not an
// int64 constant.
std::optional<std::vector<int64_t>> PadAmounts(const Graph& graph, const Node& n);
// An inference BatchNormalization `bn` (training_mode 0, no output but Y) with float32 1-D
// initializer scale, bias, mean and var of one value per channel, as Y = X * a + s per
// channel: a = scale / sqrt(var + epsilon), s = bias - mean * a, in double; else nullopt.
struct ChannelAffine {
  std::vector<double> a, s;
};
std::optional<ChannelAffine> InferenceBatchNorm(const Graph& graph, const Node& bn);
// Gives `conv` new initializers for its weights, W[m] * scale[m] per output channel m (W: its
// float32 weights, rank >= 3, one scale per output channel; in float64, rounded once), named
// "<base>.<what>_weight", and, when `bias` is given (one value per output channel), for its
// bias, "<base>.<what>_bias". W itself is left (another node may read it).
void SetScaledConvWeights(Graph& graph, Node& conv, const Tensor& w, const std::vector<double>& scale,
                          const std::vector<float>* bias, const std::string& base, const std::string& what);
// The permutation of Transpose `t`: its perm, or (none given) the reversed axes of an input
// of known rank; empty when unknown or when perm is no permutation of the input's axes.
std::vector<int64_t> TransposePerm(const Graph& graph, const Node& t);
// Whether `p` maps every axis to itself.
bool IsIdentityPerm(const std::vector<int64_t>& p);
// The value's static shape when its rank is known, else null.
const Shape* KnownShape(const Graph& graph, const std::string& value);
// A value name not used in the graph or its subgraphs: `base`, else `base_1`, `base_2`, ...
std::string FreshName(const Graph& graph, const std::string& base);
// Every node input reading `from` reads `to` instead.
void RedirectReads(Graph& graph, const std::string& from, const std::string& to);
// Removes the nodes at `indices` (order of the others kept): graph/passes.h.
using ::tandem::RemoveNodes;
// Folds nodes into the producers of their inputs. For each node `n` and each input slot
// in `slots(n)` whose value is the only output of a producer node and read by nothing
// else, `absorb(graph, producer, n, slot)` may rewrite the producer to compute n's result
// (returning true); the producer then writes n's first output and n is removed.
// Returns the number of nodes folded away.
int FoldIntoProducers(Graph& graph, const std::function<std::vector<int>(const Node&)>& slots,
                      const std::function<bool(Graph&, Node& producer, const Node& n, int slot)>& absorb);
// Whether `n` is in the default ONNX domain with this op type.
inline bool IsOnnx(const Node& n, const char* op) { return n.domain.empty() && n.op_type == op; }

}  // namespace tandem::rewrite
