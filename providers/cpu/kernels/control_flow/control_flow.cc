// Control flow: If, Loop and Scan (the batched opset-8 form and the opset-9+ form with
// per-input/output axes and directions). Bodies run through KernelContext::RunSubgraph,
// which lets them read values of the enclosing graphs. Loop-carried values and branch
// outputs may be tensors, sequences or optionals: they are passed through untouched.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/resource_limits.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/control_flow/sequence_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

namespace {

absl::StatusOr<bool> ReadCondition(const Tensor& t, const std::string& what) {
  if (!t.is_tensor() || t.numel() != 1 || t.dtype() == DataType::kString)
    return absl::InvalidArgumentError(what + " must be a single bool value, got " +
                                      DataTypeName(t.dtype()) + DimsToString(t.dims()));
  if (t.dtype() == DataType::kBool) return t.data<bool>()[0];
  return t.ElementAsDouble(0) != 0;
}

const Graph* GraphAttr(const Node& node, const std::string& key) {
  const Attribute* a = node.attr(key);
  return a && a->kind == Attribute::Kind::kGraph ? a->g.get() : nullptr;
}

absl::Status Prefixed(const absl::Status& s, const std::string& prefix) {
  return absl::Status(s.code(), prefix + std::string(s.message()));
}

// A zero-filled tensor (strings: empty).
Tensor Zeros(Allocator& alloc, DataType dtype, const Dims& dims) {
  Tensor t = AllocateTensor(alloc, dtype, dims);
  if (dtype != DataType::kString && t.bytes()) std::memset(t.raw(), 0, t.bytes());
  return t;
}

// Dims of one scan-output element when no iteration ran: from the body's declared output
// (unknown dims count as 0), else a scalar.
Dims DeclaredDims(const Graph* body, size_t output) {
  Dims d;
  if (!body || output >= body->outputs.size()) return d;
  const ValueInfo& vi = body->outputs[output];
  if (!vi.shape.rank_known) return d;
  for (const Dim& dim : vi.shape.dims) d.push_back(dim.known() ? dim.value : 0);
  return d;
}
DataType DeclaredType(const Graph* body, size_t output) {
  if (!body || output >= body->outputs.size() || body->outputs[output].dtype == DataType::kUndefined)
    return DataType::kFloat;
  return body->outputs[output].dtype;
}

// Stacks per-iteration scan-output elements along a new axis `axis` (may be negative,
// relative to the stacked rank). With no elements, an empty tensor shaped from the body.
absl::StatusOr<Tensor> StackScanOutput(Allocator& alloc, const std::vector<Tensor>& elems,
                                       int64_t axis, const Graph* body, size_t body_output,
                                       const std::string& what) {
  Dims elem_dims = elems.empty() ? DeclaredDims(body, body_output) : elems[0].dims();
  auto ax = NormalizeAxis(axis, static_cast<int>(elem_dims.size()) + 1);
  if (!ax.ok()) return Prefixed(ax.status(), what + ": ");
  if (elems.empty()) {
    elem_dims.insert(elem_dims.begin() + *ax, 0);
    return AllocateTensor(alloc, DeclaredType(body, body_output), elem_dims);
  }
  for (size_t i = 0; i < elems.size(); ++i)
    if (!elems[i].is_tensor())
      return absl::InvalidArgumentError(absl::StrCat(what, ": iteration ", i, " gave a non-tensor value"));
  return seq::ConcatAxis(alloc, elems, *ax, /*new_axis=*/true, elems[0].dtype(),
                         what + " element of iteration");
}

// ---- If ----------------------------------------------------------------------------------

class If : public Kernel {
 public:
  explicit If(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* c = ctx.input(0);
    if (!c) return absl::InvalidArgumentError("input 'cond' is missing");
    auto cond = ReadCondition(*c, "input 'cond'");
    if (!cond.ok()) return cond.status();
    const char* branch = *cond ? "then_branch" : "else_branch";
    auto outs = ctx.RunSubgraph(branch, {});
    if (!outs.ok()) return Prefixed(outs.status(), std::string(branch) + ": ");
    if (static_cast<int>(outs->size()) != ctx.num_outputs())
      return absl::InvalidArgumentError(absl::StrCat(branch, " returns ", outs->size(),
                                                     " values but the node has ", ctx.num_outputs(),
                                                     " outputs"));
    for (int i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutput(i, std::move((*outs)[i]));
    return absl::OkStatus();
  }
};

// ---- Loop --------------------------------------------------------------------------------

class Loop : public Kernel {
 public:
  explicit Loop(const KernelInfo& info) : body_(GraphAttr(info.node, "body")) {}
  absl::Status Compute(KernelContext& ctx) override {
    int64_t max_trip = std::numeric_limits<int64_t>::max();
    if (const Tensor* m = ctx.input(0)) {
      auto v = seq::ReadScalarInt(*m, "input 'M'");
      if (!v.ok()) return v.status();
      max_trip = *v;
    }
    bool cond = true;
    if (const Tensor* c = ctx.input(1)) {
      auto v = ReadCondition(*c, "input 'cond'");
      if (!v.ok()) return v.status();
      cond = *v;
    }
    const int n_carried = std::max(0, ctx.num_inputs() - 2);
    const int n_scan = ctx.num_outputs() - n_carried;
    if (n_scan < 0)
      return absl::InvalidArgumentError(absl::StrCat("the node has ", n_carried,
                                                     " loop-carried inputs but only ",
                                                     ctx.num_outputs(), " outputs"));
    std::vector<Tensor> carried(n_carried);
    for (int i = 0; i < n_carried; ++i) {
      const Tensor* v = ctx.input(2 + i);
      if (!v) return absl::InvalidArgumentError(absl::StrCat("loop-carried input ", i, " is missing"));
      carried[i] = *v;
    }
    std::vector<std::vector<Tensor>> scans(n_scan);
    const int64_t max_iterations = GetResourceLimits().max_loop_iterations;
    for (int64_t it = 0; it < max_trip && cond; ++it) {
      if (it == max_iterations)
        return absl::ResourceExhaustedError(absl::StrCat(
            "still running after ", it, " iterations (trip count ",
            ctx.input(0) ? std::to_string(max_trip) : "none", "): over the limit of ", max_iterations,
            " (--max-loop-iterations)"));
      std::vector<Tensor> in;
      in.reserve(2 + n_carried);
      in.push_back(Tensor::Scalar<int64_t>(it));
      in.push_back(Tensor::Scalar<bool>(cond));
      for (const Tensor& v : carried) in.push_back(v);
      auto out = ctx.RunSubgraph("body", in);
      if (!out.ok()) return Prefixed(out.status(), absl::StrCat("body, iteration ", it, ": "));
      if (static_cast<int>(out->size()) != 1 + n_carried + n_scan)
        return absl::InvalidArgumentError(absl::StrCat("the body returns ", out->size(),
                                                       " values, expected 1 + ", n_carried, " + ",
                                                       n_scan));
      auto c = ReadCondition((*out)[0], "the body's condition output");
      if (!c.ok()) return c.status();
      cond = *c;
      for (int i = 0; i < n_carried; ++i) carried[i] = std::move((*out)[1 + i]);
      for (int k = 0; k < n_scan; ++k) scans[k].push_back(std::move((*out)[1 + n_carried + k]));
    }
    for (int i = 0; i < n_carried; ++i) ctx.SetOutput(i, std::move(carried[i]));
    for (int k = 0; k < n_scan; ++k) {
      if (!ctx.output_wanted(n_carried + k)) continue;
      auto t = StackScanOutput(ctx.allocator(), scans[k], 0, body_, 1 + n_carried + k,
                               absl::StrCat("scan output ", k));
      if (!t.ok()) return t.status();
      ctx.SetOutput(n_carried + k, std::move(*t));
    }
    return absl::OkStatus();
  }

