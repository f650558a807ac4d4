// MatMul, Gemm and the fused FusedGemm/FusedMatMul (activation Relu) on cuBLASLt.
//
// Row-major C[M,N] = op(A)[M,K] · op(B)[K,N] is computed as the column-major product
// C^T = op(B)^T · op(A)^T, so the row-major buffers are passed as they are with B first.
// Gemm's bias C of shape [N] or [1,N] with beta = 1 becomes the BIAS epilogue (with
// RELU_BIAS when fused); a full [M,N] C uses cuBLASLt's own beta·C. The algorithm is
// chosen by cuBLASLt's heuristic once per shape and cached; the workspace comes from
// the provider.
#include <map>
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
  auto key() const { return std::make_tuple(m, n, k, batch, trans_a, trans_b, stride_a, stride_b, epilogue, accumulate_c); }
};

// One matmul plan (descriptors + algorithm) per problem, built on first use.
class LtPlan {
 public:
  ~LtPlan() {
    if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
    for (auto* l : {a_, b_, c_}) if (l) cublasLtMatrixLayoutDestroy(l);
    if (op_) cublasLtMatmulDescDestroy(op_);
  }

  absl::Status Build(cublasLtHandle_t lt, const Problem& p) {
    TANDEM_CUDA_RETURN(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
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
        relu_(info.node.attr_string("activation", "") == "Relu"),
        trans_a_(gemm_ && info.node.attr_int("transA", 0) != 0),
        trans_b_(gemm_ && info.node.attr_int("transB", 0) != 0),
        alpha_(gemm_ ? info.node.attr_float("alpha", 1.f) : 1.f),
        beta_(gemm_ ? info.node.attr_float("beta", 1.f) : 1.f) {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0, 1});
    if (!s.ok()) return s;
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    const Tensor* c = gemm_ ? ctx.input(2) : nullptr;
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
      if (a.rank() < 2 || b.rank() < 2)
        return absl::UnimplementedError("1-D MatMul operands run on the CPU");
      p.m = a.dim(-2);
      p.k = a.dim(-1);
      p.n = b.dim(-1);
      if (b.dim(-2) != p.k) return absl::InvalidArgumentError("MatMul inner dimensions differ");
      Dims ba(a.dims().begin(), a.dims().end() - 2), bb(b.dims().begin(), b.dims().end() - 2);
      if (bb.empty()) {  // B shared: fold A's batch into M
        p.m *= NumElements(ba);
        p.batch = 1;
        out = ba;
      } else if (ba == bb || ba.empty()) {
        p.batch = NumElements(bb);
        p.stride_a = ba.empty() ? 0 : p.m * p.k;
        p.stride_b = p.k * p.n;
        out = bb;
      } else {
        return absl::UnimplementedError("MatMul with broadcast batch dims " + DimsToString(a.dims()) + " x " +
                                        DimsToString(b.dims()));
      }
      out.push_back(a.dim(-2));
      out.push_back(p.n);
    }
    const float* bias = nullptr;
    const float* full_c = nullptr;
    float beta = 0.f;
    if (c) {
      if (c->dtype() != DataType::kFloat) return absl::UnimplementedError("Gemm C must be float32");
      const bool row = c->numel() == p.n && (c->rank() == 1 || (c->rank() == 2 && c->dim(0) == 1));
      if (row && beta_ == 1.f) {
        bias = c->data<float>();
      } else if (c->dims() == Dims{p.m, p.n}) {
        full_c = c->data<float>();
        beta = beta_;
      } else {
        return absl::UnimplementedError("Gemm C of shape " + DimsToString(c->dims()) + " with beta " +
                                        std::to_string(beta_) + " runs on the CPU");
      }
    }
    p.epilogue = bias ? (relu_ ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                      : (relu_ ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
    if (relu_ && full_c) return absl::UnimplementedError("fused Relu with a full C runs on the CPU");
    p.accumulate_c = full_c != nullptr;
    auto y = Output(ctx, 0, DataType::kFloat, out);
    if (!y.ok()) return y.status();
    if ((*y)->numel() == 0) return absl::OkStatus();
    if (p.k == 0) {
      TANDEM_CUDA_RETURN(LaunchFill((*y)->data<float>(), (*y)->numel(), 0.f, prov_.stream()));
      return absl::OkStatus();
    }
    auto& plan = plans_[p.key()];
    if (!plan) {
      plan = std::make_unique<LtPlan>();
      absl::Status b_status = plan->Build(prov_.cublaslt(), p);
      if (!b_status.ok()) {
        plan.reset();
        return b_status;
      }
    }
    return plan->Run(prov_, a.data<float>(), b.data<float>(), bias, full_c, (*y)->data<float>(), alpha_, beta);
  }

 private:
  CudaProvider& prov_;
  bool gemm_, relu_, trans_a_, trans_b_;
  float alpha_, beta_;
  std::map<decltype(Problem{}.key()), std::unique_ptr<LtPlan>> plans_;
};

}  // namespace

void RegisterMatMulKernels(KernelRegistry& r) {
  r.Add(FloatKernel("", "MatMul", 1, kMaxOpset, Make<MatMulKernel>()));
  r.Add(FloatKernel("", "Gemm", 7, kMaxOpset, Make<MatMulKernel>()));
  r.Add(FloatKernel("ai.tandem", "FusedGemm", 1, kMaxOpset, Make<MatMulKernel>()));
  r.Add(FloatKernel("ai.tandem", "FusedMatMul", 1, kMaxOpset, Make<MatMulKernel>()));
}

}  // namespace tandem::cuda
