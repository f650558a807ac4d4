// The ai.tandem losses, their gradients and the optimizer updates (training/losses.cc,
// training/rules/loss.cc, training/training_graph.cc).
#include "ops/tandem_op_groups.h"

namespace tandem::tandem_ops {

std::vector<TandemOpDecl> LossAndOptimizerOps() {
  return {
    {"BCEWithLogitsLoss", "x, target", "loss",
     "reduction: string (mean)",
     "Per element l = max(x, 0) - x*t + log1p(exp(-|x|)) (computed in double), then averaged over numel "
     "(reduction mean) or summed to a scalar (sum), or returned per element (none); x and target must be both "
     "float or both double and of the same shape (no broadcasting). CPU kernel only (no CUDA kernel). Written "
     "by training/losses.cc (AddLoss, reduction mean or sum)."},
    {"BCEWithLogitsLossGrad", "dY?, x, target", "dX, dT?",
     "reduction: string (mean)",
     "dX = (sigmoid(x) - t) * dY' and dT = -x * dY', where dY' = dY / numel (mean), dY (sum; dY a scalar) or "
     "dY[i] (none; dY of x's shape); without dY both are zero. float or double (dY, x, target of one type, "
     "same shape), computed in double, CPU only. Written by training/rules/loss.cc as BCEWithLogitsLoss's "
     "gradient (reduction copied; dT output only when the target needs a gradient)."},
    {"MSELoss", "x, target", "loss",
     "reduction: string (mean)",
     "Per element (x - t)^2, averaged over numel (reduction mean) or summed to a scalar (sum), or returned "
     "per element (none); x and target of one type and the same shape (no broadcasting). CPU: float or "
     "double (sum in double); CUDA: float32 only. Written by training/losses.cc (AddLoss, mse, mean or sum); "
     "optimizer/dense_chain_loss_fusion.cc may fold it with MSELossGrad and a DenseChain into "
     "DenseChainMseGrad."},
    {"MSELossGrad", "dY?, x, target", "dX, dT?",
     "reduction: string (mean)",
     "dX = 2 (x - t) * dY' and dT = -dX, where dY' = dY / numel (mean), dY (sum; dY a scalar) or dY[i] "
     "(none; dY of x's shape); without dY the CPU kernel gives zeros and the CUDA kernel refuses. CPU: float "
     "or double; CUDA: float32 only. Written by training/rules/loss.cc as MSELoss's gradient (reduction "
     "copied), and folded away by optimizer/dense_chain_loss_fusion.cc as for MSELoss."},
    {"NegativeLogLikelihoodLossGrad", "dY?, input, target, weight?", "dInput",
     "reduction: string (mean); ignore_index: int (none)",
     "Gradient of ONNX NegativeLogLikelihoodLoss w.r.t. its log-probability input [N, C, D...]: -w[t] * dY' "
     "at each row's target class, 0 elsewhere, in ignored rows and without dY; dY' = dY[row] (none), dY (sum) "
     "or dY / (N*D, or the counted labels' weight sum when weight or ignore_index is given) (mean). CPU: "
     "float/double input, int32/int64 target (out-of-range label an error); CUDA: float32 input, int64 target "
     "only. Written by training/rules/loss.cc (reduction and ignore_index copied from the forward node)."},
    {"SoftmaxCrossEntropyLossGrad", "dY?, logits, labels, weight?, dLogProb?", "dLogits",
     "reduction: string (mean); ignore_index: int (none)",
     "Gradient of ONNX SoftmaxCrossEntropyLoss w.r.t. logits [N, C, D...]: (softmax(x) - onehot(t)) * w[t] "
     "* dY' (0 for ignored rows or without dY), plus dLogProb - softmax * sum_c(dLogProb) when the log_prob "
     "output's gradient is given; dY' is normalised as in NegativeLogLikelihoodLossGrad. CPU: float/double "
     "logits (softmax in double), int32/int64 labels; CUDA: float32 logits, int64 labels only. Written by "
     "training/rules/loss.cc when either forward output has a gradient (reduction, ignore_index copied)."},
    {"SGDUpdate", "(param, grad)..., step, lr", "param'...",
     "weight_decay: float (0)",
     "p -= lr * (g + weight_decay * p), updating each param input in place and returning its buffer as the "
     "output (one output per (param, grad) group). step (checked >= 1, otherwise unused) and lr are scalars "
     "the CPU kernel (float or double) reads on the host; the CUDA kernel (float32, exactly one group, int64 "
     "step, float lr) reads them on the device. Written by training/training_graph.cc (one node per "
     "parameter, or one for all parameters when one_update_node is set)."},
    {"MomentumUpdate", "(param, grad, velocity)..., step, lr", "param'...",
     "momentum: float (0.9); dampening: float (0); nesterov: int (0); weight_decay: float (0)",
     "torch.optim.SGD with momentum: g += weight_decay*p; buf = g at step 1, else momentum*buf + "
     "(1 - dampening)*g; p -= lr * (nesterov ? g + momentum*buf : buf), with param and velocity updated in "
     "place and param's buffer returned as the output; nesterov requires momentum > 0 and dampening 0. "
     "step (>= 1) and lr are read on the host by the CPU kernel (float or double, several groups allowed) and "
     "on the device by the CUDA kernel (float32, one group, int64 step, float lr). Written by "
     "training/training_graph.cc, which never sets dampening."},
    {"AdamUpdate", "(param, grad, m, v)..., step, lr", "param'...",
     "beta1: float (0.9); beta2: float (0.999); epsilon: float (1e-8); weight_decay: float (0)",
     "torch.optim.Adam with L2 decay: g += weight_decay*p; m += (1-beta1)(g - m); v = beta2*v + (1-beta2)g^2; "
     "p -= lr/(1 - beta1^step) * m / (sqrt(v)/sqrt(1 - beta2^step) + epsilon), with param, m, v updated in "
     "place and param's buffer returned as the output; beta1, beta2 must lie in [0, 1). step (>= 1) and lr "
     "are read on the host by the CPU kernel (float or double, several groups allowed) and on the device by "
     "the CUDA kernel (float32, one group, int64 step, float lr). Written by training/training_graph.cc."},
    {"AdamWUpdate", "(param, grad, m, v)..., step, lr", "param'...",
     "beta1: float (0.9); beta2: float (0.999); epsilon: float (1e-8); weight_decay: float (0.01)",
     "torch.optim.AdamW: p *= 1 - lr*weight_decay first (decoupled decay, g unchanged), then the Adam step "
     "of AdamUpdate; param, m, v updated in place and param's buffer returned as the output. step (>= 1) and "
     "lr are read on the host by the CPU kernel (float or double, several groups allowed) and on the device "
     "by the CUDA kernel (float32, one group, int64 step, float lr). Written by training/training_graph.cc, "
     "which always sets weight_decay (0 by default)."},
    {"GlobalNormClip", "g..., max_norm?", "g'..., total_norm?",
     "max_norm: float (none: then the last input)",
     "torch.nn.utils.clip_grad_norm_: norm = sqrt(sum of every g^2) (in double), g' = g * min(1, max_norm / "
     "(norm + 1e-6)), outputs aliasing the inputs when nothing is clipped; the optional extra output is the "
     "unclipped norm as a scalar of the gradients' type. max_norm (> 0) comes from the attribute, else from "
     "a scalar last input read on the host; gradients float or double, all one type; CPU kernel only. "
     "Written by training/training_graph.cc (max_norm attribute) when the optimizer's clip_norm > 0."},
  };
}

}  // namespace tandem::tandem_ops
