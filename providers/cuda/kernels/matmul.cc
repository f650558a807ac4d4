// MatMul, Gemm and the fused FusedGemm/FusedMatMul on cuBLASLt.
//
// Row-major C[M,N] = op(A)[M,K] · op(B)[K,N] is computed as the column-major product
// C^T = op(B)^T · op(A)^T, so the row-major buffers are passed as they are with B first.
// 1-D operands are read as [1,K] (A) and [K,1] (B), that dim dropped from the result.
// The third input (Gemm's C, FusedMatMul's optional bias): of shape [N] or [1,N] with
// beta = 1 it becomes the BIAS epilogue, a full [M,N] C uses cuBLASLt's own beta·C, and
// any other shape that broadcasts to [M,N] is added (times beta) by one more launch.
// The fused activation: Relu as cuBLASLt's RELU(_BIAS) epilogue where the C goes in the
// epilogue or there is none; Relu otherwise, Tanh, Sigmoid, LeakyRelu and Clip as one
// elementwise launch over the result. K = 0 gives beta·C (or the bias) alone. The
// algorithm is chosen by cuBLASLt's heuristic once per shape and operand alignment (a
// k-fold batch is a row view at any offset: the heuristic is told the real alignment
// instead of assuming 256 bytes) and cached; the workspace comes from the provider.
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>

#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {
namespace {

constexpr size_t kWorkspaceBytes = 32u << 20;

struct Problem {
  int64_t m, n, k, batch;
  bool trans_a, trans_b;
  int64_t stride_a, stride_b;  // batch strides (0: shared across the batch)
  int epilogue;                // cublasLtEpilogue_t
  bool accumulate_c;           // beta * C with a full C
  // Byte alignment of A, B, C, D and the bias (a power of two up to 256), for the heuristic.
  uint32_t align_a, align_b, align_c, align_d, align_bias;
  auto key() const {
    return std::make_tuple(m, n, k, batch, trans_a, trans_b, stride_a, stride_b, epilogue, accumulate_c, align_a,
                           align_b, align_c, align_d, align_bias);
  }
};

// The largest power of two up to 256 that divides the address.
uint32_t AlignmentOf(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a) a /= 2;
  return a;
}

// One matmul plan (descriptors + algorithm) per problem, built on first use.
class LtPlan {
 public:
  ~LtPlan() {
    if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
    for (auto* l : {a_, b_, c_}) if (l) cublasLtMatrixLayoutDestroy(l);
    if (op_) cublasLtMatmulDescDestroy(op_);
  }

