// Einsum (opset 12+): parses the equation (explicit or implicit output, repeated
// labels / diagonals, ellipsis with broadcasting) and runs a reference contraction:
// every output element sums the product of the operands over the contracted labels.
#include <algorithm>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

constexpr int kEllipsis = -1;

// One term of the equation: a list of labels (letters) with kEllipsis for "...".
using Term = std::vector<int>;

absl::StatusOr<Term> ParseTerm(const std::string& s) {
  Term t;
  bool seen_ellipsis = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (s.compare(i, 3, "...") != 0 || seen_ellipsis)
        return absl::InvalidArgumentError("malformed ellipsis in equation term '" + s + "'");
      seen_ellipsis = true;
      t.push_back(kEllipsis);
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      t.push_back(c);
    } else {
      return absl::InvalidArgumentError(std::string("invalid character '") + c +
                                        "' in equation");
    }
  }
  return t;
}

class Einsum : public Kernel {
 public:
  explicit Einsum(const KernelInfo& info) {
    for (char c : info.node.attr_string("equation", ""))
      if (c != ' ') equation_ += c;
  }

  absl::Status Compute(KernelContext& ctx) override {
    const int n_in = ctx.num_inputs();
    std::vector<const Tensor*> ins;
    for (int i = 0; i < n_in; ++i) {
      if (!ctx.input(i)) return absl::InvalidArgumentError("missing input " + std::to_string(i));
      ins.push_back(ctx.input(i));
      if (ins[i]->dtype() != ins[0]->dtype())
        return absl::InvalidArgumentError("all inputs must have the same element type");
    }
    // Split "lhs->rhs".
    std::string lhs = equation_, rhs;
    size_t arrow = equation_.find("->");
    const bool explicit_out = arrow != std::string::npos;
    if (explicit_out) {
      lhs = equation_.substr(0, arrow);
      rhs = equation_.substr(arrow + 2);
    }
    std::vector<Term> terms;
    size_t pos = 0;
    while (true) {
      size_t comma = lhs.find(',', pos);
      auto t = ParseTerm(lhs.substr(pos, comma == std::string::npos ? std::string::npos
                                                                     : comma - pos));
      if (!t.ok()) return t.status();
      terms.push_back(*t);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    if (static_cast<int>(terms.size()) != n_in)
      return absl::InvalidArgumentError("equation '" + equation_ + "' has " +
                                        std::to_string(terms.size()) + " operands but " +
                                        std::to_string(n_in) + " inputs are given");
    // Ellipsis rank and label sizes.
    int ell_rank = 0;
    std::map<int, int64_t> label_size;
    std::map<int, int> label_count;
    for (int i = 0; i < n_in; ++i) {
      int letters = 0;
      bool has_ell = false;
      for (int l : terms[i]) {
        if (l == kEllipsis) has_ell = true;
        else ++letters;
      }
      int r = ins[i]->rank();
      if (has_ell ? r < letters : r != letters)
        return absl::InvalidArgumentError("operand " + std::to_string(i) + " has rank " +
                                          std::to_string(r) + " but its term has " +
                                          std::to_string(letters) + " labels");
      if (has_ell) ell_rank = std::max(ell_rank, r - letters);
    }
    Dims ell_dims(ell_rank, 1);
    // Per operand: the global-dim id of each of its axes. Globals: ellipsis dims are
    // 0..ell_rank-1, labels follow.
    std::map<int, int> label_id;
    std::vector<std::vector<int>> axis_gid(n_in);
    std::vector<int> labels_in_order;
    for (int i = 0; i < n_in; ++i) {
      const Tensor& t = *ins[i];
      int letters = 0;
      for (int l : terms[i]) letters += l != kEllipsis;
      int ell_here = t.rank() - letters;
      int ax = 0;
      for (int l : terms[i]) {
        if (l == kEllipsis) {
          for (int e = 0; e < ell_here; ++e, ++ax) {
            int g = ell_rank - ell_here + e;
            int64_t d = t.dim(ax);
            if (d != 1) {
              if (ell_dims[g] != 1 && ell_dims[g] != d)
                return absl::InvalidArgumentError("ellipsis dimensions of the inputs cannot be "
                                                  "broadcast together");
              ell_dims[g] = d;
            }
            axis_gid[i].push_back(g);
          }
        } else {
          int64_t d = t.dim(ax++);
          auto it = label_size.find(l);
          if (it == label_size.end()) {
            label_size[l] = d;
            labels_in_order.push_back(l);
          } else if (it->second != d) {
            if (it->second == 1) it->second = d;
            else if (d != 1)
              return absl::InvalidArgumentError(std::string("label '") + char(l) +
                                                "' has inconsistent sizes " +
                                                std::to_string(it->second) + " and " +
                                                std::to_string(d));
          }
          ++label_count[l];
          axis_gid[i].push_back(-1000 - l);  // resolved below
        }
      }
    }
    // Output term.
    Term out_term;
    if (explicit_out) {
      auto t = ParseTerm(rhs);
      if (!t.ok()) return t.status();
      out_term = *t;
      for (size_t a = 0; a < out_term.size(); ++a) {
        int l = out_term[a];
        if (l != kEllipsis && !label_size.count(l))
          return absl::InvalidArgumentError(std::string("output label '") + char(l) +
                                            "' does not appear in the inputs");
        for (size_t b = a + 1; b < out_term.size(); ++b)
          if (out_term[b] == l)
            return absl::InvalidArgumentError("output term repeats a label");
      }
    } else {
      if (ell_rank > 0) out_term.push_back(kEllipsis);
      std::vector<int> once;
      for (auto& [l, c] : label_count)
        if (c == 1) once.push_back(l);
      std::sort(once.begin(), once.end());
      out_term.insert(out_term.end(), once.begin(), once.end());
    }
    // Global dims: output dims first, then contracted ones.
    Dims gdims;
    std::vector<int> ell_gid(ell_rank, -1);
    Dims out_dims;
    bool out_has_ell = false;
    for (int l : out_term) {
      if (l == kEllipsis) {
        out_has_ell = true;
        for (int e = 0; e < ell_rank; ++e) {
          ell_gid[e] = static_cast<int>(gdims.size());
          gdims.push_back(ell_dims[e]);
        }
      } else {
        label_id[l] = static_cast<int>(gdims.size());
        gdims.push_back(label_size[l]);
      }
    }
    out_dims = gdims;
    const int n_out = static_cast<int>(gdims.size());
    if (!out_has_ell)  // ellipsis dims absent from the output are summed over
      for (int e = 0; e < ell_rank; ++e) {
        ell_gid[e] = static_cast<int>(gdims.size());
        gdims.push_back(ell_dims[e]);
      }
    for (int l : labels_in_order)
      if (!label_id.count(l)) {
        label_id[l] = static_cast<int>(gdims.size());
        gdims.push_back(label_size[l]);
      }
    const int ng = static_cast<int>(gdims.size());
    // Operand strides over global dims (repeated labels add up: diagonals).
    std::vector<std::vector<int64_t>> gstride(n_in, std::vector<int64_t>(ng, 0));
    for (int i = 0; i < n_in; ++i) {
      std::vector<int64_t> st = Strides(ins[i]->dims());
      for (int ax = 0; ax < ins[i]->rank(); ++ax) {
        int g = axis_gid[i][ax];
        g = g <= -1000 ? label_id[-1000 - g] : ell_gid[g];
        if (ins[i]->dim(ax) != 1) gstride[i][g] += st[ax];
      }
    }
    const DataType dt = ins[0]->dtype();
    Tensor& y = ctx.AllocateOutput(0, dt, out_dims);
    const int64_t out_n = y.numel();
    const int64_t sum_n = DimProduct(gdims, n_out, ng);
    bool ok = VisitNumericType(dt, [&](auto tag) {
      using T = decltype(tag);
      using Acc = std::conditional_t<
          std::is_same_v<T, bool>, bool,
          std::conditional_t<std::is_integral_v<T>,
                             std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>,
                             double>>;
      std::vector<const T*> src(n_in);
      for (int i = 0; i < n_in; ++i) src[i] = ins[i]->data<T>();
      T* out = y.data<T>();
      std::vector<int64_t> idx(ng, 0), off(n_in, 0);
      // Odometer over [begin, end) global dims updating operand offsets.
      auto step = [&](int begin, int end) {
        for (int d = end - 1; d >= begin; --d) {
          ++idx[d];
          for (int i = 0; i < n_in; ++i) off[i] += gstride[i][d];
          if (idx[d] < gdims[d]) return;
          for (int i = 0; i < n_in; ++i) off[i] -= gstride[i][d] * idx[d];
          idx[d] = 0;
        }
      };
      for (int64_t o = 0; o < out_n; ++o) {
        Acc acc = Acc(0);
        for (int64_t s = 0; s < sum_n; ++s) {
          Acc p = Acc(1);
          for (int i = 0; i < n_in; ++i) {
            if constexpr (std::is_same_v<Acc, bool>) p = p && src[i][off[i]];
            else p = static_cast<Acc>(p * static_cast<Acc>(src[i][off[i]]));
          }
          if constexpr (std::is_same_v<Acc, bool>) acc = acc || p;
          else acc = static_cast<Acc>(acc + p);
          step(n_out, ng);
        }
        out[o] = static_cast<T>(acc);
        step(0, n_out);
      }
    });
    if (!ok) return absl::InvalidArgumentError("unsupported element type");
    return absl::OkStatus();
  }

 private:
  std::string equation_;
};

}  // namespace

void RegisterEinsumKernels(KernelRegistry& r) {
  r.Add("Einsum", 12, kMaxOpset, types::kNumeric, Make<Einsum>());
}

}  // namespace tandem::cpu
