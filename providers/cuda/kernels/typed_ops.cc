// Ops on element types other than float32 on the GPU: Cast, the comparisons
// (Equal/Less/Greater/LessOrEqual/GreaterOrEqual), Not/And/Or/Xor and Where, over the
// launchers of typed_elementwise.cu. The types are those of ElementType (float32/64,
// int8/32/64, uint8, bool); others (float16, strings, ...) stay on the CPU, declined at
// placement by TypedOpAccepts.
#include <string>
#include <utility>

#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"
#include "providers/cuda/kernels/typed_launch.h"

namespace tandem::cuda {
namespace {

const std::vector<DataType> kTyped = {DataType::kFloat, DataType::kDouble, DataType::kInt8, DataType::kUint8,
                                      DataType::kInt32, DataType::kInt64,  DataType::kBool};

std::optional<ElementType> ElementTypeOf(DataType t) {
  switch (t) {
    case DataType::kFloat: return ElementType::kFloat;
    case DataType::kDouble: return ElementType::kDouble;
    case DataType::kInt8: return ElementType::kInt8;
    case DataType::kUint8: return ElementType::kUint8;
    case DataType::kInt32: return ElementType::kInt32;
    case DataType::kInt64: return ElementType::kInt64;
    case DataType::kBool: return ElementType::kBool;
    default: return std::nullopt;
  }
}

absl::Status Unsupported(const char* what, DataType t) {
  return absl::UnimplementedError(std::string(what) + " is " + DataTypeName(t) + ", which the CUDA kernel does not take");
}

absl::StatusOr<const Tensor*> Input(const KernelContext& ctx, int i) {
  const Tensor* t = ctx.input(i);
  if (!t) return absl::InvalidArgumentError("missing input " + std::to_string(i));
  return t;
}

class Cast : public Kernel {
 public:
  explicit Cast(const KernelInfo& info)
      : stream_(ProviderOf(info).stream()),
        to_(static_cast<DataType>(info.node.attr_int("to", static_cast<int64_t>(DataType::kUndefined)))) {}
  absl::Status Compute(KernelContext& ctx) override {
    auto x = Input(ctx, 0);
    if (!x.ok()) return x.status();
    const auto from = ElementTypeOf((*x)->dtype());
    if (!from) return Unsupported("input 0", (*x)->dtype());
    const auto to = ElementTypeOf(to_);
    if (!to) return Unsupported("attribute 'to'", to_);
    auto y = Output(ctx, 0, to_, (*x)->dims());
    if (!y.ok()) return y.status();
    TANDEM_CUDA_RETURN(LaunchCast(*from, (*x)->raw(), *to, (*y)->raw(), (*x)->numel(), stream_));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
  DataType to_;
};

// a op b -> bool, numpy broadcasting.
class Compare : public Kernel {
 public:
  Compare(const KernelInfo& info, CompareOp op) : stream_(ProviderOf(info).stream()), op_(op) {}
  absl::Status Compute(KernelContext& ctx) override {
    auto a = Input(ctx, 0);
    if (!a.ok()) return a.status();
    auto b = Input(ctx, 1);
    if (!b.ok()) return b.status();
    const auto type = ElementTypeOf((*a)->dtype());
    if (!type) return Unsupported("input 0", (*a)->dtype());
    if ((*b)->dtype() != (*a)->dtype())
      return absl::InvalidArgumentError(std::string("inputs are ") + DataTypeName((*a)->dtype()) + " and " +
                                        DataTypeName((*b)->dtype()) + "; they must have one type");
    const bool same = (*a)->dims() == (*b)->dims();
    absl::StatusOr<StridedIndex> ix = StridedIndex{};
    if (!same) ix = Broadcast((*a)->dims(), (*b)->dims());
    if (!ix.ok()) return ix.status();
    auto y = Output(ctx, 0, DataType::kBool, same ? (*a)->dims() : Dims(ix->dims, ix->dims + ix->rank));
    if (!y.ok()) return y.status();
    TANDEM_CUDA_RETURN(LaunchCompare(op_, *type, (*a)->raw(), (*b)->raw(), (*y)->data<bool>(), (*y)->numel(),
                                     same ? nullptr : &*ix, stream_));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
  CompareOp op_;
};

template <CompareOp kOp>
class CompareOf : public Compare {
 public:
  explicit CompareOf(const KernelInfo& info) : Compare(info, kOp) {}
};

class Not : public Kernel {
 public:
  explicit Not(const KernelInfo& info) : stream_(ProviderOf(info).stream()) {}
  absl::Status Compute(KernelContext& ctx) override {
    auto x = Input(ctx, 0);
    if (!x.ok()) return x.status();
    if ((*x)->dtype() != DataType::kBool) return Unsupported("input 0", (*x)->dtype());
    auto y = Output(ctx, 0, DataType::kBool, (*x)->dims());
    if (!y.ok()) return y.status();
    TANDEM_CUDA_RETURN(LaunchNot((*x)->data<bool>(), (*y)->data<bool>(), (*x)->numel(), stream_));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
};

// Where(cond, X, Y): three-way numpy broadcasting.
class Where : public Kernel {
 public:
  explicit Where(const KernelInfo& info) : stream_(ProviderOf(info).stream()) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* in[3];
    for (int i = 0; i < 3; ++i) {
      auto t = Input(ctx, i);
      if (!t.ok()) return t.status();
      in[i] = *t;
    }
    const Tensor &cond = *in[0], &x = *in[1], &y = *in[2];
    if (cond.dtype() != DataType::kBool) return Unsupported("condition", cond.dtype());
    if (!ElementTypeOf(x.dtype())) return Unsupported("X", x.dtype());
    if (y.dtype() != x.dtype())
      return absl::InvalidArgumentError(std::string("X is ") + DataTypeName(x.dtype()) + " and Y " +
                                        DataTypeName(y.dtype()) + "; they must have one type");
    if (cond.dims() == x.dims() && x.dims() == y.dims()) {
      auto out = Output(ctx, 0, x.dtype(), x.dims());
      if (!out.ok()) return out.status();
      TANDEM_CUDA_RETURN(LaunchWhere(cond.data<bool>(), x.raw(), y.raw(), (*out)->raw(),
                                     static_cast<int>(SizeOf(x.dtype())), x.numel(), nullptr, nullptr, stream_));
      return absl::OkStatus();
    }
    auto xy = Broadcast(x.dims(), y.dims());
    if (!xy.ok()) return xy.status();
    auto all = Broadcast(cond.dims(), Dims(xy->dims, xy->dims + xy->rank));
    if (!all.ok()) return all.status();
    const Dims out_dims(all->dims, all->dims + all->rank);
    auto ix = BroadcastTo(x.dims(), out_dims);
    if (!ix.ok()) return ix.status();
    auto iy = BroadcastTo(y.dims(), out_dims);
    if (!iy.ok()) return iy.status();
    StridedIndex strides_xy = *ix;
    for (int d = 0; d < strides_xy.rank; ++d) strides_xy.stride_b[d] = iy->stride_a[d];
    auto out = Output(ctx, 0, x.dtype(), out_dims);
    if (!out.ok()) return out.status();
    TANDEM_CUDA_RETURN(LaunchWhere(cond.data<bool>(), x.raw(), y.raw(), (*out)->raw(),
                                   static_cast<int>(SizeOf(x.dtype())), (*out)->numel(), &strides_xy,
                                   &*all, stream_));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
};

}  // namespace

// Types these ops meet that the GPU lacks (float16, strings) are common enough that an
// unknown one is declined too: the CPU takes every type.
bool TypedOpAccepts(const KernelInfo& info) {
  const Node& n = info.node;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (!n.inputs[i].empty() && !ElementTypeOf(info.input_type(i))) return false;
  if (n.op_type == "Cast")
    return n.has_attr("to") && ElementTypeOf(static_cast<DataType>(n.attr_int("to", 0))).has_value();
  return true;
}

bool IsTypedOp(const Node& n) {
  static const char* const kOps[] = {"Cast", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
                                     "Not",  "And",   "Or",   "Xor",     "Where"};
  if (!n.domain.empty()) return false;
  for (const char* op : kOps)
    if (n.op_type == op) return true;
  return false;
}

void RegisterTypedKernels(KernelRegistry& r) {
  const std::vector<DataType> numbers(kTyped.begin(), kTyped.end() - 1);  // kTyped less bool
  const std::vector<DataType> boolean = {DataType::kBool};
  r.Add("Cast", 6, kMaxOpset, kTyped, Make<Cast>());
  r.Add("Equal", 7, kMaxOpset, kTyped, Make<CompareOf<CompareOp::kEqual>>());
  r.Add("Less", 7, kMaxOpset, numbers, Make<CompareOf<CompareOp::kLess>>());
  r.Add("Greater", 7, kMaxOpset, numbers, Make<CompareOf<CompareOp::kGreater>>());
  r.Add("LessOrEqual", 12, kMaxOpset, numbers, Make<CompareOf<CompareOp::kLessOrEqual>>());
  r.Add("GreaterOrEqual", 12, kMaxOpset, numbers, Make<CompareOf<CompareOp::kGreaterOrEqual>>());
  r.Add("And", 7, kMaxOpset, boolean, Make<CompareOf<CompareOp::kAnd>>());
  r.Add("Or", 7, kMaxOpset, boolean, Make<CompareOf<CompareOp::kOr>>());
  r.Add("Xor", 7, kMaxOpset, boolean, Make<CompareOf<CompareOp::kXor>>());
  r.Add("Not", 1, kMaxOpset, boolean, Make<Not>());
  r.Add("Where", 9, kMaxOpset, kTyped, Make<Where>(), 1);
}

}  // namespace tandem::cuda
