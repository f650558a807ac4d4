// ONNX sequence and optional ops: SequenceEmpty/Construct/Insert/At/Erase/Length,
// SplitToSequence, ConcatFromSequence, SequenceMap (body run per element), Optional,
// OptionalHasElement and OptionalGetElement. Sequences and optionals are Tensor values of
// kind kSequence / kOptional (graph/tensor.h); their elements are shared, never mutated.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/control_flow/sequence_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

namespace {

absl::StatusOr<const Tensor*> NeedSequence(KernelContext& ctx, int i, const char* name) {
  const Tensor* s = ctx.input(i);
  if (!s) return absl::InvalidArgumentError(std::string("input '") + name + "' is missing");
  if (!s->is_sequence())
    return absl::InvalidArgumentError(std::string("input '") + name + "' must be a sequence");
  return s;
}

absl::StatusOr<const Tensor*> NeedTensor(KernelContext& ctx, int i, const char* name) {
  const Tensor* t = ctx.input(i);
  if (!t) return absl::InvalidArgumentError(std::string("input '") + name + "' is missing");
  if (!t->is_tensor())
    return absl::InvalidArgumentError(std::string("input '") + name + "' must be a tensor");
  return t;
}

// Position input (int32/int64 scalar) checked against [lo, hi].
absl::StatusOr<int64_t> ReadPosition(const Tensor& p, int64_t lo, int64_t hi) {
  auto v = seq::ReadScalarInt(p, "input 'position'");
  if (!v.ok()) return v.status();
  if (*v < lo || *v > hi)
    return absl::InvalidArgumentError(absl::StrCat("position ", *v, " is out of range [", lo, ", ", hi, "]"));
  return *v;
}

class SequenceEmpty : public Kernel {
 public:
  explicit SequenceEmpty(const KernelInfo& info)
      : dtype_(static_cast<DataType>(info.node.attr_int("dtype", static_cast<int64_t>(DataType::kFloat)))) {}
  absl::Status Compute(KernelContext& ctx) override {
    if (!IsKnownDataType(static_cast<int32_t>(dtype_)) || dtype_ == DataType::kUndefined)
      return absl::InvalidArgumentError("attribute 'dtype' is not a supported element type");
    ctx.SetOutput(0, Tensor::Sequence(dtype_, {}));
    return absl::OkStatus();
  }

 private:
  DataType dtype_;
};

class SequenceConstruct : public Kernel {
 public:
  explicit SequenceConstruct(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    std::vector<Tensor> items;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      if (!t || !t->is_tensor())
        return absl::InvalidArgumentError(absl::StrCat("input ", i, " is missing or not a tensor"));
      if (!items.empty() && t->dtype() != items[0].dtype())
        return absl::InvalidArgumentError(absl::StrCat("input ", i, " has type ", DataTypeName(t->dtype()),
                                                       ", input 0 has ", DataTypeName(items[0].dtype())));
      items.push_back(*t);
    }
    if (items.empty()) return absl::InvalidArgumentError("needs at least one input");
    DataType dtype = items[0].dtype();
    ctx.SetOutput(0, Tensor::Sequence(dtype, std::move(items)));
    return absl::OkStatus();
  }
};

class SequenceInsert : public Kernel {
 public:
  explicit SequenceInsert(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    auto s = NeedSequence(ctx, 0, "input_sequence");
    if (!s.ok()) return s.status();
    auto t = NeedTensor(ctx, 1, "tensor");
    if (!t.ok()) return t.status();
    const auto& items = (*s)->sequence();
    const int64_t n = static_cast<int64_t>(items.size());
    if ((*s)->dtype() != DataType::kUndefined && (*t)->dtype() != (*s)->dtype())
      return absl::InvalidArgumentError(absl::StrCat("cannot insert a ", DataTypeName((*t)->dtype()),
                                                     " tensor into a sequence of ",
                                                     DataTypeName((*s)->dtype())));
    int64_t pos = n;
    if (const Tensor* p = ctx.input(2)) {
      auto v = ReadPosition(*p, -n, n);
      if (!v.ok()) return v.status();
      pos = *v < 0 ? *v + n : *v;
    }
    std::vector<Tensor> out(items.begin(), items.end());
    out.insert(out.begin() + pos, **t);
    ctx.SetOutput(0, Tensor::Sequence((*t)->dtype(), std::move(out)));
    return absl::OkStatus();
  }
};

class SequenceAt : public Kernel {
 public:
  explicit SequenceAt(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    auto s = NeedSequence(ctx, 0, "input_sequence");
    if (!s.ok()) return s.status();
    const Tensor* p = ctx.input(1);
    if (!p) return absl::InvalidArgumentError("input 'position' is missing");
    const auto& items = (*s)->sequence();
    const int64_t n = static_cast<int64_t>(items.size());
    if (n == 0) return absl::InvalidArgumentError("the sequence is empty");
    auto v = ReadPosition(*p, -n, n - 1);
    if (!v.ok()) return v.status();
    ctx.SetOutput(0, items[*v < 0 ? *v + n : *v]);
    return absl::OkStatus();
  }
};