  // `bias`: the bias the first run reads (the heuristic assumes its alignment from it).
  // `tf32`: TF32 tensor-core products (--precision tf32), else float32 throughout.
  absl::Status Build(cublasLtHandle_t lt, const Problem& p, const float* bias, bool tf32) {
    TANDEM_CUDA_RETURN(
        cublasLtMatmulDescCreate(&op_, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F));
    // Column-major view: first operand is B (rows N), second is A (cols M).
    cublasOperation_t ta = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    TANDEM_CUDA_RETURN(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    TANDEM_CUDA_RETURN(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    cublasLtEpilogue_t epi = static_cast<cublasLtEpilogue_t>(p.epilogue);
    TANDEM_CUDA_RETURN(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    // B as stored: row-major [K,N] (= col-major N x K, ld N) or transposed [N,K] (ld K).
    TANDEM_CUDA_RETURN(cublasLtMatrixLayoutCreate(&a_, CUDA_R_32F, p.trans_b ? p.k : p.n,
                                                  p.trans_b ? p.n : p.k, p.trans_b ? p.k : p.n));
    TANDEM_CUDA_RETURN(cublasLtMatrixLayoutCreate(&b_, CUDA_R_32F, p.trans_a ? p.m : p.k,
                                                  p.trans_a ? p.k : p.m, p.trans_a ? p.m : p.k));
    TANDEM_CUDA_RETURN(cublasLtMatrixLayoutCreate(&c_, CUDA_R_32F, p.n, p.m, p.n));
    if (p.batch > 1) {
      const int32_t count = static_cast<int32_t>(p.batch);
      const int64_t sc = p.m * p.n;
      for (auto [layout, stride] : {std::pair{a_, p.stride_b}, std::pair{b_, p.stride_a}, std::pair{c_, sc}}) {
        TANDEM_CUDA_RETURN(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
        TANDEM_CUDA_RETURN(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
      }
    }
    TANDEM_CUDA_RETURN(cublasLtMatmulPreferenceCreate(&pref_));
    size_t ws = kWorkspaceBytes;
    TANDEM_CUDA_RETURN(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    // cuBLASLt's A and B are our B and A (the column-major view above).
    for (auto [attr, bytes] : {std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, p.align_b},
                               std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, p.align_a},
                               std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, p.align_c},
                               std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, p.align_d}})
      TANDEM_CUDA_RETURN(cublasLtMatmulPreferenceSetAttribute(pref_, attr, &bytes, sizeof bytes));
    if (bias) TANDEM_CUDA_RETURN(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    int found = 0;
    TANDEM_CUDA_RETURN(cublasLtMatmulAlgoGetHeuristic(lt, op_, a_, b_, c_, c_, pref_, 1, &heuristic_, &found));
    if (found == 0) return absl::UnimplementedError("cuBLASLt has no algorithm for this matmul");
    return absl::OkStatus();
  }

  absl::Status Run(CudaProvider& prov, const float* a, const float* b, const float* bias, const float* c,
                   float* d, float alpha, float beta) {
    if (bias) TANDEM_CUDA_RETURN(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    auto ws = prov.Workspace(kWorkspaceBytes);
    if (!ws.ok()) return ws.status();
    TANDEM_CUDA_RETURN(cublasLtMatmul(prov.cublaslt(), op_, &alpha, b, a_, a, b_, &beta, c ? c : d, c_, d, c_,
                                      &heuristic_.algo, *ws, kWorkspaceBytes, prov.stream()));
    return absl::OkStatus();
  }

 private:
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

class MatMulKernel : public Kernel {
 public:
  explicit MatMulKernel(const KernelInfo& info)
      : prov_(ProviderOf(info)),
        gemm_(info.node.op_type == "Gemm" || info.node.op_type == "FusedGemm"),
        activation_(FusedActivationOp(info.node.attr_string("activation", ""))),
        activation_alpha_(info.node.attr_float("activation_alpha", 0.01f)),
        activation_beta_(info.node.attr_float("activation_beta", 0.f)),
        trans_a_(gemm_ && info.node.attr_int("transA", 0) != 0),
        trans_b_(gemm_ && info.node.attr_int("transB", 0) != 0),
        alpha_(gemm_ ? info.node.attr_float("alpha", 1.f) : 1.f),
        beta_(gemm_ ? info.node.attr_float("beta", 1.f) : 1.f) {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0, 1});
    if (!s.ok()) return s;
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    const Tensor* c = ctx.input(2);  // Gemm's C or FusedMatMul's bias; null when absent
    Problem p{};
    p.trans_a = trans_a_;
    p.trans_b = trans_b_;
    Dims out;
    if (gemm_) {
      if (a.rank() != 2 || b.rank() != 2) return absl::InvalidArgumentError("Gemm takes 2-D A and B");
      p.m = trans_a_ ? a.dim(1) : a.dim(0);
      p.k = trans_a_ ? a.dim(0) : a.dim(1);
      p.n = trans_b_ ? b.dim(0) : b.dim(1);
      const int64_t kb = trans_b_ ? b.dim(1) : b.dim(0);
      if (kb != p.k) return absl::InvalidArgumentError("Gemm inner dimensions differ: " + std::to_string(p.k) + " vs " + std::to_string(kb));
      p.batch = 1;
      out = {p.m, p.n};
    } else {
      if (a.rank() < 1 || b.rank() < 1) return absl::InvalidArgumentError("MatMul operands must not be scalars");
      // 1-D operands as numpy reads them: A [K] is [1,K], B [K] is [K,1]; the dim goes again.
      Dims ad = a.dims(), bd = b.dims();
      const bool a_vector = ad.size() == 1, b_vector = bd.size() == 1;
      if (a_vector) ad.insert(ad.begin(), 1);
      if (b_vector) bd.push_back(1);
      p.m = ad[ad.size() - 2];
      p.k = ad.back();
      p.n = bd.back();
      if (bd[bd.size() - 2] != p.k) return absl::InvalidArgumentError("MatMul inner dimensions differ");
      Dims ba(ad.begin(), ad.end() - 2), bb(bd.begin(), bd.end() - 2);
      if (bb.empty()) {  // B shared: fold A's batch into M
        p.m *= NumElements(ba);
        p.batch = 1;
        out = ba;
      } else if (ba == bb || ba.empty()) {
        p.batch = NumElements(bb);
        p.stride_a = ba.empty() ? 0 : p.m * p.k;
        p.stride_b = p.k * p.n;
        out = bb;
      } else {  // declined at placement (MatMulShapesAccepted); here for direct callers
        return absl::UnimplementedError("MatMul with broadcast batch dims " + DimsToString(a.dims()) + " x " +
                                        DimsToString(b.dims()));
      }
      if (!a_vector) out.push_back(ad[ad.size() - 2]);
      if (!b_vector) out.push_back(p.n);
    }
    // Where the third input goes: the BIAS epilogue, cuBLASLt's beta * C, or a launch after.
    const float* bias = nullptr;
    const float* full_c = nullptr;
    const Tensor* added_c = nullptr;
    if (c) {
      if (c->dtype() != DataType::kFloat) return absl::UnimplementedError("Gemm C must be float32");
      const bool row = c->numel() == p.n && (c->rank() == 1 || (c->rank() == 2 && c->dim(0) == 1));
      if (p.k > 0 && row && beta_ == 1.f) bias = c->data<float>();
      else if (p.k > 0 && p.batch == 1 && c->dims() == Dims{p.m, p.n}) full_c = c->data<float>();
      else added_c = c;
    }
    const bool relu_epilogue = activation_ == UnaryOp::kRelu && !added_c;
    p.epilogue = bias ? (relu_epilogue ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                      : (relu_epilogue ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
    p.accumulate_c = full_c != nullptr;
    auto y = Output(ctx, 0, DataType::kFloat, out);
    if (!y.ok()) return y.status();
    float* yd = (*y)->data<float>();
    const int64_t count = (*y)->numel();
    if (count == 0) return absl::OkStatus();
    if (p.k == 0) {  // an empty sum: what remains is beta * C and the activation
      TANDEM_CUDA_RETURN(LaunchFill(yd, count, 0.f, prov_.stream()));
    } else {
      p.align_a = AlignmentOf(a.raw());
      p.align_b = AlignmentOf(b.raw());
      p.align_c = AlignmentOf(full_c ? static_cast<const void*>(full_c) : yd);
      p.align_d = AlignmentOf(yd);
      p.align_bias = bias ? AlignmentOf(bias) : 256;
      auto& plan = plans_[p.key()];
      if (!plan) {
        plan = std::make_unique<LtPlan>();
        absl::Status b_status = plan->Build(prov_.cublaslt(), p, bias, prov_.tf32());
        if (!b_status.ok()) {
          plan.reset();
          return b_status;
        }
      }
      s = plan->Run(prov_, a.data<float>(), b.data<float>(), bias, full_c, yd, alpha_, full_c ? beta_ : 0.f);
      if (!s.ok()) return s;
    }
    if (added_c) {
      s = AddScaled(ctx, *added_c, beta_, **y);
      if (!s.ok()) return s;
    }
    if (activation_ && !relu_epilogue)
      TANDEM_CUDA_RETURN(LaunchUnary(*activation_, yd, yd, count, activation_alpha_, prov_.stream(),
                                               activation_beta_));
    return absl::OkStatus();
  }

 private:
  // y += scale * c, c broadcast to y's dims.
  absl::Status AddScaled(KernelContext& ctx, const Tensor& c, float scale, Tensor& y) {
    auto ix = Broadcast(y.dims(), c.dims());
    if (!ix.ok()) return ix.status();
    if (Dims(ix->dims, ix->dims + ix->rank) != y.dims())
      return absl::InvalidArgumentError("C of shape " + DimsToString(c.dims()) + " does not broadcast to " +
                                        DimsToString(y.dims()));
    const float* cd = c.data<float>();
    Tensor scaled;
    if (scale != 1.f) {
      auto t = Scratch(ctx, DataType::kFloat, c.dims());
      if (!t.ok()) return t.status();
      scaled = std::move(*t);
      TANDEM_CUDA_RETURN(LaunchUnary(UnaryOp::kScale, cd, scaled.data<float>(), c.numel(), scale, prov_.stream()));
      cd = scaled.data<float>();
    }
    TANDEM_CUDA_RETURN(LaunchBinary(BinaryOp::kAdd, y.data<float>(), cd, y.data<float>(), y.numel(), &*ix, 0.f,
                                    prov_.stream()));
    return absl::OkStatus();
  }

  CudaProvider& prov_;
  bool gemm_;
  std::optional<UnaryOp> activation_;
  float activation_alpha_, activation_beta_;
  bool trans_a_, trans_b_;
  float alpha_, beta_;
  std::map<decltype(Problem{}.key()), std::unique_ptr<LtPlan>> plans_;
};

}  // namespace

bool MatMulAccepts(const KernelInfo& info) {
  const Node& n = info.node;
  const std::string activation = n.attr_string("activation", "");
  if (!activation.empty() && !FusedActivationOp(activation)) return false;  // Clip and the like: the CPU
  if (n.op_type != "MatMul" && n.op_type != "FusedMatMul") return true;
  // Batch dims must be equal, or one side's absent (broadcast batches run on the CPU).
  if (info.input_shapes.size() < 2 || !info.input_shapes[0].rank_known || !info.input_shapes[1].rank_known)
    return true;  // unknown until run time
  const auto& da = info.input_shapes[0].dims;
  const auto& db = info.input_shapes[1].dims;
  if (da.size() <= 2 || db.size() <= 2) return true;
  if (da.size() != db.size()) return false;
  for (size_t i = 0; i + 2 < da.size(); ++i) {
    const Dim &x = da[i], &y = db[i];
    if (x.known() && y.known() && x.value != y.value) return false;
    if (x.known() != y.known()) return false;       // e.g. 1 against batch: a broadcast
    if (!x.known() && x.symbol != y.symbol) return false;  // two unknowns that may differ
  }
  return true;
}

void RegisterMatMulKernels(KernelRegistry& r) {
  r.Add(FloatKernel("", "MatMul", 1, kMaxOpset, Make<MatMulKernel>()));
  r.Add(FloatKernel("", "Gemm", 7, kMaxOpset, Make<MatMulKernel>()));
  r.Add(FloatKernel("ai.tandem", "FusedGemm", 1, kMaxOpset, Make<MatMulKernel>()));
  r.Add(FloatKernel("ai.tandem", "FusedMatMul", 1, kMaxOpset, Make<MatMulKernel>()));
}

}  // namespace tandem::cuda
