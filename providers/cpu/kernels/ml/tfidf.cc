// TfIdfVectorizer (opset 9): counts pool n-grams (with skips) in each row of an int32,
// int64 or string input and writes TF, IDF or TF-IDF values at the n-grams' output
// coordinates.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

namespace {

class TfIdfVectorizer : public Kernel {
 public:
  explicit TfIdfVectorizer(const KernelInfo& info) {
    status_ = Init(info.node);
  }

  absl::Status Compute(KernelContext& ctx) override {
    if (!status_.ok()) return status_;
    const Tensor& x = *ctx.input(0);
    const bool is_string = x.dtype() == DataType::kString;
    if (is_string != strings_)
      return absl::InvalidArgumentError(
          strings_ ? "pool_strings is set, so the input must be a string tensor"
                   : "pool_int64s is set, so the input must be an int32 or int64 tensor");
    if (x.rank() != 1 && x.rank() != 2)
      return absl::InvalidArgumentError("input must be 1-D or 2-D, got " +
                                        DimsToString(x.dims()));
    const int64_t rows = x.rank() == 2 ? x.dim(0) : 1, cols = x.dim(-1);
    Dims out_dims = x.rank() == 2 ? Dims{rows, out_size_} : Dims{out_size_};
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, out_dims);
    float* py = y.data<float>();
    std::fill(py, py + y.numel(), 0.f);
    std::vector<int64_t> counts(indexes_.size());
    for (int64_t r = 0; r < rows; ++r) {
      std::fill(counts.begin(), counts.end(), 0);
      if (strings_) {
        const std::string* row = x.data<std::string>() + r * cols;
        Count(row, cols, str_pool_, counts);
      } else {
        std::vector<int64_t> row(static_cast<size_t>(cols));
        for (int64_t c = 0; c < cols; ++c) row[c] = x.ElementAsInt64(r * cols + c);
        Count(row.data(), cols, int_pool_, counts);
      }
      float* out = py + r * out_size_;
      for (size_t i = 0; i < counts.size(); ++i) {
        if (counts[i] == 0) continue;
        const float w = weights_.empty() ? 1.f : weights_[i];
        float v = static_cast<float>(counts[i]);
        if (mode_ == "IDF") v = w;
        else if (mode_ == "TFIDF") v *= w;
        out[indexes_[i]] = v;
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Init(const Node& n) {
    mode_ = n.attr_string("mode", "");
    if (mode_ != "TF" && mode_ != "IDF" && mode_ != "TFIDF")
      return absl::InvalidArgumentError("mode must be TF, IDF or TFIDF, got '" + mode_ + "'");
    min_n_ = n.attr_int("min_gram_length", 0);
    max_n_ = n.attr_int("max_gram_length", 0);
    max_skip_ = n.attr_int("max_skip_count", 0);
    if (min_n_ < 1 || max_n_ < min_n_)
      return absl::InvalidArgumentError(
          "need 1 <= min_gram_length <= max_gram_length, got " + std::to_string(min_n_) +
          " and " + std::to_string(max_n_));
    if (max_skip_ < 0) return absl::InvalidArgumentError("max_skip_count must be >= 0");
    const std::vector<int64_t> starts = n.attr_ints("ngram_counts");
    indexes_ = n.attr_ints("ngram_indexes");
    weights_ = n.attr_floats("weights");
    const bool has_int = n.has_attr("pool_int64s"), has_str = n.has_attr("pool_strings");
    if (has_int == has_str)
      return absl::InvalidArgumentError("exactly one of pool_int64s and pool_strings must be set");
    strings_ = has_str;
    const std::vector<int64_t> ints = n.attr_ints("pool_int64s");
    const std::vector<std::string> strs = n.attr_strings("pool_strings");
    const int64_t pool_size = static_cast<int64_t>(strings_ ? strs.size() : ints.size());
    // ngram_counts[k] is where the (k+1)-grams start in the pool.
    int64_t id = 0;
    for (size_t k = 0; k < starts.size(); ++k) {
      const int64_t len = static_cast<int64_t>(k) + 1;
      const int64_t b = starts[k], e = k + 1 < starts.size() ? starts[k + 1] : pool_size;
      if (b < 0 || e < b || e > pool_size || (e - b) % len != 0)
        return absl::InvalidArgumentError("ngram_counts entry " + std::to_string(k) +
                                          " does not describe whole " + std::to_string(len) +
                                          "-grams of the pool");
      for (int64_t p = b; p < e; p += len, ++id) {
        if (strings_)
          str_pool_[std::vector<std::string>(strs.begin() + p, strs.begin() + p + len)] = id;
        else
          int_pool_[std::vector<int64_t>(ints.begin() + p, ints.begin() + p + len)] = id;
      }
    }
    if (starts.empty() && pool_size != 0)
      return absl::InvalidArgumentError("ngram_counts is empty but the pool is not");
    if (static_cast<int64_t>(indexes_.size()) != id)
      return absl::InvalidArgumentError("ngram_indexes has " + std::to_string(indexes_.size()) +
                                        " entries but the pool holds " + std::to_string(id) +
                                        " n-grams");
    if (!weights_.empty() && weights_.size() != indexes_.size())
      return absl::InvalidArgumentError("weights must have as many entries as ngram_indexes");
    out_size_ = 0;
    for (int64_t i : indexes_) {
      if (i < 0) return absl::InvalidArgumentError("ngram_indexes must be non-negative");
      out_size_ = std::max(out_size_, i + 1);
    }
    return absl::OkStatus();
  }

  // Counts pool n-grams in one row: every start position, gram length in
  // [min_n, max_n] and gap skip in [0, max_skip] (unigrams once, not once per skip).
  template <typename K>
  void Count(const K* row, int64_t cols, const std::map<std::vector<K>, int64_t>& pool,
             std::vector<int64_t>& counts) const {
    if (pool.empty()) return;
    std::vector<K> key;
    const int64_t max_len = std::min(max_n_, cols), max_skip = std::min(max_skip_, cols);
    for (int64_t start = 0; start < cols; ++start)
      for (int64_t len = min_n_; len <= max_len; ++len)
        for (int64_t skip = 0; skip <= (len == 1 ? 0 : max_skip); ++skip) {
          const int64_t stride = skip + 1;
          if (start + (len - 1) * stride >= cols) break;
          key.clear();
          for (int64_t t = 0; t < len; ++t) key.push_back(row[start + t * stride]);
          auto it = pool.find(key);
          if (it != pool.end()) ++counts[it->second];
        }
  }

  absl::Status status_;
  std::string mode_;
  int64_t min_n_ = 0, max_n_ = 0, max_skip_ = 0, out_size_ = 0;
  bool strings_ = false;
  std::vector<int64_t> indexes_;
  std::vector<float> weights_;
  std::map<std::vector<int64_t>, int64_t> int_pool_;
  std::map<std::vector<std::string>, int64_t> str_pool_;
};

}  // namespace

void RegisterTfIdfKernels(KernelRegistry& r) {
  r.Add("TfIdfVectorizer", 9, kMaxOpset, {DataType::kInt32, DataType::kInt64, DataType::kString},
        Make<TfIdfVectorizer>());
}

}  // namespace tandem::cpu
