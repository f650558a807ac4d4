#include "providers/cpu/kernels/quantization/int8_matmul.h"

#include <algorithm>
#include <string>

#include "providers/cpu/kernel_util.h"

namespace tandem::cpu {
namespace {

using dt = dnnl::memory::data_type;

// Rows of K (sgemm's block along K): 512 products of |a| <= 255 and |b'| <= 128 stay below
// 2^24, where float32 holds every integer.
constexpr int64_t kExactFloatBlock = 512;

bool Is8Bit(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

template <typename T>
void ToFloat(const T* p, int64_t n, float* out) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(p[i]);
}

template <typename T>
uint32_t RowSumOf(const T* p, int64_t n) {
  int32_t s = 0;  // |sum| <= 255 n: no overflow below 8M values a row
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += p[i];
  return static_cast<uint32_t>(s);
}

// The sum of A's values [begin, begin + n), as uint32 (int32's wrapping).
uint32_t RowSum(const void* a, DataType t, int64_t begin, int64_t n) {
  return t == DataType::kUint8 ? RowSumOf(static_cast<const uint8_t*>(a) + begin, n)
                               : RowSumOf(static_cast<const int8_t*>(a) + begin, n);
}

}  // namespace

bool Int8DotProductsExact() {
  // oneDNN's ISA values are bit sets: 0x40 marks AVX-512 VNNI (also in the bf16 and AMX
  // values), 0x400 AVX-VNNI.
  const int isa = static_cast<int>(dnnl::get_effective_cpu_isa());
  return (isa & 0x40) != 0 || (isa & 0x400) != 0;
}

absl::Status Int8ZeroPoints(const Tensor* zp, DataType operand, int64_t count, const char* what, const char* per,
                            std::vector<int32_t>* out) {
  out->assign(1, 0);
  if (!zp) return absl::OkStatus();
  if (zp->dtype() != operand) return absl::InvalidArgumentError(std::string(what) + " differs from its operand's type");
  if (zp->numel() == 1) {
    (*out)[0] = static_cast<int32_t>(zp->ElementAsInt64(0));
    return absl::OkStatus();
  }
  if (zp->rank() != 1 || zp->numel() != count)
    return absl::InvalidArgumentError(std::string(what) + " of shape " + DimsToString(zp->dims()) +
                                      " is neither a scalar nor per-" + per);
  out->resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) (*out)[i] = static_cast<int32_t>(zp->ElementAsInt64(i));
  return absl::OkStatus();
}

absl::Status Int8MatMul::SetB(const Tensor& b, const std::vector<int32_t>& b_zp, bool constant) {
  if (constant_ && ready_) return absl::OkStatus();
  if (b.rank() != 2 || !Is8Bit(b.dtype()))
    return absl::InvalidArgumentError("B must be a uint8 or int8 matrix, got " + std::string(DataTypeName(b.dtype())) +
                                      DimsToString(b.dims()));
  constant_ = constant;
  K_ = b.dim(0);
  N_ = b.dim(1);
  const bool shift = b.dtype() == DataType::kUint8;
  b8_.resize(static_cast<size_t>(K_ * N_));
  if (shift) {
    const uint8_t* p = b.data<uint8_t>();
    for (int64_t i = 0; i < K_ * N_; ++i) b8_[i] = static_cast<int8_t>(static_cast<int32_t>(p[i]) - 128);
  } else {
    std::copy(b.data<int8_t>(), b.data<int8_t>() + K_ * N_, b8_.begin());
  }
  b_zp_columns_.assign(static_cast<size_t>(N_), 0u);
  for (int64_t n = 0; n < N_; ++n) {
    const int32_t z = b_zp.empty() ? 0 : b_zp[b_zp.size() == 1 ? 0 : static_cast<size_t>(n)];
    b_zp_columns_[n] = static_cast<uint32_t>(z - (shift ? 128 : 0));
  }
  b_zp_zero_ = std::all_of(b_zp_columns_.begin(), b_zp_columns_.end(), [](uint32_t z) { return z == 0; });
  b_colsum_.assign(static_cast<size_t>(N_), 0u);
  for (int64_t k = 0; k < K_; ++k) {
    const int8_t* row = b8_.data() + k * N_;
    for (int64_t n = 0; n < N_; ++n) b_colsum_[n] += static_cast<uint32_t>(static_cast<int32_t>(row[n]));
  }
  use_onednn_ = Int8DotProductsExact();
  if (!use_onednn_) b_float_.assign(b8_.begin(), b8_.end());
  ready_ = true;
  return absl::OkStatus();
}

