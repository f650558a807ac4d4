#include "ops/tandem_ops.h"

#include <algorithm>
#include <cstring>

#include "ops/tandem_op_groups.h"

namespace tandem {

namespace tandem_ops {

std::vector<TandemOpDecl> GraphOps() {
  return {
    {"FusedConv", "X, W, B?, Sum?, Scale?", "Y, Mean?",
     "Conv's (auto_pad, dilations, group, kernel_shape, pads, strides); activation: string (\"\"); "
     "activation_alpha, activation_beta: float (0; CUDA alpha 0.01); activation_approximate: string "
     "(\"none\"); pool: string (\"\"); "
     "channel_block: int (0); blocked_output: int (1); sum_activation: string (\"\"); "
     "sum_activation_alpha, sum_activation_beta: float (0); sum_in_place: int (0)",
     "Y = act(Conv(X, W) + B) with act one of Relu, LeakyRelu (alpha), Clip [alpha, beta], Sigmoid, "
     "Tanh, and on the CPU only HardSwish, HardSigmoid (alpha, beta), Gelu (erf form, or tanh form with "
     "activation_approximate = \"tanh\"), Mish "
     "(x * tanh(softplus(x)), also fused from those nodes) and Swish "
     "(x * sigmoid(alpha * x): SiLU, fused from x * Sigmoid(x)); "
     "pool = \"MaxPool2x2\" then max-pools it 2x2 with stride 2, and Sum gives "
     "Y = sum_act(act(Conv(X, W) + B) + Sum) (sum_in_place: Y may reuse Sum's buffer); Scale [1, C] "
     "(CPU only) multiplies X's channels first, as W * Scale (one image; any channel blocking of a [1, C, 1, 1] "
     "value is accepted); "
     "channel_block = B stores Y (and X, when it has one more dim than W) as [N, C/B, H, W, B] "
     "(-1: channels-last), blocked_output = 0 keeps Y plain. Mean (CPU only, float32, no pool) is "
     "GlobalAveragePool(Y) in Y's layout ([N, C/B, 1, 1, B] blocked). float32 only (CPU oneDNN; CUDA cuDNN, "
     "which reads only X, W, B, the Conv attributes, activation* and pool). Written by "
     "optimizer/activation_fusion.cc (Conv + activation [+ 2x2 MaxPool]), and on CPU-placed nodes by "
     "providers/cpu/rewrites/blocked_layout.cc (channel_block, blocked_output) and "
     "providers/cpu/rewrites/conv_sum.cc (Sum from a residual Add, sum_activation = Relu, sum_in_place) and "
     "providers/cpu/rewrites/conv_input_scale.cc (Scale from a squeeze-and-excitation Mul) and "
     "providers/cpu/rewrites/conv_mean.cc (Mean from a squeeze-and-excitation pool of a Swish convolution)."},
    {"FusedGemm", "A, B, C?", "Y",
     "transA, transB: int (0); alpha, beta: float (1); activation: string (\"\"); "
     "activation_alpha, activation_beta: float (0; CUDA alpha 0.01); activation_approximate: string (\"none\")",
     "Y = act(alpha * A' * B' + beta * C) for 2-D A and B (A' = A^T when transA, B' = B^T when transB), "
     "C unidirectionally broadcast to [M, N] and ignored when beta = 0; act as FusedConv's "
     "(Relu, LeakyRelu, Clip, Sigmoid, Tanh; the CPU only HardSwish, HardSigmoid, Gelu, Mish, Swish). float32 only (CPU oneDNN/own loops; CUDA cuBLASLt). "
     "Written by optimizer/activation_fusion.cc from a Gemm whose sole reader is the activation."},
    {"FusedMatMul", "A, B, bias?", "Y",
     "activation: string (\"\"); activation_alpha, activation_beta: float (0; CUDA alpha 0.01); "
     "activation_approximate: string (\"none\")",
     "Y = act(MatMul(A, B) + bias) with numpy MatMul semantics (1-D operands, batch broadcasting); "
     "on the CPU the bias must be float32 [N] with a 2-D B, and is added to every row before the "
     "activation. float32 only (CPU oneDNN/own loops; CUDA cuBLASLt, which declines broadcast batch "
     "dims). Written by optimizer/activation_fusion.cc (MatMul + activation, no bias) and "
     "providers/cpu/rewrites/matmul_bias.cc (MatMul by a constant 2-D float B + Add of a constant [N] "
     "bias, then an optional activation)."},
    {"AddLayerNormalization", "A, B, Scale, Bias?", "Y, Sum?",
     "epsilon: float (1e-5)",
     "Sum = A + B (one shape) and Y = LayerNormalization(Sum) over the last axis: "
     "(Sum - mean) / sqrt(var + epsilon) * Scale + Bias, Scale and Bias of the last dim's size; Sum is written only when "
     "wanted (a pre-norm transformer's residual stream). CPU float32 only, one row at a time in cache. "
     "Written by providers/cpu/rewrites/add_layer_norm.cc from a residual Add read by a LayerNormalization "
     "(ONNX opset 17 or ai.tandem) over the last axis on CPU-placed nodes."},
    {"FusedGroupNorm", "X, Scale, Bias", "Y",
     "num_groups: int; epsilon: float (1e-5); activation: string (\"\"); channel_block: int (0)",
     "Y = act(GroupNormalization(X) * Scale + Bias): X [N, C, spatial...] normalized over each of num_groups "
     "groups of C / num_groups adjacent channels and their spatial dims (mean and variance in float64 from "
     "float blocks), then channel c scaled by Scale[c] and shifted by Bias[c] (float32 [C], opset 21's "
     "GroupNormalization); act \"\" or Swish (x * sigmoid(x)). channel_block = B stores X and Y as [N, C/B, "
     "H, W, B] (-1: channels-last). CPU float32 only. Written by providers/cpu/rewrites/group_norm.cc from "
     "the exporters' GroupNorm (Reshape to [N, groups, ...], InstanceNormalization of unit scale and zero "
     "bias, Reshape back, Mul and Add per channel [, Sigmoid and Mul]) on CPU-placed nodes, and given its "
     "channel_block by providers/cpu/rewrites/blocked_layout.cc."},
    {"FusedAttention", "Q, Kt, V, mask?", "Y",
     "scale: float (1); nan_rows_to_zero: int (0); heads_interleaved: int (0)",
     "Y = softmax(scale * MatMul(Q, Kt) + mask, last axis) V per batch matrix: Q [..., S, D], Kt [..., D, L] "
     "(the keys already transposed), V [..., L, Dv], the batch dims broadcast as MatMul's and the mask as "
     "Add's, not past the scores' [..., S, L]; Y [..., S, Dv]. With heads_interleaved the operands are the "
     "values before the heads' Transposes, read in place: Q [B, S, H, D], K [B, L, H, D] (not transposed), "
     "V [B, L, H, Dv], and Y is [B, H, S, Dv]. A score row holding a NaN or masked to -inf "
     "throughout gives NaN, or zeros with nan_rows_to_zero. CPU float32 only (the scores are made and used "
     "one block of query rows at a time, in cache). Written by ops/attention_subgraph.cc from MatMul, scalar "
     "Mul/Div, an Add of the mask, Softmax [, IsNaN + Where], MatMul: on CPU-placed nodes for inference "
     "(providers/cpu/rewrites/attention_fusion.cc), before the gradients in CPU training graphs."},
    {"MatMulIntegerToFloat", "A, B, scale, a_zero_point?, b_zero_point?, bias?", "Y", "",
     "Y = float(MatMulInteger(A, B, a_zero_point, b_zero_point)) * scale [+ bias]: A [..., M, K] and B [K, N] "
     "uint8 or int8, the zero points one value or per row of A / per column of B, scale float32 one value or "
     "[N], bias float32 [N]; the int32 sums are exact (oneDNN's int8 matmul with VNNI or AMX, float32 blocks "
     "below 2^24 otherwise) and the two float roundings those of the Cast, Mul and Add it replaces. CPU only. "
     "Written by providers/cpu/rewrites/integer_matmul_to_float.cc from quantize_dynamic's MatMulInteger, "
     "Cast, Mul by the scales' product [, Add of the bias] on CPU-placed nodes."},
    {"QLinearAdd", "A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point", "C", "",
     "C = QuantizeLinear(DequantizeLinear(A) + DequantizeLinear(B)) with one float32 scale and one 8-bit zero "
     "point each (C's type is C_zero_point's), in one pass with the float32 arithmetic of the nodes it "
     "replaces; A and B uint8 or int8, broadcast numpy-style. ONNX Runtime's contrib op's inputs. CPU only. "
     "Written by providers/cpu/rewrites/quantized_add.cc from static QDQ quantization's DequantizeLinear x2, "
     "Add, QuantizeLinear on CPU-placed nodes."},
    {"QLinearMul", "A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point", "C", "",
     "C = QuantizeLinear(DequantizeLinear(A) * DequantizeLinear(B)), as QLinearAdd with a product: the float32 "
     "arithmetic of the nodes it replaces, A and B uint8 or int8 broadcast numpy-style. CPU only. Written by "
     "providers/cpu/rewrites/quantized_add.cc from static QDQ quantization's DequantizeLinear x2, Mul, "
     "QuantizeLinear on CPU-placed nodes (SiLU's and HardSwish's x * gate, squeeze-and-excitation scaling)."},
    {"QLinearLookup", "X, Table", "Y", "",
     "Y[i] = Table[X[i]] (X uint8: index x; int8: x + 128) for an 8-bit X and a 256-value 8-bit Table; Y has the "
     "table's type. CPU only. Written by optimizer/qdq_lookup.cc for DequantizeLinear -> an element-wise function "
     "(Sigmoid, HardSigmoid, Tanh, ...) -> QuantizeLinear, the table being those nodes on every 8-bit value, folded "
     "to a constant at load."},
    {"Gelu", "X", "Y", "approximate: string (\"none\")",
     "The opset-20 op under ai.tandem for older graphs: Y = X * Phi(X) (approximate \"none\", Phi the "
     "normal CDF through erf) or 0.5 X (1 + tanh(sqrt(2/pi) (X + 0.044715 X^3))) (\"tanh\"). CPU float, "
     "double, float16, bfloat16. Written by optimizer/gelu_fusion.cc from the element-wise nodes "
     "exporters write for it, when the CPU runs everything."},
    {"LayerNormalization", "X, Scale, B?", "Y, Mean?, InvStdDev?",
     "axis: int (-1); epsilon: float (1e-5)",
     "The opset-17 op under ai.tandem for older graphs: over dims [axis, rank), "
     "Y = (X - mean) / sqrt(var + epsilon) * Scale + B, Scale and B broadcast to X.dims[axis:]; "
     "Mean and InvStdDev have X.dims[:axis] followed by 1s, in output 1's declared float type (else "
     "float32, double for double X); stash_type is not read. CPU float, double, float16, bfloat16; "
     "CUDA float32 (stats float32 only). Written by optimizer/layer_norm_fusion.cc (the ReduceMean, "
     "Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul gamma [, Add beta] pattern over the last axis, "
     "emitted with Y only, axis = -1), run by runtime/session.cc; cli/lib/convert/optimize.cc moves "
     "it to the default domain (opset >= 17 only)."},
    {"FromBlocked", "X", "Y",
     "channel_block: int (0; must be the stored block B > 0, or -1)",
     "Converts a channel-blocked float32 or 8-bit tensor [N, C/B, spatial..., B] (B = -1: channels-last, "
     "[N, 1, spatial..., C]) back to plain [N, C, spatial...]: Y[n, cb*B + k, s] = X[n, cb, s, k]. "
     "float32, uint8, int8; CPU only. Written by providers/cpu/rewrites/blocked_layout.cc where a blocked value "
     "has a plain reader or is pinned; providers/cpu/rewrites/blocked_flatten.cc removes it again "
     "before Flatten(axis 1) + Gemm/MatMul by permuting the constant weights."},
    {"ToBlocked", "X", "Y",
     "channel_block: int (0; must be 8, 16 or -1)",
     "FromBlocked's inverse: plain float32 [N, C, spatial...] (rank 3 to 5, C a multiple of B unless B = -1) "
     "into the channel blocks [N, C/B, spatial..., B] (B = -1: channels-last [N, 1, spatial..., C]): "
     "Y[n, cb, s, k] = X[n, cb*B + k, s]. float32; CPU only. Written by providers/cpu/rewrites/blocked_layout.cc "
     "before an upsampling Resize of a plain value whose output a blocked chain reads (the smaller map is "
     "the one converted)."},
    {"ConcatBatchNorm", "scale, B, mean, var, X_1, ...", "Y",
     "epsilon: float (1e-5); channel_block: int (0; must be -1, 8 or 16); activation: string (\"\")",
     "Y = act(scale * (Concat(X_1, ...) on channels - mean) / sqrt(var + epsilon) + B), act = Relu when "
     "activation = \"Relu\" (else none), with the X_i and Y stored channel-blocked per channel_block "
     "and the concatenation never materialized; scale/B/mean/var hold C float32 values. float32, CPU "
     "only. Written by providers/cpu/rewrites/concat_norm.cc from a blocked Concat read only by a "
     "blocked inference BatchNormalization (whose attributes it keeps; activation from "
     "providers/cpu/rewrites/norm_relu.cc)."},
    {"DenseChain", "X, W_1, B_1, ...", "Y",
     "activations: strings (required; Identity, Relu, Tanh or Sigmoid per layer); "
     "trans_b: ints (1 per layer)",
     "Y = h_n with h_0 = X ([M, K_0] float32) and h_l = act_l(h_{l-1} W_l' + B_l), W_l' = W_l^T when "
     "trans_b[l] = 1 (W_l [K_l, K_{l-1}]) else W_l ([K_{l-1}, K_l]), B_l [K_l] or [1, K_l]; rows stream "
     "through all layers in cache-sized tiles. float32, CPU only. Written by "
     "optimizer/dense_chain_fusion.cc (Gemm or MatMul + Add layers, each with an optional activation), "
     "from runtime/session.cc (CPU-only sessions, >= 2 layers) and training/training_graph.cc "
     "(cpu_fusions, >= 1 layer)."},
    {"DenseChainGrad", "dY, X, W_1, B_1, ...", "dX?, dW_1?, dB_1?, ...",
     "activations: strings (required); trans_b: ints (1 per layer)",
     "The gradients of DenseChain(X, W_1, B_1, ...) given dY [M, K_n]: forward activations are "
     "recomputed tile by tile, dW_l/dB_l are summed in double and written in W_l's/B_l's own shape; "
     "any output may be omitted. float32, CPU only. Written by training/rules/linear.cc (DenseChain's "
     "gradient rule, with the chain's attributes); optimizer/dense_chain_loss_fusion.cc may fold it "
     "into DenseChainMseGrad."},
    {"DenseChainMseGrad", "X, T, W_1, B_1, ...", "loss, dX?, dW_1?, dB_1?, ...",
     "activations: strings (required); trans_b: ints (1 per layer); reduction: string (\"mean\"; "
     "mean or sum)",
     "With Y = DenseChain(X, W_1, B_1, ...): loss = sum((Y - T)^2), divided by Y's element count for "
     "mean (a float32 scalar), and the DenseChainGrad outputs for dY = 2 (Y - T) (/ count for mean), "
     "in one pass without storing Y. float32, CPU only. Written by optimizer/dense_chain_loss_fusion.cc "
     "(called by training/training_graph.cc), replacing DenseChain + MSELoss + its ScalarLike(1) seed "
     "+ MSELossGrad + DenseChainGrad."},
    {"Copy", "X", "Y",
     "to: string (\"\"; \"cpu\" = host)",
     "Y = X moved to the host when to = \"cpu\", else to the device of the provider running it; a "
     "value already there is passed through as an alias, and a constant input is copied once and "
     "reused. Any element type (tensors only, not sequences or optionals), inputs on any device. "
     "Written by placement/partitioner.cc where a value changes device (run on the device side); the "
     "kernel is framework/copy_kernel.cc, registered by providers/cuda/cuda_provider.cc."},
    {"AllReduceStart", "G_1, ..., G_N, scale", "packed", "",
     "packed = [scale * G_1, ..., scale * G_N] flattened into one float32 vector, whose in-place sum "
     "across the data-parallel ranks it starts (process communicator on the CPU, NCCL on the CUDA "
     "stream) without waiting; the CPU reads scale on the host as any numeric scalar, CUDA needs a "
     "float32 scalar on the device. G_i float32. Written by training/gradient_all_reduce.cc (buckets "
     "of gradients, scale = the graph input train/grad_scale, from training/training_graph.cc)."},
    {"AllReduceWait", "packed, G_1, ..., G_N", "R_1, ..., R_N", "",
     "Waits for the sum that AllReduceStart began on packed (CUDA: makes the compute stream wait, not "
     "the host) and returns R_i = the slice of packed that G_i was packed into, reshaped like G_i (views, "
     "no copy); the G_i are read only for their float32 type and sizes. Written by "
     "training/gradient_all_reduce.cc, after the whole backward pass."},
    {"SwapLastAxes", "X", "Y", "",
     "Y = X with its last two axes exchanged, for any rank >= 2 (checked at run time). CPU only, "
     "registered for float, double, float16 and bfloat16 (the kernel copies bytes). Written by "
     "training/rules/linear.cc in the MatMul gradient when shape inference left an operand's rank "
     "unknown (a Transpose otherwise)."},
    {"ScalarLike", "like", "Y",
     "value: float (0)",
     "Y = a rank-0 scalar holding value in like's element type; only like's type is read (CUDA: a "
     "metadata-only input). CPU any numeric type; CUDA float32. Written by GradientContext::ScalarLike "
     "(training/gradient_rules.cc) for training/gradient_builder.cc's loss seed (value 1) and the rules "
     "in training/rules/elementwise.cc, linear.cc, reduction.cc and shape.cc."},
    {"SumToShape", "dY, like", "Y",
     "",
     "Y = dY summed over the dims that broadcasting added or stretched to reach dY from like's shape, "
     "shaped like `like` (dY itself when the shapes match, a reshape when only 1-sized dims differ); "
     "only like's dims are read (CUDA: metadata-only input). CPU numeric types but bool (sums in double "
     "or int64); CUDA float32. Written by GradientContext::SumToShapeOf (training/gradient_rules.cc) "
     "for the rules in training/rules/arithmetic.cc, elementwise.cc, linear.cc, nn.cc and shape.cc."},
    {"MeanScale", "g, X, Y", "Z",
     "",
     "Z = g * numel(Y) / numel(X), the 1/count of a mean reduction X -> Y; X and Y are read only for "
     "their element counts (CUDA: metadata-only inputs). CPU float, double, float16, bfloat16 (an "
     "error for empty X); CUDA float32 (scale 0 for empty X). Written by training/rules/reduction.cc "
     "(ReduceMean's gradient, before an Expand to X's shape)."},
  };
}

}  // namespace tandem_ops

const std::vector<TandemOpDecl>& TandemOps() {
  static const std::vector<TandemOpDecl> ops = [] {
    std::vector<TandemOpDecl> all = tandem_ops::GraphOps();
    for (auto part : {tandem_ops::GradientOps(), tandem_ops::LossAndOptimizerOps()})
      all.insert(all.end(), part.begin(), part.end());
    std::sort(all.begin(), all.end(), [](const TandemOpDecl& x, const TandemOpDecl& y) {
      return std::strcmp(x.name, y.name) < 0;
    });
    return all;
  }();
  return ops;
}

const TandemOpDecl* FindTandemOp(std::string_view name) {
  const auto& ops = TandemOps();
  auto it = std::lower_bound(ops.begin(), ops.end(), name,
                             [](const TandemOpDecl& op, std::string_view n) { return op.name < n; });
  return it != ops.end() && it->name == name ? &*it : nullptr;
}

}  // namespace tandem
