// Exact int32 products of 8-bit matrices with zero points, as MatMulInteger defines them:
//   Y[r, n] = sum_k (A[r, k] - a_zp[r]) * (B[k, n] - b_zp[n])
// for A [rows, K] and B [K, N], each uint8 or int8, a zero point per row of A or one for
// all, per column of B or one. The product runs on P = A B' (B' = B as int8: uint8 shifted
// down by 128, its zero point too) and the zero points enter afterwards through A's row
// sums and B's column sums:
//   Y = P - a_zp colsum(B') - rowsum(A) b_zp' + K a_zp b_zp'   (int32, wrapping as int32 does)
// P comes from oneDNN's int8 matmul where the CPU has 8-bit dot products that never
// saturate (VNNI, AMX: oneDNN's effective ISA, so ONEDNN_MAX_CPU_ISA caps it), else from
// float32 sgemm over blocks of 512 along K, each block's sum an integer below 2^24 and so
// exact, added up in int32 (without VNNI oneDNN's u8 x s8 pairs saturate at 16 bits).
// A constant B is converted, summed and laid out once.
#pragma once
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "graph/tensor.h"
#include "providers/cpu/dnnl_util.h"

namespace tandem::cpu {

// Whether oneDNN's effective ISA has 8-bit dot products without intermediate saturation.
bool Int8DotProductsExact();

// A zero point of an 8-bit operand of type `operand`, as Int8MatMul takes it: none (0), one
// value, or `count` values in a rank-1 tensor (one per `per`: "row" of A, "column" of B);
// `what` names the input in errors.
absl::Status Int8ZeroPoints(const Tensor* zp, DataType operand, int64_t count, const char* what, const char* per,
                            std::vector<int32_t>* out);

class Int8MatMul {
 public:
  // B [K, N], uint8 or int8; `constant`: the same values on every call (kept after the first).
  // b_zp: one value or N.
  absl::Status SetB(const Tensor& b, const std::vector<int32_t>& b_zp, bool constant);
  // y [rows, N] from A's rows [rows, K] (uint8 or int8 data of `a_type`) and a_zp (one value,
  // or one per row: a_zp[r % a_zp.size()]).
  absl::Status Run(const void* a, DataType a_type, int64_t rows, const std::vector<int32_t>& a_zp, int32_t* y);

 private:
  absl::Status Product(const void* a, DataType a_type, int64_t rows, int32_t* p);
  struct Primitive {
    dnnl::matmul prim;
    dnnl::memory::desc a_md, b_md, y_md;
    dnnl::memory b_packed;  // a constant B' in the layout prim reads (null: B' as stored)
  };

  bool constant_ = false, ready_ = false;
  bool use_onednn_ = false;
  int64_t K_ = 0, N_ = 0;
  std::vector<int8_t> b8_;                // B' [K, N]
  std::vector<uint32_t> b_colsum_;        // colsum(B') [N], as uint32 (int32's wrapping)
  std::vector<uint32_t> b_zp_columns_;    // b_zp' per column [N]
  bool b_zp_zero_ = true;                 // every b_zp' is 0 (quantize_dynamic's int8 weights)
  std::vector<float> b_float_;        // B' as float (the sgemm path)
  ShapeCache<Primitive> primitives_;  // per (rows, A's type)
};

}  // namespace tandem::cpu
