#include "providers/cpu/dnnl_util.h"

namespace tandem::cpu {

dnnl::engine& DnnlEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& DnnlStream() {
  // One per thread: sessions may run concurrently from several caller threads.
  thread_local dnnl::stream stream(DnnlEngine());
  return stream;
}

std::optional<dnnl::memory::data_type> ToDnnl(DataType t) {
  using dt = dnnl::memory::data_type;
  switch (t) {
    case DataType::kFloat: return dt::f32;
    case DataType::kFloat16: return dt::f16;
    case DataType::kBfloat16: return dt::bf16;
    case DataType::kInt32: return dt::s32;
    case DataType::kInt8: return dt::s8;
    case DataType::kUint8: return dt::u8;
    default: return std::nullopt;
  }
}

dnnl::memory::dims ToDnnlDims(const Dims& d) {
  if (d.empty()) return {1};
  return dnnl::memory::dims(d.begin(), d.end());
}

dnnl::memory::desc PlainDesc(const Dims& d, dnnl::memory::data_type dt) {
  dnnl::memory::dims dims = ToDnnlDims(d);
  dnnl::memory::dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
  return dnnl::memory::desc(dims, dt, strides);
}

dnnl::memory WrapTensor(const Tensor& t, const dnnl::memory::desc& md) {
  return dnnl::memory(md, DnnlEngine(), const_cast<void*>(t.raw()));
}

}  // namespace tandem::cpu
