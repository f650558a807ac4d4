// Multi-head views for the attention-family kernels (attention.cc, transformer_ops.cc,
// recurrent_state_ops.cc): element (b, h, s, d) of a 4-D [B, H, S, D] tensor, or of a 3-D
// [B, S, H*D] one split into H heads, without moving data.
#pragma once
#include <string>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace tandem::cpu {

struct HeadView {
  int64_t batch = 0, heads = 0, seq = 0, dim = 0;
  int64_t sb = 0, sh = 0, ss = 0;  // element strides; d is contiguous
  int64_t at(int64_t b, int64_t h, int64_t s) const { return b * sb + h * sh + s * ss; }
};

// `t` as [B, H, S, D]: a 4-D tensor as it is, a 3-D one split into `heads` heads (the
// value of attribute `heads_attr`, which errors name).
inline absl::StatusOr<HeadView> ViewHeads(const Tensor& t, const char* name, int64_t heads,
                                          const char* heads_attr) {
  HeadView v;
  if (t.rank() == 4) {
    v = {t.dim(0), t.dim(1), t.dim(2), t.dim(3), 0, 0, 0};
    v.ss = v.dim;
    v.sh = v.seq * v.dim;
    v.sb = v.heads * v.sh;
    return v;
  }
  if (t.rank() != 3)
    return absl::InvalidArgumentError(std::string("input ") + name + " must be 3-D or 4-D, got " +
                                      DimsToString(t.dims()));
  if (heads <= 0 || t.dim(2) % heads != 0)
    return absl::InvalidArgumentError(std::string("3-D input ") + name + " " + DimsToString(t.dims()) +
                                      " needs attribute " + heads_attr + " > 0 dividing its last dim, got " +
                                      std::to_string(heads));
  v = {t.dim(0), heads, t.dim(1), t.dim(2) / heads, 0, 0, 0};
  v.sh = v.dim;
  v.ss = v.heads * v.dim;
  v.sb = v.seq * v.ss;
  return v;
}

}  // namespace tandem::cpu