 private:
  const Graph* body_;
};

// ---- Scan --------------------------------------------------------------------------------

class Scan : public Kernel {
 public:
  explicit Scan(const KernelInfo& info)
      : body_(GraphAttr(info.node, "body")),
        batched_(info.opset < 9),
        num_scan_inputs_(info.node.attr_int("num_scan_inputs", -1)),
        in_axes_(info.node.attr_ints("scan_input_axes")),
        in_dirs_(info.node.attr_ints(info.opset < 9 ? "directions" : "scan_input_directions")),
        out_axes_(info.node.attr_ints("scan_output_axes")),
        out_dirs_(info.node.attr_ints("scan_output_directions")) {}

  absl::Status Compute(KernelContext& ctx) override {
    const int first = batched_ ? 1 : 0;  // opset 8: input 0 is sequence_lens
    const int m = static_cast<int>(num_scan_inputs_);
    const int n_state = ctx.num_inputs() - first - m;
    if (m < 1 || n_state < 0)
      return absl::InvalidArgumentError(absl::StrCat("num_scan_inputs is ", num_scan_inputs_,
                                                     " but the node has ", ctx.num_inputs() - first,
                                                     " state and scan inputs"));
    const int k = ctx.num_outputs() - n_state;
    if (k < 0)
      return absl::InvalidArgumentError(absl::StrCat("the node has ", n_state,
                                                     " state variables but only ",
                                                     ctx.num_outputs(), " outputs"));
    if (!in_dirs_.empty() && static_cast<int>(in_dirs_.size()) != m)
      return absl::InvalidArgumentError("the scan input directions need one entry per scan input");
    if (!in_axes_.empty() && static_cast<int>(in_axes_.size()) != m)
      return absl::InvalidArgumentError("scan_input_axes needs one entry per scan input");
    if (!out_axes_.empty() && static_cast<int>(out_axes_.size()) != k)
      return absl::InvalidArgumentError("scan_output_axes needs one entry per scan output");
    if (!out_dirs_.empty() && static_cast<int>(out_dirs_.size()) != k)
      return absl::InvalidArgumentError("scan_output_directions needs one entry per scan output");
    std::vector<Tensor> states, xs;
    for (int i = 0; i < n_state + m; ++i) {
      const Tensor* t = ctx.input(first + i);
      if (!t) return absl::InvalidArgumentError(absl::StrCat("input ", first + i, " is missing"));
      (i < n_state ? states : xs).push_back(*t);
    }
    for (int j = 0; j < m; ++j)
      if (!xs[j].is_tensor())
        return absl::InvalidArgumentError(absl::StrCat("scan input ", j, " is not a tensor"));
    return batched_ ? ComputeBatched(ctx, states, xs, k) : ComputeUnbatched(ctx, states, xs, k);
  }

