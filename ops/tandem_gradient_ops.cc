// The ai.tandem *Grad ops: what the gradient rules (training/rules/) write for the
// forward ops whose gradient is not a composition of ONNX ops.
#include "ops/tandem_op_groups.h"

namespace tandem::tandem_ops {

std::vector<TandemOpDecl> GradientOps() {
  return {
    {"AbsGrad", "dY, X", "dX", "",
     "dX = dY * sign(X) (0 where X == 0): the gradient of Abs(X); dY and X must agree in shape and type. "
     "Float, double, float16, bfloat16 (math in float, double for double), CPU only. "
     "Written by training/rules/elementwise.cc."},
    {"ReluGrad", "dY, Y", "dX", "",
     "dX = dY where Y > 0, else 0, with Y the output of the forward Relu. CPU: float, double, float16, bfloat16, "
     "same shapes; CUDA: float32, numpy broadcasting. Written by training/rules/activation.cc "
     "(optimizer/activation_fusion.cc may fold it into MaxPoolGrad/ConvGrad/ConvTransposeGrad as relu_mask)."},
    {"SigmoidGrad", "dY, Y", "dX", "",
     "dX = dY * Y * (1 - Y), with Y the output of the forward Sigmoid. CPU: float, double, float16, bfloat16, "
     "same shapes; CUDA: float32, numpy broadcasting. Written by training/rules/elementwise.cc."},
    {"TanhGrad", "dY, Y", "dX", "",
     "dX = dY * (1 - Y^2), with Y the output of the forward Tanh. CPU: float, double, float16, bfloat16, "
     "same shapes; CUDA: float32, numpy broadcasting. Written by training/rules/elementwise.cc."},
    {"FusedAttentionGrad", "dY, Q, Kt, V, mask?", "dQ, dKt, dV, dScores?",
     "scale: float (1); nan_rows_to_zero: int (0); heads_interleaved: int (0)",
     "The gradients of FusedAttention (same operands and attributes) given dY: dQ [..., S, D], dKt [..., D, L], "
     "dV [..., L, Dv] and dScores [..., S, L] (the gradient of scale * Q Kt + mask, i.e. the mask's before its "
     "broadcast is summed), each with Y's broadcast batch dims; with heads_interleaved, dQ, dK and dV in the "
     "shapes of Q [B, S, H, D], K [B, L, H, D] and V [B, L, H, Dv]. P is recomputed a block of query rows at a time, "
     "never stored. CPU float32 only. Written by training/rules/attention.cc (dScores only when the mask needs "
     "a gradient)."},
    {"GeluGrad", "dY, X", "dX", "approximate: string (\"none\")",
     "dX = dY * Gelu'(X), X the forward Gelu's input, approximate as its (\"none\": the erf form, \"tanh\"). "
     "CPU only: float32 (oneDNN eltwise backward), double, float16, bfloat16 (in double), same shapes. Written "
     "by training/rules/elementwise.cc for Gelu (ONNX and ai.tandem)."},
    {"LeakyReluGrad", "dY, X", "dX", "alpha: float (0.01)",
     "dX = X > 0 ? dY : alpha * dY, the gradient of LeakyRelu(X); the rule passes the forward alpha. "
     "CPU: float, double, float16, bfloat16, same shapes; CUDA: float32, numpy broadcasting. "
     "Written by training/rules/elementwise.cc."},
    {"EluGrad", "dY, X", "dX", "alpha: float (1.0)",
     "dX = X > 0 ? dY : alpha * exp(X) * dY, the gradient of Elu(X); the rule passes the forward alpha. "
     "Float, double, float16, bfloat16, same shapes, CPU only. Written by training/rules/elementwise.cc."},
    {"SoftmaxGrad", "dY, Y", "dX", "axis: int (-1); coerce: int (0)",
     "dX = Y * (dY - sum(dY * Y)), Y the Softmax output, summed over `axis`, or with coerce = 1 (Softmax "
     "before opset 13) over every dim from `axis` on. CPU: float types (sums in double); CUDA: float32 "
     "(cuDNN). Written by training/rules/softmax.cc with the forward axis and coerce = opset < 13."},
    {"LogSoftmaxGrad", "dY, Y", "dX", "axis: int (-1); coerce: int (0)",
     "dX = dY - exp(Y) * sum(dY), Y the LogSoftmax output, summed over `axis`, or with coerce = 1 (before "
     "opset 13) over every dim from `axis` on. CPU: float types (sums in double); CUDA: float32 (cuDNN). "
     "Written by training/rules/softmax.cc with the forward axis and coerce = opset < 13."},
    {"ConcatGrad", "dY, shape_0, shape_1, ...", "dX_0, dX_1, ...", "axis: int (0)",
     "Splits dY along `axis` into one piece per shape input (the 1-D Shape of each Concat input, read on the "
     "host), each as long as its shape there: the gradients of Concat. CPU: float types, one output per shape; "
     "CUDA: float32, writes only used outputs. Written by training/rules/shape.cc with Concat's axis."},
    {"SliceGrad", "dY, x_shape, starts, ends, axes?, steps?", "dX",
     "",
     "dX = zeros of x_shape with dY written at the elements Slice(X, starts, ends, axes, steps) selected; "
     "every input but dY is read on the host for its values. Float types on the CPU, float32 on CUDA. Written "
     "by training/rules/shape.cc (before opset 10 Slice's starts/ends/axes attributes become int64 constants)."},
    {"GatherGrad", "dY, x_shape, indices", "dX", "axis: int (0)",
     "dX = zeros of x_shape with dY scatter-added at `indices` along `axis` (repeats add up, negatives wrap): "
     "the gradient of Gather(X, indices); x_shape is read on the host, indices are int32/int64. CPU: float "
     "types, out-of-range index an error; CUDA: float32, skips it. Written by training/rules/shape.cc."},
    {"ClipGrad", "dY, X, min?, max?", "dX, dmin?, dmax?", "min: float (-inf); max: float (+inf)",
     "Routes dY to whichever of X, min, max the forward min(max(X, min), max) picked: dX = dY where "
     "min <= X <= max, else 0; dmin/dmax sum dY over the elements clipped to that bound. min/max are single "
     "values read on the host (attributes before opset 11); CPU: float types; CUDA: float32, dX only. "
     "Written by training/rules/shape.cc."},
    {"DropoutGrad", "dY, mask, ratio?, training_mode?", "dX", "",
     "dX = dY * mask / (1 - ratio) (0 when ratio >= 1) in training mode; dY unchanged when training_mode is "
     "false or absent or ratio <= 0 (ratio defaults to 0.5); both scalars read on the host. CPU: float types, "
     "mask bool or numeric; CUDA: float32, bool mask. Written by training/rules/shape.cc (opset >= 12)."},
    {"PadGrad", "dY, X, pads?, constant_value?, axes?", "dX",
     "opset: int (11); mode: string (constant); pads: ints (before opset 11; \"paddings\" before 2); "
     "value: float (0, unused)",
     "dX of X's shape (X's values unused): each dY element added to the X element Pad copied it from "
     "(reflect/edge/wrap send several to one; constant padding sends none); pads and axes are read on the "
     "host. Float and double, CPU only. Written by training/rules/shape.cc for non-constant modes, with "
     "Pad's inputs and attributes plus opset."},
    {"ResizeGrad", "dY, X, roi?, scales?, sizes?", "dX",
     "opset: int (11); upsample: int (0); mode: string (nearest); coordinate_transformation_mode: string "
     "(half_pixel); nearest_mode: string (round_prefer_floor); cubic_coeff_a: float (-0.75); exclude_outside: "
     "int (0); extrapolation_value: float (0, unused); antialias: int (0); axes: ints (all); "
     "keep_aspect_ratio_policy: string (stretch); scales: floats (Upsample before opset 9)",
     "dX of X's shape: dY sent back through the forward Resize/Upsample's interpolation taps (extrapolated "
     "points send nothing); the inputs after X are the forward's, read on the host (scales third for Resize-10 "
     "and Upsample-9). Float and double, CPU only. Written by training/rules/shape.cc with the forward "
     "attributes plus opset and upsample."},
    {"ConvGrad", "dY, X, W", "dX?, dW?, dB?",
     "auto_pad: string (NOTSET); dilations: ints (1s); group: int (1); kernel_shape: ints (W's); "
     "pads: ints (0s); strides: ints (1s); relu_mask: int (0)",
     "The gradients of Conv(X, W, B) given dY: dX = backward-data(dY, W), dW = backward-weights(X, dY), "
     "dB = dY summed over batch and space, each only if used; relu_mask = 1 also zeroes dX where X <= 0. "
     "CPU: float, double (oneDNN for float32); CUDA: float32 (cuDNN). Written by training/rules/nn.cc "
     "with all of Conv's attributes."},
    {"ConvTransposeGrad", "dY, X, W", "dX?, dW?, dB?",
     "auto_pad: string (NOTSET); dilations: ints (1s); group: int (1); kernel_shape: ints (W's); "
     "output_padding: ints (0s); output_shape: ints (none); pads: ints (0s); strides: ints (1s); "
     "relu_mask: int (0)",
     "The gradients of ConvTranspose(X, W, B) given dY: dX = the convolution of dY by W, dW = that "
     "convolution's weight gradient from dY and X, dB = dY summed over batch and space, each only if used; "
     "relu_mask = 1 also zeroes dX where X <= 0. Float and double (oneDNN for float32), CPU only. Written by "
     "training/rules/nn.cc with all of ConvTranspose's attributes."},
    {"MaxPoolGrad", "dY, X", "dX",
     "auto_pad: string (NOTSET); ceil_mode: int (0); dilations: ints (1s); kernel_shape: ints (required); "
     "pads: ints (0s); strides: ints (1s); relu_mask: int (0)",
     "dX = each dY element added at the maximum of its window in X (the windows are recomputed from X), "
     "the gradient of MaxPool's Y; relu_mask = 1 also zeroes dX where X <= 0. CPU: float, double; CUDA: "
     "float32 (cuDNN). Written by training/rules/nn.cc with MaxPool's attributes."},
    {"AveragePoolGrad", "dY, X", "dX",
     "auto_pad: string (NOTSET); ceil_mode: int (0); count_include_pad: int (0); dilations: ints (1s); "
     "kernel_shape: ints (required); pads: ints (0s); strides: ints (1s)",
     "dX = each dY element spread evenly over the input positions of its window, divided by their count, or "
     "with count_include_pad = 1 by the positions inside input + pads: the gradient of AveragePool. "
     "CPU: float, double; CUDA: float32 (cuDNN). Written by training/rules/nn.cc with AveragePool's attributes."},
    {"GlobalAveragePoolGrad", "dY, X", "dX", "",
     "dX[n, c, ...] = dY[n, c] / (X's spatial size), the gradient of GlobalAveragePool; only X's shape "
     "is used. CPU: float, double; CUDA: float32 (cuDNN). Written by training/rules/nn.cc."},
    {"BatchNormalizationGrad", "dY, X, scale, mean?, var?", "dX?, dScale?, dB?",
     "epsilon: float (1e-5); training_mode: int (1; CUDA 0)",
     "The gradients of BatchNormalization per channel: dB = sum(dY), dScale = sum(dY * xhat); dX through "
     "X's batch statistics (recomputed) when training_mode = 1, else scale * dY / sqrt(var + epsilon) with the "
     "given mean/var. CPU: float, double (oneDNN for float32); CUDA: float32. Written by training/rules/nn.cc "
     "(mean/var passed only outside training)."},
    {"LayerNormalizationGrad", "dY, X, scale", "dX?, dScale?, dB?",
     "axis: int (-1); epsilon: float (1e-5)",
     "The gradients of LayerNormalization(X, scale, B) over dims axis..: statistics recomputed from X, dScale "
     "= sum(dY * xhat) and dB = sum(dY) over the leading dims, shaped X.dims[axis:] (scale may broadcast). "
     "CPU: float, double (oneDNN for float32); CUDA: float32. Written by training/rules/nn.cc, which sums "
     "dScale/dB to the shapes of scale and B."},
    {"LSTMGrad", "X, W, R, B?, initial_h?, initial_c?, dY?, dY_h?, dY_c?",
     "dX?, dW?, dR?, dB?, d_initial_h?, d_initial_c?",
     "hidden_size: int (0, must be > 0); direction: string (forward); layout: int (0)",
     "The gradients of LSTM (default activations, no peepholes): recomputes the forward pass per direction, "
     "then backpropagates through time; absent states and bias count as zeros. Float and double, CPU only. "
     "Written by training/rules/recurrent.cc, which refuses sequence_lens, P, clip, other activations and "
     "input_forget."},
    {"GRUGrad", "X, W, R, B?, initial_h?, dY?, dY_h?", "dX?, dW?, dR?, dB?, d_initial_h?",
     "hidden_size: int (0, must be > 0); direction: string (forward); layout: int (0); "
     "linear_before_reset: int (0)",
     "The gradients of GRU (default activations): recomputes the forward pass per direction, then "
     "backpropagates through time; absent states and bias count as zeros. Float and double, CPU only. "
     "Written by training/rules/recurrent.cc, which refuses sequence_lens, clip and other activations."},
  };
}

}  // namespace tandem::tandem_ops