absl::Status Int8MatMul::Product(const void* a, DataType a_type, int64_t rows, int32_t* p) {
  if (!use_onednn_) {
    std::vector<float> af(static_cast<size_t>(rows * K_)), block(static_cast<size_t>(rows * N_));
    ParallelBlocks(rows * K_, [&](int64_t begin, int64_t end) {
      if (a_type == DataType::kUint8) ToFloat(static_cast<const uint8_t*>(a) + begin, end - begin, af.data() + begin);
      else ToFloat(static_cast<const int8_t*>(a) + begin, end - begin, af.data() + begin);
    });
    for (int64_t k0 = 0; k0 < K_; k0 += kExactFloatBlock) {
      const int64_t kc = std::min(kExactFloatBlock, K_ - k0);
      absl::Status st = Sgemm('N', 'N', rows, N_, kc, 1.f, af.data() + k0, K_, b_float_.data() + k0 * N_, N_, 0.f,
                              block.data(), N_);
      if (!st.ok()) return st;
      const bool first = k0 == 0;
      ParallelFor(rows * N_, [&](int64_t i) {
        const int32_t v = static_cast<int32_t>(block[i]);  // an exact integer
        p[i] = first ? v : static_cast<int32_t>(static_cast<uint32_t>(p[i]) + static_cast<uint32_t>(v));
      });
    }
    return absl::OkStatus();
  }
  try {
    Primitive& e = primitives_.Get({{rows, static_cast<int64_t>(a_type)}}, [&] {
      Primitive n;
      auto& eng = DnnlEngine();
      n.a_md = dnnl::memory::desc({rows, K_}, a_type == DataType::kUint8 ? dt::u8 : dt::s8, dnnl::memory::format_tag::ab);
      n.b_md = dnnl::memory::desc({K_, N_}, dt::s8, dnnl::memory::format_tag::ab);
      n.y_md = dnnl::memory::desc({rows, N_}, dt::s32, dnnl::memory::format_tag::ab);
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(n.a_md, constant_ ? AnyLayout(n.b_md) : n.b_md, n.y_md),
                                            eng);
      n.prim = dnnl::matmul(pd);
      if (constant_) {  // B' in the layout this primitive reads, once
        n.b_packed = dnnl::memory(pd.weights_desc(), eng);
        dnnl::memory plain(n.b_md, eng, b8_.data());
        dnnl::reorder(plain, n.b_packed).execute(DnnlStream(), plain, n.b_packed);
        DnnlStream().wait();
      }
      return n;
    });
    auto& eng = DnnlEngine();
    dnnl::memory am(e.a_md, eng, const_cast<void*>(a)), ym(e.y_md, eng, p);
    dnnl::memory bm = e.b_packed ? e.b_packed : dnnl::memory(e.b_md, eng, b8_.data());
    e.prim.execute(DnnlStream(), {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, ym}});
    DnnlStream().wait();
  } catch (const dnnl::error& err) {
    return absl::InternalError(std::string("oneDNN int8 matmul failed: ") + err.what());
  }
  return absl::OkStatus();
}

absl::Status Int8MatMul::Run(const void* a, DataType a_type, int64_t rows, const std::vector<int32_t>& a_zp,
                             int32_t* y) {
  if (!ready_) return absl::FailedPreconditionError("Int8MatMul::Run before SetB");
  if (!Is8Bit(a_type)) return absl::InvalidArgumentError("A must be uint8 or int8");
  if (rows == 0 || N_ == 0) return absl::OkStatus();
  if (K_ == 0) {  // empty sums
    std::fill(y, y + rows * N_, 0);
    return absl::OkStatus();
  }
  if (absl::Status st = Product(a, a_type, rows, y); !st.ok()) return st;
  // The zero points: Y = P - a_zp colsum(B') - rowsum(A) b_zp' + K a_zp b_zp', in uint32
  // arithmetic (int32's wrapping, and the loops vectorize).
  const bool a_one = a_zp.size() <= 1;
  const uint32_t* cs = b_colsum_.data();
  const uint32_t* bz = b_zp_columns_.data();
  const uint32_t K = static_cast<uint32_t>(K_);
  const bool b_zero = b_zp_zero_;
  ParallelForIf(rows > 1 && rows * N_ >= (1 << 15), rows, [&](int64_t r) {
    const uint32_t az = a_zp.empty() ? 0u : static_cast<uint32_t>(a_zp[a_one ? 0 : static_cast<size_t>(r) % a_zp.size()]);
    uint32_t* yr = reinterpret_cast<uint32_t*>(y + r * N_);
    const int64_t n_cols = N_;
    if (b_zero) {
#pragma omp simd
      for (int64_t n = 0; n < n_cols; ++n) yr[n] -= az * cs[n];
      return;
    }
    const uint32_t rs = RowSum(a, a_type, r * K_, K_), kaz = K * az;
#pragma omp simd
    for (int64_t n = 0; n < n_cols; ++n) yr[n] = yr[n] - az * cs[n] - rs * bz[n] + kaz * bz[n];
  });
  return absl::OkStatus();
}

}  // namespace tandem::cpu