 private:
  bool Reverse(const std::vector<int64_t>& dirs, int i) const {
    return !dirs.empty() && dirs[i] != 0;
  }

  // Runs the body over `len` steps; element t of scan input j is taken from xs[j] along
  // axes[j]. Updates `states`, appends scan-output elements to `scans`.
  absl::Status RunSteps(KernelContext& ctx, std::vector<Tensor>& states, const std::vector<Tensor>& xs,
                        const std::vector<int>& axes, int64_t len, int k,
                        std::vector<std::vector<Tensor>>& scans) {
    const int n_state = static_cast<int>(states.size());
    for (int64_t t = 0; t < len; ++t) {
      std::vector<Tensor> in = states;
      for (size_t j = 0; j < xs.size(); ++j) {
        int64_t idx = Reverse(in_dirs_, static_cast<int>(j)) ? len - 1 - t : t;
        in.push_back(seq::SliceAxis(ctx.allocator(), xs[j], axes[j], idx, 1, /*keep_axis=*/false));
      }
      auto out = ctx.RunSubgraph("body", in);
      if (!out.ok()) return Prefixed(out.status(), absl::StrCat("body, iteration ", t, ": "));
      if (static_cast<int>(out->size()) != n_state + k)
        return absl::InvalidArgumentError(absl::StrCat("the body returns ", out->size(),
                                                       " values, expected ", n_state + k));
      for (int i = 0; i < n_state; ++i) states[i] = std::move((*out)[i]);
      for (int i = 0; i < k; ++i) scans[i].push_back(std::move((*out)[n_state + i]));
    }
    return absl::OkStatus();
  }

