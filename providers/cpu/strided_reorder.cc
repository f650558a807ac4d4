#include "providers/cpu/strided_reorder.h"

#include <string>

#include "providers/cpu/kernel_util.h"

namespace tandem::cpu {

absl::StatusOr<bool> StridedReorder::Copy(const void* src, const Dims& dims, const std::vector<int64_t>& strides,
                                          int width, void* dst) {
  using dt = dnnl::memory::data_type;
  const dt type = width == 1 ? dt::u8 : width == 4 ? dt::s32 : dt::undef;
  if (type == dt::undef || NumElements(dims) < kMinElements) return false;
  Dims d;
  std::vector<int64_t> s;
  CoalesceStrided(dims, strides, &d, &s);
  if (d.size() < 2 || d.size() > DNNL_MAX_NDIMS || s.back() == 1) return false;
  for (int64_t v : s)
    if (v <= 0) return false;
  try {
    auto key = std::make_tuple(d, s, width);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      const dnnl::memory::desc from(ToDnnlDims(d), type, dnnl::memory::dims(s.begin(), s.end()));
      const dnnl::memory::desc to = PlainDesc(d, type);
      Entry e{dnnl::reorder(dnnl::reorder::primitive_desc(DnnlEngine(), from, DnnlEngine(), to)),
              UnboundMemory(from), UnboundMemory(to)};
      it = cache_.emplace(std::move(key), std::move(e)).first;
    }
    Entry& e = it->second;
    PointAt(e.from, src);
    PointAt(e.to, dst);
    e.prim.execute(DnnlStream(), e.from, e.to);
    DnnlStream().wait();
  } catch (const dnnl::error& e) {
    return absl::InternalError(std::string("oneDNN reorder (a transpose of ") + DimsToString(dims) + ") failed: " +
                               e.what());
  }
  return true;
}

}  // namespace tandem::cpu
