// The activation that the fusions fold into FusedConv / FusedGemm / FusedMatMul nodes
// (domain ai.tandem; attributes written by ops/fused_activation_attributes.h): attribute
// `activation` names the ONNX op (Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSwish,
// HardSigmoid, Gelu, Mish, Swish), `activation_alpha` / `activation_beta` carry its
// parameters (LeakyRelu's and Swish's alpha, HardSigmoid's alpha and beta, Clip's bounds),
// `activation_approximate` Gelu's form ("tanh", else the erf form).
// Kernels append it as oneDNN eltwise post-ops (HardSigmoid as two: linear, then clip to
// [0, 1]); their reference paths call Apply, which matches the standalone kernels.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include <dnnl.hpp>

#include "graph/node.h"
#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/microkernels/tanh_arrays.h"

namespace tandem::cpu {

class FusedActivation {
 public:
  // `attribute`: the attribute naming the op ("activation"; FusedConv's residual sum has
  // "sum_activation", providers/cpu/rewrites/conv_sum.h), with "<attribute>_alpha" / "_beta".
  explicit FusedActivation(const Node& node, const std::string& attribute = "activation")
      : name_(node.attr_string(attribute, "")),
        alpha_(node.attr_float(attribute + "_alpha", 0.f)),
        beta_(node.attr_float(attribute + "_beta", 0.f)) {
    if (name_ == "Relu") alg_ = dnnl::algorithm::eltwise_relu, alpha_ = 0.f;
    else if (name_ == "LeakyRelu") alg_ = dnnl::algorithm::eltwise_relu;
    else if (name_ == "Clip") alg_ = dnnl::algorithm::eltwise_clip_v2;
    else if (name_ == "Sigmoid") alg_ = dnnl::algorithm::eltwise_logistic;
    else if (name_ == "Tanh") alg_ = dnnl::algorithm::eltwise_tanh;
    else if (name_ == "Swish") {  // x * sigmoid(alpha * x); alpha 1 (SiLU) unless given, as ONNX's Swish
      alg_ = dnnl::algorithm::eltwise_swish;
      alpha_ = node.attr_float(attribute + "_alpha", 1.f);
    }
    else if (name_ == "HardSwish") {  // x * relu6(x + 3) / 6
      alg_ = dnnl::algorithm::eltwise_hardswish;
      alpha_ = kDnnlHardSwishAlpha, beta_ = kDnnlHardSwishBeta;
    }
    else if (name_ == "HardSigmoid") alg_ = dnnl::algorithm::eltwise_linear;  // then clip to [0, 1]
    else if (name_ == "Gelu")  // the erf form unless activation_approximate is "tanh"
      alg_ = node.attr_string(attribute + "_approximate", "none") == "tanh" ? dnnl::algorithm::eltwise_gelu_tanh
                                                                              : dnnl::algorithm::eltwise_gelu_erf;
    else if (name_ == "Mish") alg_ = dnnl::algorithm::eltwise_mish;  // x * tanh(softplus(x))
    else name_.clear();  // unknown: the fusion pass never emits it
  }

  bool active() const { return !name_.empty(); }
  // Swish (SiLU for alpha 1), and its alpha: kernels may run it as their own pass (swish.h).
  bool swish() const { return active() && alg_ == dnnl::algorithm::eltwise_swish; }
  float alpha() const { return alpha_; }

  // Adds the eltwise post-op (after any sum post-op already in `po`).
  void AppendTo(dnnl::post_ops& po) const {
    if (!active()) return;
    po.append_eltwise(1.f, alg_, alpha_, beta_);
    if (alg_ == dnnl::algorithm::eltwise_linear) po.append_eltwise(1.f, dnnl::algorithm::eltwise_clip_v2, 0.f, 1.f);
  }
  dnnl::primitive_attr Attr() const {
    dnnl::primitive_attr attr;
    dnnl::post_ops po;
    AppendTo(po);
    attr.set_post_ops(po);
    return attr;
  }

  // In-place on float data, for paths that do not go through oneDNN.
  void Apply(float* p, int64_t n) const {
    if (!active()) return;
    const float a = alpha_, b = beta_;
    switch (alg_) {
      case dnnl::algorithm::eltwise_relu:
        for (int64_t i = 0; i < n; ++i) p[i] = p[i] >= 0.f ? p[i] : p[i] * a;
        break;
      case dnnl::algorithm::eltwise_clip_v2:
        for (int64_t i = 0; i < n; ++i) p[i] = p[i] < a ? a : (p[i] > b ? b : p[i]);
        break;
      case dnnl::algorithm::eltwise_logistic:
        for (int64_t i = 0; i < n; ++i) p[i] = 1.f / (1.f + std::exp(-p[i]));
        break;
      case dnnl::algorithm::eltwise_swish:
        for (int64_t i = 0; i < n; ++i) p[i] = p[i] / (1.f + std::exp(-a * p[i]));
        break;
      case dnnl::algorithm::eltwise_hardswish:
        for (int64_t i = 0; i < n; ++i) p[i] *= Clip01(p[i] / 6.f + 0.5f);
        break;
      case dnnl::algorithm::eltwise_linear:  // HardSigmoid
        for (int64_t i = 0; i < n; ++i) p[i] = Clip01(a * p[i] + b);
        break;
      case dnnl::algorithm::eltwise_mish:  // exp's overflow to inf still gives tanh(inf) = 1
        for (int64_t i = 0; i < n; ++i) p[i] *= std::tanh(std::log1p(std::exp(p[i])));
        break;
      case dnnl::algorithm::eltwise_gelu_erf:
        for (int64_t i = 0; i < n; ++i) p[i] = 0.5f * p[i] * (1.f + std::erf(p[i] * 0.70710678f));
        break;
      case dnnl::algorithm::eltwise_gelu_tanh: tanh_arrays::GeluTanh(p, p, n); break;
      default: tanh_arrays::Tanh(p, p, n); break;
    }
  }

 private:
  static float Clip01(float v) { return v < 0.f ? 0.f : (v > 1.f ? 1.f : v); }

  std::string name_;
  dnnl::algorithm alg_ = dnnl::algorithm::eltwise_relu;
  float alpha_, beta_;
};

}  // namespace tandem::cpu