  absl::Status ComputeUnbatched(KernelContext& ctx, std::vector<Tensor> states,
                                const std::vector<Tensor>& xs, int k) {
    const int m = static_cast<int>(xs.size());
    std::vector<int> axes(m);
    int64_t len = -1;
    for (int j = 0; j < m; ++j) {
      auto ax = NormalizeAxis(in_axes_.empty() ? 0 : in_axes_[j], xs[j].rank());
      if (!ax.ok()) return Prefixed(ax.status(), absl::StrCat("scan input ", j, ": "));
      axes[j] = *ax;
      int64_t n = xs[j].dims()[*ax];
      if (len >= 0 && n != len)
        return absl::InvalidArgumentError(absl::StrCat("scan input ", j, " has ", n,
                                                       " steps along its scan axis, scan input 0 has ", len));
      len = n;
    }
    std::vector<std::vector<Tensor>> scans(k);
    auto s = RunSteps(ctx, states, xs, axes, len, k, scans);
    if (!s.ok()) return s;
    const int n_state = static_cast<int>(states.size());
    for (int i = 0; i < n_state; ++i) ctx.SetOutput(i, std::move(states[i]));
    for (int i = 0; i < k; ++i) {
      if (Reverse(out_dirs_, i)) std::reverse(scans[i].begin(), scans[i].end());
      auto t = StackScanOutput(ctx.allocator(), scans[i], out_axes_.empty() ? 0 : out_axes_[i],
                               body_, n_state + i, absl::StrCat("scan output ", i));
      if (!t.ok()) return t.status();
      ctx.SetOutput(n_state + i, std::move(*t));
    }
    return absl::OkStatus();
  }

