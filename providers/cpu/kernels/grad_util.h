// Helpers shared by the ai.tandem backward kernels (conv_grad.cc, pool_grad.cc,
// norm_grad.cc): oneDNN layout plumbing between plain tensors and the
// layouts a primitive picked.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "framework/kernel_registry.h"
#include "providers/cpu/dnnl_util.h"

namespace tandem::cpu::grad {

// One primitive argument: the plain descriptor of the tensor, the descriptor the primitive
// wants, and (when they differ) a buffer plus the reorder between them.
struct DnnlPort {
  dnnl::memory::desc plain, prim;
  dnnl::memory buf;
  std::optional<dnnl::reorder> re;

  // An input: reorders plain -> prim before use.
  void InitIn(const dnnl::memory::desc& p, const dnnl::memory::desc& want) {
    plain = p;
    prim = want;
    if (want != p) {
      buf = dnnl::memory(want, DnnlEngine());
      re = dnnl::reorder(dnnl::reorder::primitive_desc(DnnlEngine(), p, DnnlEngine(), want));
    }
  }
  // An output: the primitive writes prim, reordered into the plain tensor afterwards.
  void InitOut(const dnnl::memory::desc& p, const dnnl::memory::desc& want) {
    plain = p;
    prim = want;
    if (want != p) {
      buf = dnnl::memory(want, DnnlEngine());
      re = dnnl::reorder(dnnl::reorder::primitive_desc(DnnlEngine(), want, DnnlEngine(), p));
    }
  }
  dnnl::memory In(const Tensor& t) {
    dnnl::memory m = WrapTensor(t, plain);
    if (!re) return m;
    re->execute(DnnlStream(), m, buf);
    return buf;
  }
  dnnl::memory Out(Tensor& t) { return re ? buf : WrapTensor(t, plain); }
  void Finish(Tensor& t) {
    if (!re) return;
    dnnl::memory dst = WrapTensor(t, plain);
    re->execute(DnnlStream(), buf, dst);
  }
};

inline dnnl::memory::dims ToDims(const std::vector<int64_t>& v) {
  return dnnl::memory::dims(v.begin(), v.end());
}

// oneDNN counts dilation from 0 (ONNX from 1).
inline dnnl::memory::dims DnnlDilations(const std::vector<int64_t>& v) {
  dnnl::memory::dims r(v.begin(), v.end());
  for (auto& x : r) x -= 1;
  return r;
}


}  // namespace tandem::cpu::grad