class SequenceErase : public Kernel {
 public:
  explicit SequenceErase(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    auto s = NeedSequence(ctx, 0, "input_sequence");
    if (!s.ok()) return s.status();
    const auto& items = (*s)->sequence();
    const int64_t n = static_cast<int64_t>(items.size());
    if (n == 0) return absl::InvalidArgumentError("cannot erase from an empty sequence");
    int64_t pos = n - 1;
    if (const Tensor* p = ctx.input(1)) {
      auto v = ReadPosition(*p, -n, n - 1);
      if (!v.ok()) return v.status();
      pos = *v < 0 ? *v + n : *v;
    }
    std::vector<Tensor> out(items.begin(), items.end());
    out.erase(out.begin() + pos);
    ctx.SetOutput(0, Tensor::Sequence((*s)->dtype(), std::move(out)));
    return absl::OkStatus();
  }
};

class SequenceLength : public Kernel {
 public:
  explicit SequenceLength(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    auto s = NeedSequence(ctx, 0, "input_sequence");
    if (!s.ok()) return s.status();
    Tensor& out = ctx.AllocateOutput(0, DataType::kInt64, {});
    out.data<int64_t>()[0] = static_cast<int64_t>((*s)->sequence().size());
    return absl::OkStatus();
  }
};

class SplitToSequence : public Kernel {
 public:
  explicit SplitToSequence(const KernelInfo& info)
      : axis_(info.node.attr_int("axis", 0)), keepdims_(info.node.attr_int("keepdims", 1) != 0) {}
  absl::Status Compute(KernelContext& ctx) override {
    auto x = NeedTensor(ctx, 0, "input");
    if (!x.ok()) return x.status();
    const Tensor& in = **x;
    auto ax = NormalizeAxis(axis_, in.rank());
    if (!ax.ok()) return ax.status();
    const int64_t dim = in.dims()[*ax];
    std::vector<int64_t> lens;
    bool keep = true;
    if (const Tensor* sp = ctx.input(1)) {
      if (sp->dtype() != DataType::kInt32 && sp->dtype() != DataType::kInt64)
        return absl::InvalidArgumentError("input 'split' must be int32 or int64");
      if (sp->rank() == 0) {
        int64_t chunk = sp->ElementAsInt64(0);
        if (chunk <= 0)
          return absl::InvalidArgumentError(absl::StrCat("split size ", chunk, " must be positive"));
        for (int64_t at = 0; at < dim; at += chunk) lens.push_back(std::min(chunk, dim - at));
      } else if (sp->rank() == 1) {
        int64_t sum = 0;
        for (int64_t i = 0; i < sp->numel(); ++i) {
          int64_t v = sp->ElementAsInt64(i);
          if (v < 0) return absl::InvalidArgumentError(absl::StrCat("split[", i, "] = ", v, " is negative"));
          lens.push_back(v);
          sum += v;
        }
        if (sum != dim)
          return absl::InvalidArgumentError(absl::StrCat("split lengths sum to ", sum, " but axis ", *ax,
                                                         " has size ", dim));
      } else {
        return absl::InvalidArgumentError("input 'split' must be a scalar or 1-D");
      }
    } else {
      lens.assign(static_cast<size_t>(dim), 1);
      keep = keepdims_;
    }
    std::vector<Tensor> items;
    int64_t at = 0;
    for (int64_t len : lens) {
      items.push_back(seq::SliceAxis(ctx.allocator(), in, *ax, at, len, keep));
      at += len;
    }
    ctx.SetOutput(0, Tensor::Sequence(in.dtype(), std::move(items)));
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
  bool keepdims_;
};

class ConcatFromSequence : public Kernel {
 public:
  explicit ConcatFromSequence(const KernelInfo& info)
      : has_axis_(info.node.has_attr("axis")),
        axis_(info.node.attr_int("axis", 0)),
        new_axis_(info.node.attr_int("new_axis", 0) != 0) {}
  absl::Status Compute(KernelContext& ctx) override {
    if (!has_axis_) return absl::InvalidArgumentError("attribute 'axis' is required");
    auto s = NeedSequence(ctx, 0, "input_sequence");
    if (!s.ok()) return s.status();
    const auto& items = (*s)->sequence();
    if (items.empty()) return absl::InvalidArgumentError("the input sequence is empty");
    auto ax = NormalizeAxis(axis_, items[0].rank() + (new_axis_ ? 1 : 0));
    if (!ax.ok()) return ax.status();
    auto out = seq::ConcatAxis(ctx.allocator(), items, *ax, new_axis_, items[0].dtype(), "sequence element");
    if (!out.ok()) return out.status();
    ctx.SetOutput(0, std::move(*out));
    return absl::OkStatus();
  }