  // Opset 8: axis 0 is the batch, axis 1 the sequence; sequence_lens limits each batch's
  // steps and scan outputs are zero-padded to the longest sequence.
  absl::Status ComputeBatched(KernelContext& ctx, const std::vector<Tensor>& states,
                              const std::vector<Tensor>& xs, int k) {
    const int m = static_cast<int>(xs.size());
    const int n_state = static_cast<int>(states.size());
    for (int j = 0; j < m; ++j)
      if (xs[j].rank() < 2 || xs[j].dims()[0] != xs[0].dims()[0] || xs[j].dims()[1] != xs[0].dims()[1])
        return absl::InvalidArgumentError(absl::StrCat(
            "scan input ", j, " has shape ", DimsToString(xs[j].dims()),
            "; scan inputs need rank >= 2 with equal batch (axis 0) and sequence (axis 1) sizes"));
    const int64_t batch = xs[0].dims()[0], max_len = xs[0].dims()[1];
    for (int i = 0; i < n_state; ++i)
      if (!states[i].is_tensor() || states[i].rank() < 1 || states[i].dims()[0] != batch)
        return absl::InvalidArgumentError(absl::StrCat("state variable ", i, " has shape ",
                                                       DimsToString(states[i].dims()),
                                                       ", expected batch size ", batch, " on axis 0"));
    std::vector<int64_t> lens(batch, max_len);
    if (const Tensor* sl = ctx.input(0)) {
      if (sl->dtype() != DataType::kInt64 || sl->numel() != batch)
        return absl::InvalidArgumentError(absl::StrCat("sequence_lens must be int64 with ", batch,
                                                       " values, got ", DataTypeName(sl->dtype()),
                                                       DimsToString(sl->dims())));
      for (int64_t b = 0; b < batch; ++b) {
        lens[b] = sl->data<int64_t>()[b];
        if (lens[b] < 0 || lens[b] > max_len)
          return absl::InvalidArgumentError(absl::StrCat("sequence_lens[", b, "] = ", lens[b],
                                                         " is outside [0, ", max_len, "]"));
      }
    }
    Allocator& alloc = ctx.allocator();
    std::vector<std::vector<Tensor>> final_states(n_state);          // [state][batch]
    std::vector<std::vector<std::vector<Tensor>>> scans(batch);      // [batch][output][step]
    std::vector<int> axes(m, 0);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Tensor> st, xb;
      for (const Tensor& s : states) st.push_back(seq::SliceAxis(alloc, s, 0, b, 1, false));
      for (const Tensor& x : xs) xb.push_back(seq::SliceAxis(alloc, x, 0, b, 1, false));
      scans[b].resize(k);
      auto s = RunSteps(ctx, st, xb, axes, lens[b], k, scans[b]);
      if (!s.ok()) return Prefixed(s, absl::StrCat("batch ", b, ": "));
      for (int i = 0; i < n_state; ++i) final_states[i].push_back(std::move(st[i]));
    }
    for (int i = 0; i < n_state; ++i) {
      if (batch == 0) {
        ctx.SetOutput(i, AllocateTensor(alloc, states[i].dtype(), states[i].dims()));
        continue;
      }
      auto t = seq::ConcatAxis(alloc, final_states[i], 0, true, final_states[i][0].dtype(),
                               absl::StrCat("final state ", i, " of batch"));
      if (!t.ok()) return t.status();
      ctx.SetOutput(i, std::move(*t));
    }
    for (int i = 0; i < k; ++i) {
      // Element shape and type: from any step that ran, else from the body's declaration.
      const Tensor* sample = nullptr;
      for (int64_t b = 0; b < batch && !sample; ++b)
        if (!scans[b][i].empty()) sample = &scans[b][i][0];
      Dims elem = sample ? sample->dims() : DeclaredDims(body_, n_state + i);
      DataType dtype = sample ? sample->dtype() : DeclaredType(body_, n_state + i);
      Dims out_dims = elem;
      out_dims.insert(out_dims.begin(), {batch, max_len});
      Tensor out = Zeros(alloc, dtype, out_dims);
      const int64_t per = NumElements(elem);
      for (int64_t b = 0; b < batch; ++b)
        for (size_t t = 0; t < scans[b][i].size(); ++t) {
          const Tensor& e = scans[b][i][t];
          if (!e.is_tensor() || e.dtype() != dtype || e.dims() != elem)
            return absl::InvalidArgumentError(absl::StrCat(
                "scan output ", i, " element of batch ", b, " step ", t, " is ", DataTypeName(e.dtype()),
                DimsToString(e.dims()), ", expected ", DataTypeName(dtype), DimsToString(elem)));
          seq::CopyElements(e, 0, out, (b * max_len + static_cast<int64_t>(t)) * per, per);
        }
      ctx.SetOutput(n_state + i, std::move(out));
    }
    return absl::OkStatus();
  }

  const Graph* body_;
  bool batched_;
  int64_t num_scan_inputs_;
  std::vector<int64_t> in_axes_, in_dirs_, out_axes_, out_dirs_;
};

}  // namespace

void RegisterControlFlowKernels(KernelRegistry& r) {
  r.Add("If", 1, kMaxOpset, {DataType::kBool}, Make<If>());
  r.Add("Loop", 1, kMaxOpset, {}, Make<Loop>());
  r.Add("Scan", 8, 8, {}, Make<Scan>());
  r.Add("Scan", 9, kMaxOpset, {}, Make<Scan>());
}

}  // namespace tandem::cpu
