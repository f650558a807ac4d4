#include "providers/cpu/dnnl_util.h"

#include <algorithm>
#include <string>

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

int ChannelBlock() {
  const int isa = static_cast<int>(dnnl::get_effective_cpu_isa());
  return (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core ? 16 : 8;
}

Dims BlockedDims(const Dims& logical, int block) {
  Dims d = logical;
  d[1] /= block;
  d.push_back(block);
  return d;
}

absl::StatusOr<Tensor> LogicalView(const Tensor& blocked, int block, int min_rank) {
  if (block <= 0 || blocked.rank() < std::max(min_rank, 2) + 1 || blocked.dims().back() != block)
    return absl::InvalidArgumentError(
        "expected a channel-blocked tensor [N, C/B, spatial..., B] with B = " +
        std::to_string(block) + " and at least " + std::to_string(min_rank) +
        " logical dimensions, got shape " + DimsToString(blocked.dims()));
  Dims d(blocked.dims().begin(), blocked.dims().end() - 1);
  d[1] *= block;
  return blocked.Reshaped(d);
}

dnnl::memory::desc BlockedDesc(const Dims& logical, int block, dnnl::memory::data_type dt) {
  using ft = dnnl::memory::format_tag;
  const bool b16 = block == 16;
  const ft tag = logical.size() == 3   ? (b16 ? ft::aBc16b : ft::aBc8b)
                 : logical.size() == 4 ? (b16 ? ft::aBcd16b : ft::aBcd8b)
                                       : (b16 ? ft::aBcde16b : ft::aBcde8b);
  return dnnl::memory::desc(ToDnnlDims(logical), dt, tag);
}

dnnl::memory WrapTensor(const Tensor& t, const dnnl::memory::desc& md) {
  return dnnl::memory(md, DnnlEngine(), const_cast<void*>(t.raw()));
}

}  // namespace tandem::cpu