 private:
  bool has_axis_;
  int64_t axis_;
  bool new_axis_;
};

// Runs the body once per element of the first input sequence; other sequence inputs are
// indexed alongside, tensor inputs are passed whole. Body output j of every iteration
// forms output sequence j.
class SequenceMap : public Kernel {
 public:
  explicit SequenceMap(const KernelInfo& info) {
    const Attribute* a = info.node.attr("body");
    body_ = a && a->kind == Attribute::Kind::kGraph ? a->g.get() : nullptr;
  }
  absl::Status Compute(KernelContext& ctx) override {
    auto s = NeedSequence(ctx, 0, "input_sequence");
    if (!s.ok()) return s.status();
    const size_t n = (*s)->sequence().size();
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      if (!t) return absl::InvalidArgumentError(absl::StrCat("additional input ", i, " is missing"));
      if (t->is_sequence() && t->sequence().size() != n)
        return absl::InvalidArgumentError(absl::StrCat("input ", i, " is a sequence of ", t->sequence().size(),
                                                       " elements, input 0 has ", n));
    }
    const int k = ctx.num_outputs();
    std::vector<std::vector<Tensor>> outs(k);
    for (size_t e = 0; e < n; ++e) {
      std::vector<Tensor> in;
      for (int i = 0; i < ctx.num_inputs(); ++i) {
        const Tensor* t = ctx.input(i);
        in.push_back(t->is_sequence() ? t->sequence()[e] : *t);
      }
      auto r = ctx.RunSubgraph("body", in);
      if (!r.ok())
        return absl::Status(r.status().code(), absl::StrCat("body, element ", e, ": ", r.status().message()));
      if (static_cast<int>(r->size()) != k)
        return absl::InvalidArgumentError(absl::StrCat("the body returns ", r->size(), " values, expected ", k));
      for (int j = 0; j < k; ++j) {
        if (!(*r)[j].is_tensor())
          return absl::InvalidArgumentError(absl::StrCat("body output ", j, " is not a tensor"));
        outs[j].push_back(std::move((*r)[j]));
      }
    }
    for (int j = 0; j < k; ++j) {
      DataType dtype = !outs[j].empty() ? outs[j][0].dtype()
                       : body_ && j < static_cast<int>(body_->outputs.size()) ? body_->outputs[j].dtype
                                                                               : DataType::kUndefined;
      ctx.SetOutput(j, Tensor::Sequence(dtype, std::move(outs[j])));
    }
    return absl::OkStatus();
  }

 private:
  const Graph* body_ = nullptr;
};

// Optional(x) wraps x; without an input it is an empty optional of attribute 'type'.
class OptionalOp : public Kernel {
 public:
  explicit OptionalOp(const KernelInfo& info) {
    const Attribute* a = info.node.attr("type");
    if (a && a->kind == Attribute::Kind::kType)
      elem_ = a->type.kind == ValueKind::kTensor ? a->type.dtype : a->type.elem_type;
  }
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (x && x->is_optional()) return absl::InvalidArgumentError("the input is already an optional");
    ctx.SetOutput(0, x ? Tensor::Optional(*x) : Tensor::NoneOptional(elem_));
    return absl::OkStatus();
  }

 private:
  DataType elem_ = DataType::kUndefined;
};

// True when the input is an optional holding a value, or (opset 18) a tensor/sequence;
// false for an empty optional or an omitted input.
class OptionalHasElement : public Kernel {
 public:
  explicit OptionalHasElement(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    Tensor& out = ctx.AllocateOutput(0, DataType::kBool, {});
    out.data<bool>()[0] = x && x->has_value();
    return absl::OkStatus();
  }
};

class OptionalGetElement : public Kernel {
 public:
  explicit OptionalGetElement(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return absl::InvalidArgumentError("input 'input' is missing");
    if (x->is_optional() && !x->has_value())
      return absl::InvalidArgumentError("the optional input is empty");
    ctx.SetOutput(0, x->optional_value());
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterSequenceKernels(KernelRegistry& r) {
  // Element types are checked inside the kernels: sequence inputs have no static type here.
  r.Add("SequenceEmpty", 11, kMaxOpset, {}, Make<SequenceEmpty>());
  r.Add("SequenceConstruct", 11, kMaxOpset, {}, Make<SequenceConstruct>());
  r.Add("SequenceInsert", 11, kMaxOpset, {}, Make<SequenceInsert>());
  r.Add("SequenceAt", 11, kMaxOpset, {}, Make<SequenceAt>());
  r.Add("SequenceErase", 11, kMaxOpset, {}, Make<SequenceErase>());
  r.Add("SequenceLength", 11, kMaxOpset, {}, Make<SequenceLength>());
  r.Add("SplitToSequence", 11, kMaxOpset, {}, Make<SplitToSequence>());
  r.Add("ConcatFromSequence", 11, kMaxOpset, {}, Make<ConcatFromSequence>());
  r.Add("SequenceMap", 17, kMaxOpset, {}, Make<SequenceMap>());
  r.Add("Optional", 15, kMaxOpset, {}, Make<OptionalOp>());
  // Opset 18 widens both to accept plain tensors/sequences (and an omitted input for
  // OptionalHasElement); the kernels handle every case, so one range serves 15-17 and 18+.
  r.Add("OptionalHasElement", 15, kMaxOpset, {}, Make<OptionalHasElement>());
  r.Add("OptionalGetElement", 15, kMaxOpset, {}, Make<OptionalGetElement>());
}

}  // namespace tandem::cpu
