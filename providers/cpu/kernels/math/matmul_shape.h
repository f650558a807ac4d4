// MatMul's shapes (numpy semantics): 1-D operands promoted (A to a row, B to a column)
// and the batch dims broadcast. Shared by the float and the integer products.
#pragma once
#include "absl/status/statusor.h"
#include "graph/tensor.h"
#include "providers/cpu/kernel_util.h"

namespace tandem::cpu {

struct MatMulShape {
  Dims batch;           // broadcast batch dims of the output
  Dims a_batch, b_batch;  // batch dims of each operand (after 1-D promotion)
  int64_t m = 1, k = 1, n = 1;
  Dims out;
};

// The product of A [..., m, k] and B [..., k, n] (after promotion), or why they do not chain.
inline absl::StatusOr<MatMulShape> MatMulShapes(const Dims& a, const Dims& b) {
  if (a.empty() || b.empty())
    return absl::InvalidArgumentError("MatMul operands must have rank >= 1, got " +
                                      DimsToString(a) + " and " + DimsToString(b));
  Dims a2 = a.size() == 1 ? Dims{1, a[0]} : a;
  Dims b2 = b.size() == 1 ? Dims{b[0], 1} : b;
  MatMulShape s;
  s.m = a2[a2.size() - 2];
  s.k = a2.back();
  s.n = b2.back();
  if (b2[b2.size() - 2] != s.k)
    return absl::InvalidArgumentError("inner dimensions differ: A is " + DimsToString(a) +
                                      ", B is " + DimsToString(b));
  s.a_batch.assign(a2.begin(), a2.end() - 2);
  s.b_batch.assign(b2.begin(), b2.end() - 2);
  auto batch = BroadcastShapes(s.a_batch, s.b_batch);
  if (!batch.ok()) return batch.status();
  s.batch = *batch;
  s.out = s.batch;
  if (a.size() > 1) s.out.push_back(s.m);
  if (b.size() > 1) s.out.push_back(s.n);
  return s;
}

}  // namespace tandem::cpu
