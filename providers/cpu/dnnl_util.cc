#include "providers/cpu/dnnl_util.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
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

namespace {

// The source layout oneDNN picks for a representative convolution (64 -> 64 channels,
// 3x3 on 28x28, batch 1) left free to choose.
int OneDnnPreferredBlock() {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  try {
    const dnnl::memory::desc x({1, 64, 28, 28}, dt::f32, tag::any), w({64, 64, 3, 3}, dt::f32, tag::any);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                      x, w, x, {1, 1}, {1, 1}, {1, 1});
    const auto blocking = dnnl::convolution_forward::primitive_desc(d, DnnlEngine()).src_desc().data.format_desc.blocking;
    if (blocking.inner_nblks == 1 && blocking.inner_idxs[0] == 1 &&
        (blocking.inner_blks[0] == 8 || blocking.inner_blks[0] == 16))  // the blocks BlockedDesc describes
      return static_cast<int>(blocking.inner_blks[0]);
    if (blocking.inner_nblks == 0 && blocking.strides[1] == 1) return kChannelsLast;
  } catch (const dnnl::error&) {
  }
  return ChannelBlock();
}

}  // namespace

int ConvChannelBlock() {
  static const int preferred = OneDnnPreferredBlock();
  const char* env = std::getenv("TANDEM_CPU_CONV_LAYOUT");
  if (!env || !*env) return preferred;
  const std::string v = env;
  if (v == "nhwc") return kChannelsLast;
  if (v == "nChw16c") return 16;
  if (v == "nChw8c") return 8;
  if (v == "nchw") return 0;
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true)) {
    std::fprintf(stderr, "tandem: TANDEM_CPU_CONV_LAYOUT=%s is not nhwc, nChw16c, nChw8c or nchw; ignored\n",
                 env);
  }
  return preferred;
}

Dims BlockedDims(const Dims& logical, int block) {
  const int64_t b = block == kChannelsLast ? logical[1] : block;
  Dims d = logical;
  d[1] = block == kChannelsLast ? 1 : d[1] / b;
  d.push_back(b);
  return d;
}

absl::StatusOr<Tensor> LogicalView(const Tensor& blocked, int block, int min_rank) {
  const bool ok = blocked.rank() >= std::max(min_rank, 2) + 1 &&
                  (block == kChannelsLast ? blocked.dim(1) == 1 : block > 0 && blocked.dims().back() == block);
  if (!ok)
    return absl::InvalidArgumentError(
        "expected a channel-blocked tensor [N, C/B, spatial..., B] with " +
        (block == kChannelsLast ? std::string("one block of all channels") : "B = " + std::to_string(block)) +
        " and at least " + std::to_string(min_rank) + " logical dimensions, got shape " +
        DimsToString(blocked.dims()));
  Dims d(blocked.dims().begin(), blocked.dims().end() - 1);
  d[1] *= blocked.dims().back();
  return blocked.Reshaped(d);
}

dnnl::memory::desc BlockedDesc(const Dims& logical, int block, dnnl::memory::data_type dt) {
  using ft = dnnl::memory::format_tag;
  const size_t r = logical.size();
  ft tag;
  if (block == kChannelsLast) {
    tag = r == 3 ? ft::acb : r == 4 ? ft::acdb : ft::acdeb;
  } else {
    const bool b16 = block == 16;
    tag = r == 3   ? (b16 ? ft::aBc16b : ft::aBc8b)
          : r == 4 ? (b16 ? ft::aBcd16b : ft::aBcd8b)
                   : (b16 ? ft::aBcde16b : ft::aBcde8b);
  }
  return dnnl::memory::desc(ToDnnlDims(logical), dt, tag);
}

dnnl::memory WrapTensor(const Tensor& t, const dnnl::memory::desc& md) {
  return dnnl::memory(md, DnnlEngine(), const_cast<void*>(t.raw()));
}

dnnl::memory UnboundMemory(const dnnl::memory::desc& md) {
  return dnnl::memory(md, DnnlEngine(), DNNL_MEMORY_NONE);
}

absl::Status Sgemm(char trans_a, char trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  // sgemm wants leading dims of 1 or more, also where a dimension is 0
  const dnnl_status_t s = dnnl_sgemm(trans_a, trans_b, m, n, k, alpha, a, std::max<int64_t>(lda, 1), b,
                                     std::max<int64_t>(ldb, 1), beta, c, std::max<int64_t>(ldc, 1));
  return s == dnnl_success ? absl::OkStatus()
                           : absl::InternalError("oneDNN sgemm failed (status " + std::to_string(s) + ")");
}

}  // namespace tandem::cpu
